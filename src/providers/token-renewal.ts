/** Renewing the login token before it expires (deduplicated across concurrent calls). */
import { operations } from '@/generated/api';
import { decodeToken, expiresWithin, getToken, setToken, tokenType } from '@/lib/token';
import { ApiError } from './api-error';
import { httpHooks } from './http-hooks';
import { buildPath, DEFAULT_TIMEOUT_MS, SESSION_NOT_RENEWABLE } from './request-encoding';

let renewing: Promise<string> | null = null;

/** POST /authentication/renew with the current token; stores and returns the new one. Deduplicated. */
export function renewToken(): Promise<string> {
  renewing ??= (async () => {
    const current = getToken();
    if (!current) throw new ApiError({ message: SESSION_NOT_RENEWABLE, statusCode: 401 });
    const op = operations['session.renew'];
    let response: Response;
    try {
      response = await fetch(buildPath(op), {
        method: op.method,
        headers: {
          Authorization: `Bearer ${current}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: '{}',
        signal: AbortSignal.timeout(op.timeoutMs ?? DEFAULT_TIMEOUT_MS),
      });
    } catch {
      throw new ApiError({ message: SESSION_NOT_RENEWABLE, statusCode: 401 });
    }
    if (!response.ok) throw new ApiError({ message: SESSION_NOT_RENEWABLE, statusCode: 401 });
    const payload = (await response.json()) as { token?: string };
    if (!payload.token) throw new ApiError({ message: SESSION_NOT_RENEWABLE, statusCode: 401 });
    setToken(payload.token);
    httpHooks().onTokenRenewed(payload.token);
    return payload.token;
  })().finally(() => {
    renewing = null;
  });
  return renewing;
}

/**
 * The session token when it needs no renewal (null without a session), at once; undefined when a
 * login token is within 30 s of exp. A call that has its token this way sends its request in the
 * same task (a click's request leaves before the work the click does after it).
 */
export function usableTokenNow(now = Date.now()): string | null | undefined {
  const token = getToken();
  if (!token) return null;
  const claims = decodeToken(token);
  return tokenType(claims) !== 'login' || !expiresWithin(claims, now) ? token : undefined;
}

/**
 * Returns a usable session token: renews it first when it is a login token within 30 s of exp.
 * A failed renewal rejects with 'Session cannot be renewed' and opens the expired-session modal.
 */
export async function ensureFreshToken(now = Date.now()): Promise<string | null> {
  const token = usableTokenNow(now);
  if (token !== undefined) return token;
  try {
    return await renewToken();
  } catch {
    httpHooks().onRenewFailed();
    throw new ApiError({
      message: SESSION_NOT_RENEWABLE,
      statusCode: 401,
      error: 'invalid_session',
    });
  }
}
