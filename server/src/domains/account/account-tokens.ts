/**
 * The tokens of the account flows.
 *
 * Mail links (email-verification, password-reset, register) are special JWTs valid for at most
 * `accountTokenMinutes` and carry a random `jti` (144 bits from the CSPRNG). The user row keeps the
 * jti of the newest link of each kind: a link works only while its jti is the stored one, using it
 * clears it, and mailing a newer link replaces it, so a link works once and older links die.
 *
 * The bearer of a route that takes special tokens is read here: missing -> 401 missing_token, bad
 * signature -> 401 invalid_token, expired -> 401 token_expired, a type the route does not take ->
 * 403 invalid_token.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  bearerOf,
  isLoginClaims,
  type SpecialClaims,
  type SpecialTokenType,
} from '../../platform/auth/tokens.ts';
import { constants } from '../../../../src/generated/constants.ts';

/** How long a mail link works (seconds). */
export const ACCOUNT_TOKEN_SECONDS = constants.session.accountTokenMinutes.value * 60;

/** Continuation tokens of the login steps (disclaimer, email address, password) (seconds). */
export const LOGIN_STEP_SECONDS = 600;

/** The category-select token's lifetime (seconds). */
export const CATEGORY_SELECT_SECONDS = 600;

/** A fresh link id. */
export const newJti = (): string => randomBytes(18).toString('base64url');

/** Claims of the email-verification link. */
export interface EmailVerificationClaims extends SpecialClaims {
  type: 'email-verification';
  jti: string;
  email: string;
}

/** Claims of the password-reset link. */
export interface PasswordResetClaims extends SpecialClaims {
  type: 'password-reset';
  jti: string;
}

/**
 * Claims of the register link (user_id is the username: the account does not exist yet), or of
 * the register step of a directory's or OpenID Connect provider's first sign-in (user_id and uid
 * are the provider's uid; the provider may know no address).
 */
export type RegisterClaims = SpecialClaims & {
  type: 'register';
  jti: string;
  category_id: string;
} & (
    | { provider: 'local'; username: string; name: string; email: string }
    | {
        provider: 'ldap' | 'oidc' | 'saml';
        uid: string;
        username: string;
        name: string;
        email: string | null;
        photo: string | null;
        /** the values of the provider's group attribute; undefined when it has none */
        groups?: string[];
      }
  );

/** Claims of the category-select token (user_id is the username). */
export interface CategorySelectClaims extends SpecialClaims {
  type: 'category-select';
  username: string;
  categories: { id: string; name: string }[];
}

const invalid = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

/** The verified special token of the request, of one of `types` (errors: see the file comment). */
export async function specialTokenOf(
  app: FastifyInstance,
  request: FastifyRequest,
  types: readonly SpecialTokenType[],
): Promise<SpecialClaims> {
  const bearer = bearerOf(request.headers.authorization);
  if (!bearer)
    throw new ApiError('missing_token', 'Authorization header is expected', 'missing_token');
  const claims = await app.tokens.verify(bearer);
  if (isLoginClaims(claims) || !(types as readonly string[]).includes(claims.type)) throw invalid();
  return claims;
}

const text = (claims: SpecialClaims, key: string): string => {
  const value: unknown = claims[key];
  if (typeof value !== 'string' || value === '') throw invalid();
  return value;
};

export function asEmailVerification(claims: SpecialClaims): EmailVerificationClaims {
  if (claims.type !== 'email-verification') throw invalid();
  return {
    ...claims,
    type: 'email-verification',
    jti: text(claims, 'jti'),
    email: text(claims, 'email'),
  };
}

export function asPasswordReset(claims: SpecialClaims): PasswordResetClaims {
  if (claims.type !== 'password-reset') throw invalid();
  return { ...claims, type: 'password-reset', jti: text(claims, 'jti') };
}

const optionalText = (claims: SpecialClaims, key: string): string | null => {
  const value: unknown = claims[key];
  return typeof value === 'string' && value !== '' ? value : null;
};

export function asRegister(claims: SpecialClaims): RegisterClaims {
  const provider: unknown = claims.provider;
  if (claims.type !== 'register') throw invalid();
  const common = {
    ...claims,
    type: 'register' as const,
    jti: text(claims, 'jti'),
    category_id: text(claims, 'category_id'),
    username: text(claims, 'username'),
    name: text(claims, 'name'),
  };
  if (provider === 'local') return { ...common, provider, email: text(claims, 'email') };
  if (provider !== 'ldap' && provider !== 'oidc' && provider !== 'saml') throw invalid();
  return {
    ...common,
    provider,
    uid: text(claims, 'uid'),
    email: optionalText(claims, 'email'),
    photo: optionalText(claims, 'photo'),
    ...(Array.isArray(claims.groups)
      ? {
          groups: claims.groups.filter(
            (v: unknown): v is string => typeof v === 'string' && v !== '',
          ),
        }
      : {}),
  };
}

export function asCategorySelect(claims: SpecialClaims): CategorySelectClaims {
  const categories: unknown = claims.categories;
  if (claims.type !== 'category-select' || !Array.isArray(categories)) throw invalid();
  const list = categories.flatMap((c: unknown) => {
    if (!c || typeof c !== 'object') return [];
    const id: unknown = Reflect.get(c, 'id');
    const name: unknown = Reflect.get(c, 'name');
    return typeof id === 'string' && typeof name === 'string' ? [{ id, name }] : [];
  });
  return {
    ...claims,
    type: 'category-select',
    username: text(claims, 'username'),
    categories: list,
  };
}

/** Signs a mail link token of `type` for `userId` with the given jti and claims. */
export function signAccountToken(
  app: FastifyInstance,
  type: 'email-verification' | 'password-reset' | 'register',
  userId: string,
  jti: string,
  claims: Record<string, unknown> = {},
): Promise<string> {
  return app.tokens.signSpecial(type, userId, ACCOUNT_TOKEN_SECONDS, { ...claims, jti });
}
