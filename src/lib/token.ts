/** JWT helpers and the session cookie. The token is kept in the JS-readable cookie `vdiportal_session`. */
import { AUTHORIZATION_COOKIE, SESSION_COOKIE } from '@common/entry-paths';
import type { Role, SessionUserCategory, SessionUserTokenType } from '@/generated/types';

// AUTHORIZATION_COOKIE: the cookie a login answers its token in too, which a provider's sign-in
// leaves alone; adopted as the session when present
export { AUTHORIZATION_COOKIE, SESSION_COOKIE };
/** Renew the token when it expires within this many milliseconds. */
export const RENEW_WITHIN_MS = 30_000;

export interface TokenClaims {
  kid?: string;
  type?: SessionUserTokenType;
  session_id?: string;
  sub?: string;
  exp?: number;
  iat?: number;
  user_id?: string;
  category_id?: string;
  categories?: SessionUserCategory[];
  data?: {
    provider?: string;
    user_id?: string;
    role_id?: Role;
    category_id?: string;
    group_id?: string;
    name?: string;
  };
  [key: string]: unknown;
}

function base64UrlDecode(part: string): string {
  const normalised = part.replace(/-/g, '+').replace(/_/g, '/');
  const padded = normalised + '='.repeat((4 - (normalised.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** Decodes a JWT payload without verifying it; returns null for anything that is not a JWT. */
export function decodeToken(token: string | null | undefined): TokenClaims | null {
  if (!token) return null;
  const parts = token.trim().split('.');
  if (parts.length !== 3 || !parts[1]) return null;
  try {
    const claims: unknown = JSON.parse(base64UrlDecode(parts[1]));
    return claims && typeof claims === 'object' ? (claims as TokenClaims) : null;
  } catch {
    return null;
  }
}

/** The token type; a login token has none (or `login`). */
export function tokenType(claims: TokenClaims | null): SessionUserTokenType {
  return claims?.type ?? 'login';
}

/** The category a token names: a special token's own claim, else the login data's. */
export function tokenCategory(claims: TokenClaims | null): string | null {
  return claims?.category_id ?? claims?.data?.category_id ?? null;
}

/** True when the token has an exp and it has passed. */
export function isExpired(claims: TokenClaims | null, nowMs: number): boolean {
  return !!claims?.exp && claims.exp * 1000 <= nowMs;
}

/** True when the token expires within `withinMs` of `nowMs` (or has no exp at all). */
export function expiresWithin(
  claims: TokenClaims | null,
  nowMs: number,
  withinMs = RENEW_WITHIN_MS,
): boolean {
  if (!claims?.exp) return false;
  return claims.exp * 1000 - nowMs <= withinMs;
}

function readCookie(name: string): string | null {
  if (typeof document === 'undefined') return null;
  for (const item of document.cookie.split(';')) {
    const [key, ...rest] = item.trim().split('=');
    if (key === name) return decodeURIComponent(rest.join('='));
  }
  return null;
}

/** The current session token, or null. */
export function getToken(): string | null {
  const value = readCookie(SESSION_COOKIE);
  return value ? value : null;
}

/** Stores the session token as a browser-session cookie (SameSite=Strict, Path=/). */
export function setToken(token: string): void {
  const secure =
    typeof location !== 'undefined' && location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=/; SameSite=Strict${secure}`;
}

/** Removes the session cookie (and a leftover provider `authorization` cookie). */
export function clearToken(): void {
  document.cookie = `${SESSION_COOKIE}=; Path=/; SameSite=Strict; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
  document.cookie = `${AUTHORIZATION_COOKIE}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
}

/** True when a session is stored: the session cookie, or a provider cookie the guard adopts. */
export function hasStoredSession(): boolean {
  return !!getToken() || !!readCookie(AUTHORIZATION_COOKIE);
}

/** Adopts the provider's `authorization` cookie as the session when no session exists. */
export function adoptAuthorizationCookie(): string | null {
  const existing = getToken();
  if (existing) return existing;
  const adopted = readCookie(AUTHORIZATION_COOKIE);
  if (!adopted) return null;
  setToken(adopted);
  document.cookie = `${AUTHORIZATION_COOKIE}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
  return adopted;
}

/** Where the category chosen at login is kept for the login steps that follow (tab-scoped). */
const LOGIN_CATEGORY_KEY = 'vdiportal_login_category';

/** Remembers the category the user logs in to (the account steps continue the login in it). */
export function rememberLoginCategory(categoryId: string): void {
  if (typeof sessionStorage === 'undefined') return;
  if (categoryId) sessionStorage.setItem(LOGIN_CATEGORY_KEY, categoryId);
  else sessionStorage.removeItem(LOGIN_CATEGORY_KEY);
}

/** The category remembered at login, or null. */
export function rememberedLoginCategory(): string | null {
  if (typeof sessionStorage === 'undefined') return null;
  return sessionStorage.getItem(LOGIN_CATEGORY_KEY);
}
