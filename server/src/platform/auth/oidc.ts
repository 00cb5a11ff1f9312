/**
 * The relying-party half of OpenID Connect (authorization code flow with PKCE S256 and a client
 * secret): the issuer's metadata by discovery, the authorization address, the code exchange, and
 * the ID token's verification with the issuer's published keys (jose).
 *
 * An ID token is accepted only when its signature verifies with a key of the issuer's JWKS, its
 * `iss` is the discovered issuer, its `aud` names our client id (and `azp` is our client id when
 * it names several), its `nonce` is the one sent with this sign-in, and it is not expired nor
 * issued in the future, with at most CLOCK_SKEW_SECONDS of tolerance either way.
 *
 * An issuer that cannot be reached (or answers 5xx) is OidcUnavailableError; an answer that is
 * refused (the token endpoint says no, or the ID token fails a check) is OidcRejectedError.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { createRemoteJWKSet, JWTPayload } from 'jose';
import { lazyModule } from '../lib/lazy-module.ts';

/** Tolerated clock difference with the issuer, in seconds. */
export const CLOCK_SKEW_SECONDS = 60;
const HTTP_TIMEOUT_MS = 10_000;
const DISCOVERY_TTL_MS = 10 * 60_000;

export class OidcUnavailableError extends Error {}
export class OidcRejectedError extends Error {}

export interface OidcClient {
  issuer: string;
  clientId: string;
  clientSecret: string;
  scopes: string;
}

export interface OidcMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  /** where a relying party sends the browser to end the provider's session (RP-initiated logout) */
  end_session_endpoint?: string;
  token_endpoint_auth_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');
const randomToken = () => randomBytes(32).toString('base64url');

/** A fresh state, nonce and PKCE verifier (each 256 random bits). */
export function newSecrets(): { state: string; nonce: string; codeVerifier: string } {
  return { state: randomToken(), nonce: randomToken(), codeVerifier: randomToken() };
}

async function fetchJson(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
  } catch (error) {
    throw new OidcUnavailableError(`${url}: ${(error as Error).message}`);
  }
}

const discovered = new Map<string, { at: number; metadata: OidcMetadata }>();

/** The issuer's metadata (its discovery document, kept for ten minutes). */
export async function discover(issuer: string): Promise<OidcMetadata> {
  const key = trimSlash(issuer);
  const cached = discovered.get(key);
  if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.metadata;
  const res = await fetchJson(`${key}/.well-known/openid-configuration`);
  if (!res.ok) throw new OidcUnavailableError(`discovery answered ${res.status}`);
  const metadata = (await res.json().catch(() => null)) as Partial<OidcMetadata> | null;
  if (
    !metadata ||
    typeof metadata.issuer !== 'string' ||
    trimSlash(metadata.issuer) !== key ||
    typeof metadata.authorization_endpoint !== 'string' ||
    typeof metadata.token_endpoint !== 'string' ||
    typeof metadata.jwks_uri !== 'string'
  )
    throw new OidcUnavailableError('the discovery document does not describe this issuer');
  const complete = metadata as OidcMetadata;
  discovered.set(key, { at: Date.now(), metadata: complete });
  return complete;
}

/** Where the browser is sent to sign in: the code flow with state, nonce and PKCE S256. */
export function authorizationUrl(
  metadata: OidcMetadata,
  client: OidcClient,
  params: { state: string; nonce: string; codeVerifier: string; redirectUri: string },
): string {
  const url = new URL(metadata.authorization_endpoint);
  const challenge = createHash('sha256').update(params.codeVerifier).digest('base64url');
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', client.clientId);
  url.searchParams.set('redirect_uri', params.redirectUri);
  url.searchParams.set('scope', client.scopes);
  url.searchParams.set('state', params.state);
  url.searchParams.set('nonce', params.nonce);
  url.searchParams.set('code_challenge', challenge);
  url.searchParams.set('code_challenge_method', 'S256');
  return url.toString();
}

/** The code exchanged at the token endpoint with the client secret and the PKCE verifier. */
export async function exchangeCode(
  metadata: OidcMetadata,
  client: OidcClient,
  params: { code: string; codeVerifier: string; redirectUri: string },
): Promise<{ idToken: string; accessToken: string | undefined }> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: params.code,
    redirect_uri: params.redirectUri,
    code_verifier: params.codeVerifier,
  });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  const methods = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
  if (!methods.includes('client_secret_basic') && methods.includes('client_secret_post')) {
    body.set('client_id', client.clientId);
    body.set('client_secret', client.clientSecret);
  } else {
    // RFC 6749 §2.3.1: both parts are form-encoded before the Basic encoding
    const basic = `${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`;
    headers.authorization = `Basic ${Buffer.from(basic).toString('base64')}`;
  }
  const res = await fetchJson(metadata.token_endpoint, { method: 'POST', headers, body });
  const answer = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.status >= 500) throw new OidcUnavailableError(`token endpoint answered ${res.status}`);
  if (!res.ok) throw new OidcRejectedError(`token endpoint refused: ${String(answer.error)}`);
  if (typeof answer.id_token !== 'string')
    throw new OidcRejectedError('the token endpoint gave no ID token');
  return {
    idToken: answer.id_token,
    accessToken: typeof answer.access_token === 'string' ? answer.access_token : undefined,
  };
}

/** jose, loaded by the first ID token to verify (a portal without OIDC providers does not hold it). */
const joseLibrary = lazyModule(() => import('jose'));

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

function keySetOf(jose: Awaited<ReturnType<typeof joseLibrary>>, jwksUri: string) {
  let keys = keySets.get(jwksUri);
  if (!keys) {
    keys = jose.createRemoteJWKSet(new URL(jwksUri), { timeoutDuration: HTTP_TIMEOUT_MS });
    keySets.set(jwksUri, keys);
  }
  return keys;
}

/** The ID token's claims once every check of the module's rule passes. */
export async function verifyIdToken(
  metadata: OidcMetadata,
  client: OidcClient,
  idToken: string,
  nonce: string,
): Promise<JWTPayload> {
  const algorithms = (metadata.id_token_signing_alg_values_supported ?? ['RS256']).filter(
    (alg) => alg !== 'none' && !alg.startsWith('HS'),
  );
  const jose = await joseLibrary();
  let payload: JWTPayload;
  try {
    ({ payload } = await jose.jwtVerify(idToken, keySetOf(jose, metadata.jwks_uri), {
      issuer: metadata.issuer,
      audience: client.clientId,
      algorithms,
      clockTolerance: CLOCK_SKEW_SECONDS,
      requiredClaims: ['sub', 'exp', 'iat'],
    }));
  } catch (error) {
    if (error instanceof jose.errors.JWKSTimeout) throw new OidcUnavailableError(error.message);
    if (error instanceof jose.errors.JOSEError) throw new OidcRejectedError(error.message);
    // the key set could not be fetched
    throw new OidcUnavailableError((error as Error).message);
  }
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== client.clientId)
    throw new OidcRejectedError('the ID token was issued to another party');
  if (payload.iat !== undefined && payload.iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS)
    throw new OidcRejectedError('the ID token is issued in the future');
  if (payload.nonce !== nonce) throw new OidcRejectedError('the ID token has another nonce');
  return payload;
}

/** The user info endpoint's claims for the access token (they must be about the same subject). */
export async function userInfo(
  metadata: OidcMetadata,
  accessToken: string,
  subject: string,
): Promise<Record<string, unknown>> {
  if (!metadata.userinfo_endpoint) return {};
  const res = await fetchJson(metadata.userinfo_endpoint, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
  if (res.status >= 500) throw new OidcUnavailableError(`userinfo answered ${res.status}`);
  if (!res.ok) return {};
  const claims = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return claims.sub === subject ? claims : {};
}
