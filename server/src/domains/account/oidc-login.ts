/**
 * OpenID Connect sign-in through a category's provider (platform/auth/oidc.ts speaks the protocol).
 *
 * The start stores a sign-in under way (oidc_logins: a single-use state, the nonce and the PKCE
 * verifier, the category and the page to return to, for ten minutes), binds it to the browser with
 * an HttpOnly cookie holding the state, and sends the browser to the issuer. The callback takes
 * the sign-in out of the table (so a state works once, whatever happens next), checks the cookie,
 * exchanges the code and verifies the ID token. The person is then the account of provider `oidc`
 * whose uid is the token's `sub`, in the provider's category or the one its category claim
 * guesses (./sso-accounts.ts: registration, a code, the choice among several categories). A
 * category whose provider is no longer enabled, or an address outside the provider's allowed
 * domains, is `user_disallowed`. Every refusal leaves no session. Starts are counted per client
 * address in PostgreSQL (OIDC_STARTS, shared by every node): past the limit a start is 429.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { eq, lt } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { countAttempt, OIDC_STARTS } from '../../platform/auth/attempt-windows.ts';
import {
  authorizationUrl,
  discover,
  exchangeCode,
  newSecrets,
  OidcRejectedError,
  OidcUnavailableError,
  userInfo,
  verifyIdToken,
  type OidcClient,
} from '../../platform/auth/oidc.ts';
import { oidcLogins } from '../../platform/db/schema.ts';
import { enabledOidcProvider, oidcSiblings, type OidcIssuerConfig } from '../directory/index.ts';
import { mappingOf, ssoSignIn, textsOf, type SsoMapping, type SsoOutcome } from './sso-accounts.ts';
import { linkBase } from './links.ts';
import { rememberIdToken } from './oidc-logout.ts';

/** The provider name of the accounts an OpenID Connect provider registers. */
export const OIDC_PROVIDER = 'oidc';

/** The cookie that binds a sign-in under way to the browser that started it. */
export const OIDC_STATE_COOKIE = 'oidc_state';
export const CALLBACK_PATH = '/authentication/callback';
const SIGN_IN_SECONDS = 600;

const clientOf = (config: OidcIssuerConfig): OidcClient => ({
  issuer: config.issuer,
  clientId: config.clientId,
  clientSecret: config.clientSecret,
  scopes: config.scopes,
});

/** A page of the portal to return to: anything with a scheme or a host becomes `/`. */
export function safeRedirect(redirect: string | undefined): string {
  if (!redirect || !redirect.startsWith('/') || redirect.startsWith('//')) return '/';
  if (/[\\\s]/.test(redirect)) return '/';
  return redirect;
}

const stateInvalid = () =>
  new ApiError('invalid_token', 'This sign-in expired or was already used', 'oidc_state_invalid');
const disallowed = () => new ApiError('user_disallowed', undefined, 'user_disallowed');

/** The protocol's failures as our errors: 503 when the issuer cannot answer, else 401. */
async function guarded<T>(request: FastifyRequest, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OidcUnavailableError) {
      request.log.warn({ reason: error.message }, 'OpenID Connect provider unavailable');
      throw new ApiError(
        'service_unavailable',
        'The sign-in provider cannot be reached',
        'oidc_unavailable',
        null,
        { headers: { 'retry-after': '30' } },
      );
    }
    if (error instanceof OidcRejectedError) {
      request.log.warn({ reason: error.message }, 'OpenID Connect sign-in refused');
      throw new ApiError(
        'invalid_token',
        'The sign-in could not be verified',
        'oidc_token_invalid',
      );
    }
    throw error;
  }
}

/** The address and cookie that send the browser to the category's provider. */
export async function startOidcLogin(
  app: FastifyInstance,
  request: FastifyRequest,
  categoryId: string | undefined,
  redirect: string | undefined,
): Promise<{ location: string; cookie: string }> {
  const config = categoryId ? await enabledOidcProvider(app.db, categoryId) : undefined;
  if (!config || !categoryId)
    throw new ApiError('bad_request', 'Provider oidc is not enabled', 'provider_not_enabled', {
      provider: OIDC_PROVIDER,
    });
  await countAttempt(app, OIDC_STARTS, request.ip);
  const client = clientOf(config);
  const metadata = await guarded(request, () => discover(client.issuer));
  const secrets = newSecrets();
  await app.db.delete(oidcLogins).where(lt(oidcLogins.expiresAt, new Date()));
  await app.db.insert(oidcLogins).values({
    state: secrets.state,
    categoryId,
    nonce: secrets.nonce,
    codeVerifier: secrets.codeVerifier,
    redirect: safeRedirect(redirect),
    expiresAt: new Date(Date.now() + SIGN_IN_SECONDS * 1000),
  });
  const location = authorizationUrl(metadata, client, {
    ...secrets,
    redirectUri: new URL(CALLBACK_PATH, linkBase(app, request)).toString(),
  });
  const secure = request.protocol === 'https' ? '; Secure' : '';
  const cookie = `${OIDC_STATE_COOKIE}=${secrets.state}; Path=${CALLBACK_PATH}; Max-Age=${SIGN_IN_SECONDS}; HttpOnly; SameSite=Lax${secure}`;
  return { location, cookie };
}

/** Answers the 302 to the category's provider, with the cookie that binds the sign-in. */
export async function sendOidcStart(
  app: FastifyInstance,
  request: FastifyRequest,
  reply: FastifyReply,
  categoryId: string | undefined,
  redirect: string | undefined,
) {
  const start = await startOidcLogin(app, request, categoryId, redirect);
  return reply
    .code(302)
    .header('set-cookie', start.cookie)
    .header('location', start.location)
    .send();
}

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

const claimText = (claims: Record<string, unknown>, name: string | null): string | null => {
  if (!name) return null;
  const value = claims[name];
  return typeof value === 'string' && value.trim() ? value.trim() : null;
};

interface Person {
  sub: string;
  username: string;
  name: string;
  email: string | null;
  photo: string | null;
  /** the values of the provider's category claim */
  categoryValues: string[];
  /** the values of the provider's groups claim; undefined when it has none */
  groups?: string[];
}

/** The person the verified claims describe, through the provider's claim mapping. */
async function personOf(
  request: FastifyRequest,
  config: OidcIssuerConfig,
  claims: Record<string, unknown>,
  fetchMore: () => Promise<Record<string, unknown>>,
): Promise<Person> {
  const mapped = [
    config.claimUsername,
    config.claimName,
    config.claimEmail,
    config.claimPhoto,
    config.claimGroups,
    config.categoryAttribute,
  ];
  const missing = mapped.some((name) => name && claims[name] === undefined);
  const all = missing ? { ...(await guarded(request, fetchMore)), ...claims } : claims;
  const sub = String(claims.sub);
  const username = claimText(all, config.claimUsername) ?? sub;
  const email = claimText(all, config.claimEmail);
  const verified = all.email_verified !== false;
  return {
    sub,
    username: username.slice(0, 128),
    name: (claimText(all, config.claimName) ?? username).slice(0, 255),
    email: email && verified ? email.toLowerCase() : null,
    photo: claimText(all, config.claimPhoto),
    categoryValues: config.categoryAttribute ? textsOf(all[config.categoryAttribute]) : [],
    ...(config.claimGroups ? { groups: textsOf(all[config.claimGroups]) } : {}),
  };
}

function allowedDomain(config: OidcIssuerConfig, email: string | null): boolean {
  const domains = (config.allowedDomains ?? '').toLowerCase().split(/\s+/).filter(Boolean);
  if (domains.length === 0) return true;
  const domain = email?.slice(email.lastIndexOf('@') + 1);
  return !!domain && domains.includes(domain);
}

/** The mapping of the category's enabled provider, for a sign-in continued there. */
export async function oidcMapping(
  app: FastifyInstance,
  categoryId: string,
): Promise<SsoMapping | undefined> {
  const config = await enabledOidcProvider(app.db, categoryId);
  return config ? mappingOf(config) : undefined;
}

/**
 * The account a provider's answer signs in (or the login step it needs: ./sso-accounts.ts), and
 * where the browser goes afterwards. Refusals are thrown before any session exists.
 */
export async function finishOidcLogin(
  app: FastifyInstance,
  request: FastifyRequest,
  query: { state: string; code?: string; error?: string; iss?: string },
): Promise<{ outcome: SsoOutcome; redirect: string }> {
  const [pending] = await app.db
    .delete(oidcLogins)
    .where(eq(oidcLogins.state, query.state))
    .returning();
  if (!pending || pending.expiresAt.getTime() < Date.now()) throw stateInvalid();
  if (cookieOf(request, OIDC_STATE_COOKIE) !== query.state) throw stateInvalid();
  if (query.error || !query.code)
    throw new ApiError(
      'invalid_credentials',
      'The provider did not sign the user in',
      'login_failed',
      {
        reason: query.error ?? 'no_code',
      },
    );
  const config = await enabledOidcProvider(app.db, pending.categoryId);
  if (!config) throw disallowed();
  const client = clientOf(config);
  const code = query.code;
  const { metadata, tokens, claims } = await guarded(request, async () => {
    const metadata = await discover(client.issuer);
    // an answer that names its issuer must name ours (a mix-up with another provider otherwise)
    if (query.iss !== undefined && query.iss !== metadata.issuer)
      throw new OidcRejectedError('the answer names another issuer');
    const tokens = await exchangeCode(metadata, client, {
      code,
      codeVerifier: pending.codeVerifier,
      redirectUri: new URL(CALLBACK_PATH, linkBase(app, request)).toString(),
    });
    const claims = await verifyIdToken(metadata, client, tokens.idToken, pending.nonce);
    return { metadata, tokens, claims };
  });
  const person = await personOf(request, config, claims, async () =>
    tokens.accessToken ? userInfo(metadata, tokens.accessToken, String(claims.sub)) : {},
  );
  if (!allowedDomain(config, person.email)) throw disallowed();
  const guess = config.categoryAttribute
    ? {
        values: person.categoryValues,
        offers: (await oidcSiblings(app.db, config.issuer, config.clientId)).map(mappingOf),
      }
    : undefined;
  const outcome = await ssoSignIn(
    app,
    request,
    OIDC_PROVIDER,
    { ...person, uid: person.sub },
    mappingOf(config),
    guess,
  );
  if ('user' in outcome) await rememberIdToken(app, outcome.user.id, tokens.idToken);
  return { outcome, redirect: pending.redirect };
}
