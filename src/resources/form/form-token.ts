/**
 * The bearer of a form route's call and whether the page applies to it. With `token: "query"` the
 * page's `?token=` (a link from a mail) is the bearer when present, else the stored session token.
 * An operation that names token types only works with one of them: a token of another special type
 * goes to the page that type forces, a login token to the desktops, and no token (or an expired one)
 * leaves the page with nothing to do.
 */
import type { Operation } from '@/generated/api';
import { HOME_PATH } from '@/lib/paths';
import { decodeToken, isExpired, tokenType, type TokenClaims } from '@/lib/token';
import { TOKEN_TYPE_ROUTES } from '@/providers/auth-provider';

export type FormTokenState =
  /** The page applies; `bearer` is the token to send (null: the call's default). */
  | { kind: 'ok'; bearer: string | null; claims: TokenClaims | null; fromQuery: boolean }
  /** Another page handles this token. */
  | { kind: 'redirect'; to: string }
  /** No token the call accepts: a missing or malformed link, or no session. */
  | { kind: 'missing' }
  /** The token has expired. */
  | { kind: 'expired' };

export interface FormTokenInput {
  /** The operation the form calls. */
  operation: Pick<Operation, 'tokenTypes'>;
  /** `"query"` when the form takes its bearer from the page's query. */
  source: 'query' | undefined;
  /** The page's `?token=` value. */
  queryToken: string | null;
  /** The stored session token. */
  storedToken: string | null;
  /** The page's path (a token forcing this very page applies here). */
  pathname: string;
  nowMs: number;
}

/** Decides the bearer of a form route and whether the page applies (pure, for the tests). */
export function formTokenState({
  operation,
  source,
  queryToken,
  storedToken,
  pathname,
  nowMs,
}: FormTokenInput): FormTokenState {
  const fromQuery = source === 'query' && !!queryToken;
  const bearer = fromQuery ? queryToken : storedToken;
  const claims = decodeToken(bearer);
  if (operation.tokenTypes.length === 0)
    return { kind: 'ok', bearer: fromQuery ? bearer : null, claims, fromQuery };
  if (!bearer || !claims) return { kind: 'missing' };
  const type = tokenType(claims);
  const forced = TOKEN_TYPE_ROUTES[type];
  if (!operation.tokenTypes.includes(type)) {
    if (forced && forced !== pathname) return { kind: 'redirect', to: forced };
    if (type === 'login' && !isExpired(claims, nowMs)) return { kind: 'redirect', to: HOME_PATH };
    return { kind: 'missing' };
  }
  if (isExpired(claims, nowMs)) return { kind: 'expired' };
  return { kind: 'ok', bearer, claims, fromQuery };
}
