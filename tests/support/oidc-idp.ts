/**
 * A real OpenID Connect provider for the tests (oidc-provider from npm) on a free loopback port:
 * one confidential client (`portal`, client_secret_basic, PKCE required), an RS256 signing key of
 * its own, and test accounts that sign in through its login form (one HTML form that logs in and
 * grants the requested scopes at once).
 *
 * `signIn` drives that form without a browser (a small cookie jar) and answers the address the
 * provider sends the browser back to. `tamperNextIdToken` rewrites the claims of the next ID token
 * the token endpoint answers and signs it again with the provider's own key: the signature stays
 * valid, so the relying party's claim checks (audience, nonce, expiry) are what must refuse it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Adapter, type AdapterPayload, type Configuration } from 'oidc-provider';
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

export const OIDC_CLIENT_ID = 'portal';
export const OIDC_CLIENT_SECRET = 'portal-client-secret-0123456789';

export interface OidcAccount {
  sub: string;
  username: string;
  password: string;
  name: string;
  email: string;
}

/** The test accounts of the provider. */
export const OIDC_ACCOUNTS: readonly OidcAccount[] = [
  {
    sub: 'f3b2c1d0-0001',
    username: 'nora.vidal',
    password: 'nora-secret-1',
    name: 'Nora Vidal',
    email: 'nora.vidal@school.test',
  },
  {
    sub: 'f3b2c1d0-0002',
    username: 'pau.serra',
    password: 'pau-secret-2',
    name: 'Pau Serra',
    email: 'pau.serra@elsewhere.test',
  },
];

export interface OidcIdp {
  issuer: string;
  /** Signs an account in at the provider: answers where it sends the browser back. */
  signIn(authorizationUrl: string, username: string, password: string): Promise<string>;
  /** The next ID token the token endpoint answers gets these claims changed. */
  tamperNextIdToken(change: (claims: JWTPayload) => JWTPayload): void;
  stop(): Promise<void>;
}

/** The provider's state in memory, for the life of the test's provider. */
function memoryAdapter(): new (name: string) => Adapter {
  const store = new Map<string, AdapterPayload>();
  return class MemoryAdapter implements Adapter {
    constructor(private readonly name: string) {}
    private key(id: string) {
      return `${this.name}:${id}`;
    }
    upsert(id: string, payload: AdapterPayload) {
      store.set(this.key(id), payload);
      return Promise.resolve();
    }
    find(id: string) {
      return Promise.resolve(store.get(this.key(id)));
    }
    findByUserCode(userCode: string) {
      return Promise.resolve([...store.values()].find((p) => p.userCode === userCode));
    }
    findByUid(uid: string) {
      return Promise.resolve([...store.values()].find((p) => p.uid === uid));
    }
    consume(id: string) {
      const payload = store.get(this.key(id));
      if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      return Promise.resolve();
    }
    destroy(id: string) {
      store.delete(this.key(id));
      return Promise.resolve();
    }
    revokeByGrantId(grantId: string) {
      for (const [key, payload] of store) if (payload.grantId === grantId) store.delete(key);
      return Promise.resolve();
    }
  };
}

const page = (uid: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head>
<body><main><h1>Test identity provider</h1>
<form method="post" action="/interaction/${uid}">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form></main></body></html>`;

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Starts the provider; `redirectUris` are the client's callback addresses (the login page of
 * their origin is where a logout through the provider returns).
 */
export async function startOidcIdp(redirectUris: string[]): Promise<OidcIdp> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };
  let tamper: ((claims: JWTPayload) => JWTPayload) | undefined;

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const configuration: Configuration = {
    adapter: memoryAdapter(),
    clients: [
      {
        client_id: OIDC_CLIENT_ID,
        client_secret: OIDC_CLIENT_SECRET,
        redirect_uris: redirectUris,
        // the portal's login page, where its logout through this provider comes back
        post_logout_redirect_uris: redirectUris.map((uri) => new URL('/login', uri).toString()),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [jwk] },
    cookies: { keys: ['test-idp-cookie-key'] },
    claims: {
      openid: ['sub'],
      profile: ['name', 'preferred_username'],
      email: ['email', 'email_verified'],
    },
    // the profile and email claims ride in the ID token too (userinfo stays available)
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: {
      AuthorizationCode: 60,
      Interaction: 600,
      Grant: 600,
      Session: 600,
      AccessToken: 600,
      IdToken: 600,
    },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, id) => {
      const account = OIDC_ACCOUNTS.find((a) => a.sub === id);
      if (!account) return undefined;
      return {
        accountId: id,
        claims: () => ({
          sub: id,
          preferred_username: account.username,
          name: account.name,
          email: account.email,
          email_verified: true,
        }),
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  provider.on('server_error', (_ctx, error) => console.error('test identity provider', error));

  // The token endpoint's answer, with the next ID token changed when a test asked for it.
  provider.use(async (ctx, next) => {
    await next();
    const change = tamper;
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (ctx.path !== '/token' || !change || typeof body?.id_token !== 'string') return;
    tamper = undefined;
    const claims = change(decodeJwt(body.id_token));
    body.id_token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid })
      .sign(privateKey);
  });

  const callback = provider.callback();
  server.on('request', (req, res) => {
    const match = /^\/interaction\/([\w-]+)$/.exec(req.url ?? '');
    if (!match?.[1]) {
      callback(req, res);
      return;
    }
    const uid = match[1];
    void (async () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(uid));
        return;
      }
      const form = await formOf(req);
      const account = OIDC_ACCOUNTS.find((a) => a.username === form.get('username'));
      if (!account || account.password !== form.get('password')) {
        res.writeHead(401, { 'content-type': 'text/html; charset=utf-8' }).end(page(uid));
        return;
      }
      const details = await provider.interactionDetails(req, res);
      const grant = new provider.Grant({
        accountId: account.sub,
        clientId: String(details.params.client_id),
      });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: account.sub }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    })().catch((error: unknown) => {
      console.error('test identity provider', error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  const signIn = async (authorizationUrl: string, username: string, password: string) => {
    const jar = new Map<string, string>();
    const send = async (url: string, init: RequestInit = {}) => {
      const res = await fetch(new URL(url, issuer), {
        ...init,
        redirect: 'manual',
        headers: {
          ...(init.headers as Record<string, string>),
          cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '),
        },
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const at = pair.indexOf('=');
        jar.set(pair.slice(0, at), pair.slice(at + 1));
      }
      const location = res.headers.get('location');
      if (!location) throw new Error(`${url}: ${res.status} without a location`);
      return new URL(location, issuer).toString();
    };
    const form = await send(authorizationUrl);
    const resume = await send(form, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password }).toString(),
    });
    return send(resume);
  };

  return {
    issuer,
    signIn,
    tamperNextIdToken: (change) => {
      tamper = change;
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
