/**
 * refine auth provider. Login posts the form to the generated `session.login` operation
 * (provider=form, category_id); the body is the raw JWT whose `type` decides the next page.
 * Logout always clears the session and goes to /login, even when the call fails, once per session.
 */
import type { AuthProvider } from '@refinedev/core';
import { resourceOf } from '@/generated/resources';
import type { SessionUserCategory, SessionUserTokenType } from '@/generated/types';
import { navigateTo } from '@/lib/navigation';
import { getSessionState, resetSessionState } from '@/lib/session-state';
import { setSessionModal } from '@/lib/session-modal-store';
import {
  clearToken,
  decodeToken,
  getToken,
  rememberedLoginCategory,
  setToken,
  tokenCategory,
  tokenType,
  type TokenClaims,
} from '@/lib/token';
import { ApiError, isApiError, request } from './http-client';
import { HOME_PATH } from '@/lib/paths';
import { LOGIN_PATH } from '@common/entry-paths';

/** The login page (outside the generated routes). */
export { LOGIN_PATH };

/** The path of an account page (an extra route of the `session` resource). */
function accountPage(kind: string): string {
  const path = resourceOf('session')?.meta.extraRoutes[kind];
  if (!path) throw new Error(`The session resource has no ${kind} route`);
  return path;
}

/** Page each special token type forces. */
export const TOKEN_TYPE_ROUTES: Partial<Record<string, string>> = {
  register: accountPage('register'),
  'category-select': LOGIN_PATH,
  'disclaimer-acknowledgement-required': accountPage('disclaimer'),
  'email-verification-required': accountPage('requestVerification'),
  'email-verification': accountPage('verifyEmail'),
  'password-reset-required': accountPage('resetPassword'),
  'password-reset': accountPage('resetPassword'),
  'second-factor-required': accountPage('secondFactor'),
  'second-factor-enrolment-required': accountPage('secondFactorEnrolment'),
};

/**
 * Token types the login call takes as its bearer to carry on a login that stopped at a step
 * (registration, category choice, disclaimer, expired password, second factor). The links mailed for a password
 * reset or an address check are not login steps: after them the user logs in again.
 */
const LOGIN_STEP_TYPES: ReadonlySet<SessionUserTokenType> = new Set<SessionUserTokenType>([
  'register',
  'category-select',
  'disclaimer-acknowledgement-required',
  'password-reset-required',
  'second-factor-required',
  'second-factor-enrolment-required',
]);

/** True when the login call can carry on with a token of this type as its bearer. */
export function continuesLogin(type: SessionUserTokenType): boolean {
  return LOGIN_STEP_TYPES.has(type);
}

export interface LoginParams {
  username?: string;
  password?: string;
  categoryId: string;
  provider?: 'form' | 'saml' | 'google';
  /** Bearer of a pending flow (category-select, register...). */
  token?: string | null;
}

export interface LoginResult {
  success: boolean;
  redirectTo?: string;
  error?: ApiError;
  /** Categories to choose from when the answer is a category-select token. */
  categories?: SessionUserCategory[];
  claims?: TokenClaims | null;
}

const logoutHooks = new Set<() => void>();

/** Registers teardown work (socket, caches) run on logout; returns the unregister function. */
export function onLogout(fn: () => void): () => void {
  logoutHooks.add(fn);
  return () => logoutHooks.delete(fn);
}

/** Posts the login form and stores the session; see LoginResult for the branches. */
export async function login(params: LoginParams): Promise<LoginResult> {
  try {
    const body = await request('session.login', {
      query: { provider: params.provider ?? 'form', category_id: params.categoryId || undefined },
      body: { username: params.username, password: params.password },
      token: params.token ?? null,
    });
    const jwt = typeof body === 'string' ? body.trim() : '';
    const claims = decodeToken(jwt);
    if (!claims) {
      return {
        success: false,
        error: new ApiError({
          message: 'Invalid login answer',
          statusCode: 500,
          error: 'internal_server',
        }),
      };
    }
    const type = tokenType(claims);
    setToken(jwt);
    if (type === 'category-select') {
      return { success: false, categories: claims.categories ?? [], claims };
    }
    const forced = TOKEN_TYPE_ROUTES[type];
    if (forced) return { success: true, redirectTo: forced, claims };
    return { success: true, redirectTo: HOME_PATH, claims };
  } catch (error) {
    return {
      success: false,
      error: isApiError(error) ? error : new ApiError({ message: String(error), statusCode: 0 }),
    };
  }
}

/**
 * Carries on a login with the token of the step just passed (registration, disclaimer, expired
 * password) as the bearer, in the token's category (else the one chosen at login). The answer is
 * stored like a login's: a login token leads to the desktops, another step's token to its page.
 * A login token is already a session: it leads to the desktops without a call.
 */
export async function continueLogin(bearer: string): Promise<LoginResult> {
  const claims = decodeToken(bearer);
  if (tokenType(claims) === 'login') return { success: true, redirectTo: HOME_PATH, claims };
  return login({
    categoryId: tokenCategory(claims) ?? rememberedLoginCategory() ?? '',
    token: bearer,
  });
}

export interface LogoutResult {
  success: true;
  redirectTo: string;
}

/** The logout under way: every caller until it is over gets it, not a second one. */
let ending: Promise<LogoutResult> | null = null;
/** A logout has ended a session in this page. */
let endedOnce = false;

/** A session to end: a stored token, or a signed-in user in the session state. */
const hasSession = (): boolean => !!getToken() || getSessionState().user !== null;

/**
 * Ends the session, once: POST logout (best effort), clear the cookie and state, go to /login.
 * Several signals report one session's end (the socket's session check, each read answered 401,
 * the cookie watcher): a call while a logout is under way shares it, and a call after one, with no
 * session begun since, does nothing (no second `/logout`, redirect or teardown).
 *
 * `failed` is the token a request was refused with (a 401; null: it carried none), or the one a
 * signal speaks for (the socket's last handshake; null for the cookie's absence). When the
 * stored token is another one by then (renewed, or a sign-in in another tab replaced the cookie),
 * the refusal is about a session this page no longer holds: nothing is ended, least of all the
 * new session.
 */
export function logout(failed?: string | null): Promise<LogoutResult> {
  if (failed !== undefined && !ending) {
    const stored = getToken();
    if (stored && stored !== failed)
      return Promise.resolve({ success: true, redirectTo: LOGIN_PATH });
  }
  ending ??= endSession().finally(() => {
    ending = null;
  });
  return ending;
}

async function endSession(): Promise<LogoutResult> {
  const done: LogoutResult = { success: true, redirectTo: LOGIN_PATH };
  if (endedOnce && !hasSession()) return done;
  const token = getToken();
  let redirect: string | undefined;
  try {
    if (token && tokenType(decodeToken(token)) === 'login') {
      const answer = await request('session.logout', {
        token,
        timeoutMs: 5000,
      });
      redirect = answer?.redirect;
    }
  } catch {
    // A failed logout still clears the session.
  } finally {
    // A session stored while the logout was out (a sign-in in another tab) is not this one.
    if (getToken() === token) clearToken();
    resetSessionState();
    setSessionModal(null);
    for (const hook of logoutHooks) hook();
    endedOnce = true;
  }
  if (redirect && /^https?:\/\//.test(redirect)) {
    window.location.assign(redirect);
  } else {
    navigateTo(LOGIN_PATH, { replace: true });
  }
  return done;
}

/** The refine auth provider object. */
export const authProvider: AuthProvider = {
  login: async (params: LoginParams) => {
    const result = await login(params);
    return { ...result, error: result.error };
  },
  logout: async () => {
    await logout();
    return { success: true };
  },
  check: async () => {
    const token = getToken();
    if (!token) return { authenticated: false, redirectTo: LOGIN_PATH, logout: true };
    const forced = TOKEN_TYPE_ROUTES[tokenType(decodeToken(token))];
    if (forced) return { authenticated: false, redirectTo: forced };
    return { authenticated: true };
  },
  // A 401 already ended the session in the HTTP client (its onUnauthorized hook logs out): a
  // second logout and redirect from here would only repeat it.
  onError: async () => ({}),
  getIdentity: async () => request('session.user'),
  getPermissions: async () => {
    const claims = decodeToken(getToken());
    return claims?.data?.role_id ?? null;
  },
};
