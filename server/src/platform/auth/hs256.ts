/**
 * Compact JWS with HS256, on `node:crypto` (one synchronous HMAC, no WebCrypto key import per
 * token). A token is `base64url(header).base64url(payload).base64url(signature)`; the signature
 * is HMAC-SHA-256 of the first two parts with the secret the header's `kid` names.
 *
 * Verification refuses, before reading any claim: anything but three parts of the base64url
 * alphabet, a header that is not
 * a JSON object, an `alg` other than HS256, an unencoded payload (`b64: false`) or any critical
 * header (`crit`: none is understood), a `kid` that is not a string, an unknown key, and a
 * signature that is not exactly the one the key gives (compared in constant time). Then the
 * payload must be a JSON object whose `iat`, `nbf` and `exp`, when present, are numbers; `nbf`
 * later than now plus the leeway is refused, and `exp` at or before now minus the leeway is
 * reported as expired (its payload authentic, for renewal).
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export type JwtPayload = Record<string, unknown>;

export interface JwtHeader {
  alg: 'HS256';
  typ: 'JWT';
  kid?: string;
}

/** Why a token was refused: `expired` carries the authentic payload of a token past its exp. */
export class JwtRefused extends Error {
  constructor(
    readonly reason: 'invalid' | 'expired',
    readonly payload?: JwtPayload,
  ) {
    super(reason === 'expired' ? 'token expired' : 'invalid token');
  }
}

const keyObjects = new WeakMap<Uint8Array, KeyObject>();

/** The secret as a KeyObject, made once per secret. */
function keyObjectOf(secret: Uint8Array): KeyObject {
  let keyObject = keyObjects.get(secret);
  if (!keyObject) {
    keyObject = createSecretKey(secret);
    keyObjects.set(secret, keyObject);
  }
  return keyObject;
}

const signatureOf = (signingInput: string, secret: Uint8Array): Buffer =>
  createHmac('sha256', keyObjectOf(secret)).update(signingInput, 'utf8').digest();

const encodeJson = (value: unknown): string =>
  Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

/** Three parts of the base64url alphabet only (no padding, no other character). */
const COMPACT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON object a base64url part holds, or undefined when it holds anything else. */
function decodeObject(part: string): JwtPayload | undefined {
  try {
    const value: unknown = JSON.parse(utf8.decode(Buffer.from(part, 'base64url')));
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as JwtPayload)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Signs `payload` with `secret`, naming the key `kid` in the header. */
export function signHs256(payload: JwtPayload, secret: Uint8Array, kid: string): string {
  const header: JwtHeader = { alg: 'HS256', typ: 'JWT', kid };
  const signingInput = `${encodeJson(header)}.${encodeJson(payload)}`;
  return `${signingInput}.${signatureOf(signingInput, secret).toString('base64url')}`;
}

/** The header of a compact token, unverified, when it is an HS256 header we can check. */
export function headerOf(token: string): { kid: string | undefined; parts: string[] } {
  if (!COMPACT.test(token)) throw new JwtRefused('invalid');
  const parts = token.split('.');
  const header = decodeObject(parts[0] ?? '');
  if (
    !header ||
    header.alg !== 'HS256' ||
    header.crit !== undefined ||
    header.b64 !== undefined ||
    (header.kid !== undefined && typeof header.kid !== 'string')
  )
    throw new JwtRefused('invalid');
  return { kid: header.kid, parts };
}

/**
 * Checks the signature of a token whose header `headerOf` read with `secret`, then its time
 * claims against now with `leewaySeconds`; answers its payload.
 */
export function verifyHs256(
  parts: string[],
  secret: Uint8Array,
  leewaySeconds: number,
  nowMs = Date.now(),
): JwtPayload {
  const [head = '', body = '', signature = ''] = parts;
  const expected = Buffer.from(signatureOf(`${head}.${body}`, secret).toString('base64url'));
  const given = Buffer.from(signature, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new JwtRefused('invalid');
  const payload = decodeObject(body);
  if (!payload) throw new JwtRefused('invalid');
  for (const claim of ['iat', 'nbf', 'exp'] as const) {
    const value = payload[claim];
    if (value !== undefined && typeof value !== 'number') throw new JwtRefused('invalid');
  }
  const now = Math.floor(nowMs / 1000);
  const { nbf, exp } = payload as { nbf?: number; exp?: number };
  if (nbf !== undefined && nbf > now + leewaySeconds) throw new JwtRefused('invalid');
  if (exp !== undefined && exp <= now - leewaySeconds) throw new JwtRefused('expired', payload);
  return payload;
}

/** The payload of a compact token, unverified (dispatch only), or undefined when unreadable. */
export function peekPayload(token: string): JwtPayload | undefined {
  const parts = token.split('.');
  return parts.length === 3 ? decodeObject(parts[1] ?? '') : undefined;
}
