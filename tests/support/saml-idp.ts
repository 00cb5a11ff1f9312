/**
 * A real SAML 2.0 identity provider for the tests (samlify in the identity provider role) on a
 * free loopback port, with a signing key and a self-signed certificate made by `openssl` for the
 * run, and test accounts that sign in through its login form.
 *
 * - GET /metadata: its metadata (HTTP-Redirect single sign-on and single logout addresses).
 * - GET /sso: our authentication request (HTTP-Redirect binding) read and shown as a login form.
 * - POST /sso: the account signs in; the answer is a page that posts the signed response (the
 *   assertion signed) to the service provider's assertion consumer service, by script or button.
 * - GET /slo: a logout request read, answered with a logout response to the service provider.
 *
 * `trust` takes the service provider's metadata (the portal's). `signIn` drives the form without a
 * browser and answers what the browser would post. `tamperNext` changes the values of the next
 * answer before it is signed (so the signature stays valid and the service provider's own checks
 * must refuse it). `logoutRequest` starts a single logout from the identity provider's side (signed,
 * unsigned, or signed with a key it does not publish), and `logoutResponseOf` reads the service
 * provider's answer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicKey, verify } from 'node:crypto';
import { inflateRawSync } from 'node:zlib';
import samlify, { type IdentityProviderInstance, type ServiceProviderInstance } from 'samlify';

const { IdentityProvider, ServiceProvider } = samlify;

export interface SamlAccount {
  nameId: string;
  username: string;
  password: string;
  name: string;
  email: string;
  /** the values of its `groups` attribute */
  groups: string[];
}

/** The test accounts of the identity provider. */
export const SAML_ACCOUNTS: readonly SamlAccount[] = [
  {
    nameId: 'ines.ferrer@idp.test',
    username: 'ines.ferrer',
    password: 'ines-secret-1',
    name: 'Ines Ferrer',
    email: 'ines.ferrer@school.test',
    groups: ['cn=College Staff,ou=groups,dc=idp,dc=test', 'not-a-portal-group', 'college-lab'],
  },
];

/** The values of an answer, before it is signed. */
export interface AnswerValues {
  ID: string;
  AssertionID: string;
  IssueInstant: string;
  Destination: string;
  InResponseTo: string;
  Issuer: string;
  Audience: string;
  SubjectRecipient: string;
  NameID: string;
  ConditionsNotBefore: string;
  ConditionsNotOnOrAfter: string;
  SubjectConfirmationDataNotOnOrAfter: string;
}

/** What the browser posts to the service provider. */
export interface PostedAnswer {
  action: string;
  SAMLResponse: string;
  RelayState: string;
}

/** A service provider's answer to a logout request. */
export interface LogoutAnswer {
  inResponseTo: string;
  status: string;
  /** signed, and the signature verifies with the service provider's certificate */
  signed: boolean;
  relayState: string | null;
}

export interface SamlIdp {
  url: string;
  entityId: string;
  metadataUrl: string;
  metadata: string;
  /** Takes the service provider's metadata. */
  trust(spMetadata: string): void;
  /** Signs an account in from our sign-on address: answers what the browser posts back. */
  signIn(location: string, username: string, password: string): Promise<PostedAnswer>;
  /** The next answer gets these values changed before it is signed. */
  tamperNext(change: (values: AnswerValues) => AnswerValues): void;
  /** The next answer's assertion is encrypted to the service provider's encryption certificate. */
  encryptNext(): void;
  /**
   * The address of the service provider's single logout with a logout request of the identity
   * provider for `nameId` (HTTP-Redirect binding): signed with its key, not signed, or signed with
   * another key under its name.
   */
  logoutRequest(nameId: string, signature: 'signed' | 'unsigned' | 'foreign'): string;
  /** The service provider's answer to a logout request, read from where it sends the browser. */
  logoutResponseOf(location: string): LogoutAnswer;
  stop(): Promise<void>;
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A private key and its self-signed certificate (PEM), made by `openssl` for the run. */
export function keyPair(): { privateKey: string; certificate: string } {
  const dir = mkdtempSync(join(tmpdir(), 'saml-idp-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=Test SAML IdP',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    return {
      privateKey: readFileSync(join(dir, 'key.pem'), 'utf8'),
      certificate: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const loginPage = (query: string, failed = false) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test SAML identity provider</title></head>
<body><main><h1>Test SAML identity provider</h1>${failed ? '<p role="alert">Wrong password</p>' : ''}
<form method="post" action="/sso?${escape(query)}">
<label>Username <input name="username" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form></main></body></html>`;

const postPage = (answer: PostedAnswer) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Signing in</title></head>
<body><main><form method="post" action="${escape(answer.action)}">
<input type="hidden" name="SAMLResponse" value="${escape(answer.SAMLResponse)}">
<input type="hidden" name="RelayState" value="${escape(answer.RelayState)}">
<button type="submit">Continue</button>
</form><script>document.forms[0].submit()</script></main></body></html>`;

/** What a redirect binding's signature covers: its parameters in their order, encoded. */
function octetStringOf(query: URLSearchParams): string {
  return ['SAMLRequest', 'SAMLResponse', 'RelayState', 'SigAlg']
    .filter((name) => query.has(name))
    .map((name) => `${name}=${encodeURIComponent(query.get(name) ?? '')}`)
    .join('&');
}

/**
 * The id of the authentication request in a redirect binding's query, its signature checked with
 * the service provider's certificate when it signs (read without samlify's schema check: the
 * service provider's side is what the tests prove).
 */
function requestIdOf(
  query: URLSearchParams,
  sp: ServiceProviderInstance,
  element: 'AuthnRequest' | 'LogoutRequest',
  signed: boolean,
): string {
  const xml = inflateRawSync(Buffer.from(query.get('SAMLRequest') ?? '', 'base64')).toString();
  const signature = query.get('Signature');
  if (signed && !signature) throw new Error(`the ${element} is not signed`);
  if (signature) {
    const pem = [sp.entityMeta.getX509Certificate('signing')].flat(2)[0];
    const cert = `-----BEGIN CERTIFICATE-----\n${String(pem)}\n-----END CERTIFICATE-----`;
    const data = Buffer.from(octetStringOf(query));
    if (!verify('sha256', data, createPublicKey(cert), Buffer.from(signature, 'base64')))
      throw new Error(`the ${element} is not signed by the service provider`);
  }
  const id = new RegExp(`<(?:\\w+:)?${element}\\b[^>]*\\sID="([^"]+)"`).exec(xml)?.[1];
  if (!id) throw new Error(`no ${element}`);
  return id;
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

const attribute = (name: string, ...values: string[]) =>
  `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic">${values.map((value) => `<saml:AttributeValue xsi:type="xs:string">${escape(value)}</saml:AttributeValue>`).join('')}</saml:Attribute>`;

/** The metadata of an identity provider at `url` that nobody runs (a record to show, not to use). */
export function idpMetadataAt(url: string): string {
  const binding = samlify.Constants.namespace.binding.redirect;
  return IdentityProvider({
    entityID: `${url}/metadata`,
    signingCert: keyPair().certificate,
    singleSignOnService: [{ Binding: binding, Location: `${url}/sso` }],
    singleLogoutService: [{ Binding: binding, Location: `${url}/slo` }],
  }).getMetadata();
}

/** Starts the identity provider. */
export async function startSamlIdp(
  options: { wantSignedRequests?: boolean } = {},
): Promise<SamlIdp> {
  const keys = keyPair();
  const signed = options.wantSignedRequests ?? false;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const entityId = `${url}/metadata`;
  const settings = {
    entityID: entityId,
    signingCert: keys.certificate,
    privateKey: keys.privateKey,
    wantAuthnRequestsSigned: signed,
    requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    singleSignOnService: [
      { Binding: samlify.Constants.namespace.binding.redirect, Location: `${url}/sso` },
    ],
    singleLogoutService: [
      { Binding: samlify.Constants.namespace.binding.redirect, Location: `${url}/slo` },
    ],
  };
  const idp: IdentityProviderInstance = IdentityProvider(settings);
  /** The same identity provider, encrypting its assertions to the service provider. */
  const encrypting: IdentityProviderInstance = IdentityProvider({
    ...settings,
    isAssertionEncrypted: true,
  });
  const metadata = idp.getMetadata();
  let sp: ServiceProviderInstance | undefined;
  let tamper: ((values: AnswerValues) => AnswerValues) | undefined;
  let encryptNext = false;

  const spOf = () => {
    if (!sp) throw new Error('the test identity provider trusts no service provider yet');
    return sp;
  };

  /** The signed answer to a request read from the sign-on address's query. */
  const answer = async (query: URLSearchParams, account: SamlAccount): Promise<PostedAnswer> => {
    const target = spOf();
    const requestId = requestIdOf(query, target, 'AuthnRequest', signed);
    const acs = target.entityMeta.getAssertionConsumerService('post');
    const action = String([acs].flat()[0] ?? '');
    const now = new Date();
    const later = new Date(now.getTime() + 5 * 60_000).toISOString();
    let values: AnswerValues = {
      ID: `_r${crypto.randomUUID()}`,
      AssertionID: `_a${crypto.randomUUID()}`,
      IssueInstant: now.toISOString(),
      Destination: action,
      InResponseTo: requestId,
      Issuer: entityId,
      Audience: target.entityMeta.getEntityID(),
      SubjectRecipient: action,
      NameID: account.nameId,
      ConditionsNotBefore: now.toISOString(),
      ConditionsNotOnOrAfter: later,
      SubjectConfirmationDataNotOnOrAfter: later,
    };
    if (tamper) values = tamper(values);
    tamper = undefined;
    const attributes = `<saml:AttributeStatement>${attribute('uid', account.username)}${attribute('displayName', account.name)}${attribute('mail', account.email)}${attribute('groups', ...account.groups)}</saml:AttributeStatement>`;
    const filled: Record<string, string> = {
      ...Object.fromEntries(Object.entries(values).map(([k, v]) => [k, escape(String(v))])),
      NameIDFormat: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      StatusCode: 'urn:oasis:names:tc:SAML:2.0:status:Success',
      AuthnStatement: `<saml:AuthnStatement AuthnInstant="${values.IssueInstant}" SessionIndex="${values.AssertionID}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
      AttributeStatement: attributes,
    };
    const signer = encryptNext ? encrypting : idp;
    encryptNext = false;
    const response = await signer.createLoginResponse(
      target,
      { extract: {} },
      'post',
      {},
      (template) => ({
        id: values.ID,
        context: template.replace(/\{(\w+)\}/g, (_m, key: string) => filled[key] ?? ''),
      }),
    );
    return { action, SAMLResponse: response.context, RelayState: query.get('RelayState') ?? '' };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const at = new URL(req.url ?? '/', url);
    const html = { 'content-type': 'text/html; charset=utf-8' };
    if (at.pathname === '/metadata') {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(metadata);
    } else if (at.pathname === '/sso' && req.method === 'GET') {
      res.writeHead(200, html).end(loginPage(at.search.slice(1)));
    } else if (at.pathname === '/sso' && req.method === 'POST') {
      const form = await formOf(req);
      const account = SAML_ACCOUNTS.find((a) => a.username === form.get('username'));
      if (!account || account.password !== form.get('password')) {
        res.writeHead(401, html).end(loginPage(at.search.slice(1), true));
        return;
      }
      res.writeHead(200, html).end(postPage(await answer(at.searchParams, account)));
    } else if (at.pathname === '/slo') {
      const target = spOf();
      const id = requestIdOf(at.searchParams, target, 'LogoutRequest', false);
      const back = idp.createLogoutResponse(
        target,
        { extract: { request: { id } } },
        'redirect',
        at.searchParams.get('RelayState') ?? '',
      );
      res.writeHead(302, { location: back.context }).end();
    } else {
      res.writeHead(404).end();
    }
  };
  server.on('request', (req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('test SAML identity provider', error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  const signIn = async (location: string, username: string, password: string) => {
    const sso = new URL(location);
    const res = await fetch(`${url}/sso${sso.search}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username, password }).toString(),
    });
    const page = await res.text();
    if (!res.ok) throw new Error(`sign-in at the test identity provider: ${res.status}`);
    const field = (name: string) =>
      new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? '';
    return {
      action: /action="([^"]*)"/.exec(page)?.[1] ?? '',
      SAMLResponse: field('SAMLResponse'),
      RelayState: field('RelayState').replace(/&#(\d+);/g, (_m, c: string) =>
        String.fromCharCode(Number(c)),
      ),
    };
  };

  /** The same identity provider's name with a key nobody trusts. */
  let impostor: IdentityProviderInstance | undefined;
  const logoutRequest = (nameId: string, signature: 'signed' | 'unsigned' | 'foreign') => {
    const target = ServiceProvider({
      metadata: spOf().getMetadata(),
      wantLogoutRequestSigned: signature !== 'unsigned',
    });
    if (signature === 'foreign' && !impostor) {
      const other = keyPair();
      impostor = IdentityProvider({
        entityID: entityId,
        signingCert: other.certificate,
        privateKey: other.privateKey,
        requestSignatureAlgorithm: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
        singleSignOnService: [
          { Binding: samlify.Constants.namespace.binding.redirect, Location: `${url}/sso` },
        ],
        singleLogoutService: [
          { Binding: samlify.Constants.namespace.binding.redirect, Location: `${url}/slo` },
        ],
      });
    }
    const from = signature === 'foreign' ? (impostor ?? idp) : idp;
    return from.createLogoutRequest(
      target,
      'redirect',
      { logoutNameID: nameId },
      {
        relayState: 'idp-logout',
      },
    ).context;
  };

  const logoutResponseOf = (location: string): LogoutAnswer => {
    const query = new URL(location).searchParams;
    const xml = inflateRawSync(Buffer.from(query.get('SAMLResponse') ?? '', 'base64')).toString();
    const signature = query.get('Signature');
    let signed = false;
    if (signature) {
      const pem = [spOf().entityMeta.getX509Certificate('signing')].flat(2)[0];
      const cert = `-----BEGIN CERTIFICATE-----\n${String(pem)}\n-----END CERTIFICATE-----`;
      signed = verify(
        'sha256',
        Buffer.from(octetStringOf(query)),
        createPublicKey(cert),
        Buffer.from(signature, 'base64'),
      );
    }
    return {
      inResponseTo: /\sInResponseTo="([^"]+)"/.exec(xml)?.[1] ?? '',
      status: /<(?:\w+:)?StatusCode\b[^>]*\sValue="([^"]+)"/.exec(xml)?.[1] ?? '',
      signed,
      relayState: query.get('RelayState'),
    };
  };

  return {
    url,
    entityId,
    metadataUrl: `${url}/metadata`,
    metadata,
    trust: (spMetadata) => {
      sp = ServiceProvider({ metadata: spMetadata });
    },
    signIn,
    tamperNext: (change) => {
      tamper = change;
    },
    encryptNext: () => {
      encryptNext = true;
    },
    logoutRequest,
    logoutResponseOf,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
