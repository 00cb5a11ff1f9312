/**
 * JWTs: HS256 only, `kid` is a payload claim ("isardvdi"), the login token carries
 * session_id/sub/data, special tokens carry `type`. They are signed with the newest key of the
 * key ring (signing-keys.ts: in the database, the same on every node), named by the `kid` of the
 * header; a token is verified with the key its header names (the first key when it names none).
 */
import type { JWTPayload, SignJWT } from 'jose';
import { staticKeyRing, type KeyRing } from './signing-keys.ts';
import { headerOf, JwtRefused, peekPayload, signHs256, verifyHs256 } from './hs256.ts';
import { ApiError } from '../http/api-error.ts';
import type {
  Role,
  SessionUserTokenData,
  SessionUserTokenType,
} from '../../../../src/generated/types.ts';

export const KID = 'isardvdi';
export const ISSUER = 'isard-authentication';

export type SpecialTokenType = Exclude<SessionUserTokenType, 'login' | 'external' | 'viewer'>;

export interface LoginClaims extends JWTPayload {
  kid: string;
  session_id: string;
  sub: string;
  exp: number;
  data: SessionUserTokenData;
  type?: 'login';
}

export interface SpecialClaims extends JWTPayload {
  kid: string;
  type: SessionUserTokenType;
  user_id: string;
  exp: number;
}

export type Claims = LoginClaims | SpecialClaims;

export function isLoginClaims(c: Claims): c is LoginClaims {
  return (
    (c.type === undefined || c.type === 'login') &&
    typeof (c as LoginClaims).session_id === 'string'
  );
}

/** How many verified tokens verify() remembers before it starts over. */
export const VERIFIED_TOKENS_MAX = 10_000;

/** A payload and the objects inside it, made read-only (a remembered payload is shared by requests). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

export class TokenService {
  /**
   * Tokens whose signature and claims verified, with their payload: verifying is a pure function
   * of the token and the clock, so a token seen again is not verified again while its exp (plus
   * the leeway) has not passed. Only the signature and the claims are remembered; the session
   * behind a login token is still checked on every request, so a revocation applies at once.
   */
  private readonly verified = new Map<string, { claims: Claims; untilMs: number }>();

  private readonly keys: KeyRing;

  constructor(
    keys: KeyRing | Uint8Array,
    private readonly leewaySeconds: number,
  ) {
    this.keys = keys instanceof Uint8Array ? staticKeyRing(keys) : keys;
  }

  /** Signs a token built with jose's builder with the current key, named in its header. */
  async sign(jwt: SignJWT): Promise<string> {
    const key = this.keys.current();
    return jwt.setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.id }).sign(key.secret);
  }

  /** Signs these claims with the current key, named in its header. */
  signClaims(claims: JWTPayload): string {
    const key = this.keys.current();
    return signHs256(claims, key.secret, key.id);
  }

  /** A login token; `iat` (seconds) defaults to now, and is the start of the session's period. */
  async signLogin(input: {
    sessionId: string;
    userId: string;
    exp: number;
    iat?: number;
    data: SessionUserTokenData;
  }): Promise<string> {
    const now = input.iat ?? Math.floor(Date.now() / 1000);
    return this.signClaims({
      kid: KID,
      session_id: input.sessionId,
      data: input.data,
      iss: ISSUER,
      sub: input.userId,
      iat: now,
      nbf: now,
      exp: input.exp,
    });
  }

  async signSpecial(
    type: SpecialTokenType,
    userId: string,
    ttlSeconds: number,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    return this.signClaims({
      ...extra,
      kid: KID,
      type,
      user_id: userId,
      iss: ISSUER,
      iat: now,
      nbf: now,
      exp: now + ttlSeconds,
    });
  }

  /**
   * Verifies signature (HS256 only, with the key the header names), exp/nbf with the leeway and
   * the kid claim.
   * With allowExpired the signature is still checked but an elapsed exp is accepted (renew).
   */
  async verify(token: string, options: { allowExpired?: boolean } = {}): Promise<Claims> {
    const known = this.verified.get(token);
    if (known) {
      if (Date.now() < known.untilMs) return known.claims;
      this.verified.delete(token);
    }
    const claims = await this.verifyNow(token, options);
    const untilMs = (claims.exp + this.leewaySeconds) * 1000;
    if (Date.now() < untilMs) {
      if (this.verified.size >= VERIFIED_TOKENS_MAX) this.verified.clear();
      this.verified.set(token, { claims, untilMs });
    }
    return claims;
  }

  private async verifyNow(token: string, options: { allowExpired?: boolean }): Promise<Claims> {
    let payload: JWTPayload;
    try {
      const { kid, parts } = headerOf(token);
      const key = await this.keys.find(kid);
      if (!key) throw new JwtRefused('invalid');
      payload = verifyHs256(parts, key.secret, this.leewaySeconds);
    } catch (err) {
      // An expired token is reported only after its signature verified: its payload is authentic.
      if (options.allowExpired && err instanceof JwtRefused && err.payload) payload = err.payload;
      else if (err instanceof JwtRefused && err.reason === 'expired')
        throw new ApiError('unauthorized', 'Token expired', 'token_expired');
      else throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
    }
    if (payload.kid !== KID || typeof payload.exp !== 'number')
      throw new ApiError('unauthorized', 'Bad token Key ID', 'invalid_token');
    if (payload.type === undefined || payload.type === 'login') {
      const data = payload.data as Partial<SessionUserTokenData> | undefined;
      if (
        typeof payload.session_id !== 'string' ||
        typeof payload.sub !== 'string' ||
        !data?.user_id
      ) {
        throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
      }
    } else if (typeof payload.user_id !== 'string') {
      throw new ApiError('unauthorized', 'Invalid token', 'invalid_token');
    }
    return deepFreeze(payload as Claims);
  }

  /** Reads the type claim without verifying (dispatch only; the branch verifies again). */
  static peekType(token: string): string | undefined {
    const t = peekPayload(token)?.type;
    return typeof t === 'string' ? t : undefined;
  }
}

/** `Authorization: Bearer <jwt>` -> jwt, or undefined when absent. Malformed -> 401. */
export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined || header === '') return undefined;
  const m = /^Bearer\s+([A-Za-z0-9_\-.]+)\s*$/i.exec(header);
  if (!m?.[1])
    throw new ApiError('unauthorized', 'Authorization header is expected', 'missing_token');
  return m[1];
}

export const roleNames: Record<Role, string> = {
  admin: 'Administrator',
  manager: 'Manager',
  advanced: 'Advanced',
  user: 'User',
};
