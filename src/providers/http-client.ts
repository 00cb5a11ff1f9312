/**
 * The one HTTP client. Every call names a generated operation (`operations[key]`): base, method,
 * path, body kind and time-out come from there. Failures are converted ONCE here into refine's
 * HttpError shape (`message`, `statusCode`, `errors`) keeping `description_code` and `params`.
 * 401 logs out (except where a call expects it), 503 goes to maintenance, 500 to the error page,
 * 429 resolves null except on the sign-in steps.
 */
import { operations, type Operation } from '@/generated/api';
import type {
  OperationBody,
  OperationKey,
  OperationParams,
  OperationQuery,
  OperationResponse,
} from '@/generated/operation-types';
import { beginRequest } from '@/lib/pending';
import { getToken } from '@/lib/token';
import { ApiError, toApiError } from './api-error';
import { httpHooks } from './http-hooks';
import { notifyFailure, notifySuccess } from './operation-listeners';
import {
  buildPath,
  buildQuery,
  DEFAULT_TIMEOUT_MS,
  encodeBody,
  type RequestOptions,
} from './request-encoding';
import { ensureFreshToken, usableTokenNow } from './token-renewal';

export { ApiError, isApiError, toApiError } from './api-error';
export { configureHttpClient, type HttpHooks } from './http-hooks';
export {
  onOperationFailure,
  onOperationSuccess,
  type OperationFailureListener,
  type OperationSuccessListener,
} from './operation-listeners';
export {
  API_BASE,
  AUTH_BASE,
  buildPath,
  DEFAULT_TIMEOUT_MS,
  SESSION_NOT_RENEWABLE,
  type RequestOptions,
} from './request-encoding';
export { ensureFreshToken, renewToken, usableTokenNow } from './token-renewal';

const LOGIN_OPERATION = 'session.login';
const NO_LOGOUT_ON_401 = new Set<string>([LOGIN_OPERATION, 'session.logout', 'session.renew']);
/**
 * The sign-in steps: a 429 there is a lockout the person must read (the password, then the second
 * factor's code or passkey), not a throttled background call to drop.
 */
const SHOWS_THROTTLE = new Set<string>([
  LOGIN_OPERATION,
  'session.verifySecondFactor',
  'session.passkeyOptions',
  'session.verifyPasskey',
  'session.confirmSecondFactorEnrolment',
] satisfies OperationKey[]);

/** How long a prefetched answer waits for the call it was started for. */
export const PREFETCH_TTL_MS = 10_000;

interface Prefetched {
  at: number;
  /** The session the answer was asked with: another session never takes it. */
  token: string | null;
  /** Null once taken: the entry stays, so asking ahead again in the same session sends nothing. */
  answer: Promise<unknown> | null;
  /** Whether the answer has come (a call that takes it before then counts as a request in flight). */
  settled: boolean;
  /** The answer once it has come without an error. */
  value?: { data: unknown };
}

const prefetched = new Map<string, Prefetched>();

/** What identifies a read asked ahead besides its operation. */
type PrefetchOptions = Pick<RequestOptions, 'params' | 'query'>;

const callKey = (key: string, options: RequestOptions): string =>
  JSON.stringify([key, options.params ?? {}, options.query ?? {}]);

/**
 * Starts a read ahead of the call that needs it (the landing page's reads, right after login):
 * the next call of the same operation with the same params and query, in the same session and
 * within PREFETCH_TTL_MS, takes this answer (or its failure) instead of asking again. Asking
 * ahead again in that time sends nothing, even once the answer was taken (the application's
 * entry repeats the login's reads ahead after the session bootstrap took the user). Returns the
 * answer it asked for (null when it sent nothing); a failure is the taking call's to see.
 */
export function prefetchOperation(
  key: string,
  options: PrefetchOptions = {},
): Promise<unknown> | null {
  const id = callKey(key, options);
  const existing = prefetched.get(id);
  if (existing && Date.now() - existing.at <= PREFETCH_TTL_MS && existing.token === getToken())
    return null;
  const answer = requestOperation(key, { ...options, background: true });
  const entry: Prefetched = { at: Date.now(), token: getToken(), answer, settled: false };
  // The call that takes the answer sees its failure; an answer nobody takes fails silently.
  answer.then(
    (data) => {
      entry.settled = true;
      entry.value = { data };
    },
    () => (entry.settled = true),
  );
  prefetched.set(id, entry);
  return answer;
}

/**
 * Resolves once the answer asked ahead for this call has come (at once when none was asked or
 * it was taken); it is not taken, and a failure resolves too (the taking call sees it).
 */
export function prefetchSettled(key: string, options: PrefetchOptions = {}): Promise<void> {
  const answer = prefetched.get(callKey(key, options))?.answer;
  return answer
    ? answer.then(
        () => undefined,
        () => undefined,
      )
    : Promise.resolve();
}

/**
 * The answer asked ahead for this call, taken, when it has already come without an error: a
 * screen draws it in its first render instead of after one more round of the event loop.
 */
export function takeSettledPrefetch(
  key: string,
  options: PrefetchOptions = {},
): { data: unknown } | null {
  const entry = prefetched.get(callKey(key, options));
  if (!entry?.answer || !entry.value) return null;
  if (Date.now() - entry.at > PREFETCH_TTL_MS || entry.token !== getToken()) return null;
  entry.answer = null;
  return entry.value;
}

/** Forgets every prefetched answer (logout). */
export function clearPrefetched(): void {
  prefetched.clear();
}

/** A call an answer was asked ahead for: its operation, params and query. */
export type PrefetchCall = readonly [key: string, options: PrefetchOptions];

/**
 * Drops the answers asked ahead and not taken yet, except `keep`'s: the call that needs one asks
 * the server again. Asking ahead again in the same session still sends nothing.
 */
export function dropPrefetched(keep: readonly PrefetchCall[] = []): void {
  const kept = new Set(keep.map(([key, options]) => callKey(key, options)));
  for (const [id, entry] of prefetched) {
    if (kept.has(id)) continue;
    entry.answer = null;
    delete entry.value;
  }
}

/** The prefetched answer of a plain read (no body, token, signal or file), taken once. */
function takePrefetched(
  key: string,
  options: RequestOptions,
): { answer: Promise<unknown>; settled: boolean } | null {
  if (prefetched.size === 0 || options.body !== undefined || options.token !== undefined)
    return null;
  if (options.signal || options.responseType || options.timeoutMs !== undefined) return null;
  const id = callKey(key, options);
  const entry = prefetched.get(id);
  if (!entry?.answer) return null;
  const { answer, settled } = entry;
  entry.answer = null;
  return Date.now() - entry.at <= PREFETCH_TTL_MS && entry.token === getToken()
    ? { answer, settled }
    : null;
}

/**
 * Calls a generated operation. Resolves with the parsed JSON (or text) body; 429 resolves with
 * null except on the sign-in steps. Rejects with an ApiError.
 */
export async function requestOperation(
  key: string,
  options: RequestOptions = {},
): Promise<unknown> {
  const ahead = takePrefetched(key, options);
  if (ahead) {
    // Taken while still on its way, it is this call's request in flight (submit buttons wait).
    if (ahead.settled || options.background) return ahead.answer;
    return ahead.answer.finally(beginRequest());
  }
  const op = (operations as Record<string, Operation>)[key];
  if (!op)
    throw new ApiError({
      message: `Unknown operation ${key}`,
      statusCode: 0,
      error: 'unknown_operation',
    });

  const done = options.background ? () => undefined : beginRequest();
  try {
    let token: string | null | undefined = options.token;
    if (token === undefined) {
      if (key === LOGIN_OPERATION) token = null;
      else if (op.access === 'public') token = getToken();
      else {
        // Without a renewal the request leaves in the caller's task (before a click's later work).
        const usable = usableTokenNow();
        token = usable === undefined ? await ensureFreshToken() : usable;
      }
    }
    const headers: Record<string, string> = { Accept: 'application/json, text/plain;q=0.9' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const encoded = encodeBody(op, options.body);
    if (encoded.contentType) headers['Content-Type'] = encoded.contentType;

    const timeout = AbortSignal.timeout(options.timeoutMs ?? op.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const url = buildPath(op, options.params) + buildQuery(options.query);

    let response: Response;
    try {
      response = await fetch(url, {
        method: op.method,
        headers,
        body: encoded.body ?? null,
        signal,
      });
    } catch (cause) {
      throw await toApiError(null, cause, key);
    }

    if (!response.ok) {
      const error = await toApiError(response, null, key);
      const status = response.status;
      if (status === 429 && !SHOWS_THROTTLE.has(key)) {
        console.warn('Too many requests', key);
        return null;
      }
      if (status === 401 && !NO_LOGOUT_ON_401.has(key))
        httpHooks().onUnauthorized(error, token ?? null);
      else if (status === 503 && !url.includes('scheduler')) httpHooks().onMaintenance(error);
      else if (status === 500 && key !== LOGIN_OPERATION) httpHooks().onServerError(error);
      notifyFailure(key, options.params ?? {}, error);
      throw error;
    }

    notifySuccess(key, options.params ?? {});
    if (response.status === 204) return null;
    if (options.responseType === 'blob') return await response.blob();
    if (options.responseType === 'file')
      return {
        blob: await response.blob(),
        filename: filenameOf(response.headers.get('Content-Disposition')),
      } satisfies DownloadedFile;
    const type = response.headers.get('Content-Type') ?? '';
    const text = await response.text();
    if (!text) return null;
    if (type.includes('json')) return JSON.parse(text) as unknown;
    return text;
  } finally {
    done();
  }
}

/** Options of a call to operation K: its params, query and body are typed by the operation. */
export interface OperationOptions<K extends OperationKey> extends Omit<
  RequestOptions,
  'params' | 'query' | 'body' | 'responseType'
> {
  params?: OperationParams<K>;
  query?: OperationQuery<K>;
  body?: OperationBody<K>;
}

/**
 * Calls operation K; resolves with its generated response type, or null for an empty answer and
 * for 429 (throttled calls are dropped silently, except the sign-in steps).
 */
export function request<K extends OperationKey>(
  key: K,
  options: OperationOptions<K> = {},
): Promise<OperationResponse<K> | null> {
  // The operation's response schema is what OperationResponse<K> is generated from.
  return requestOperation(key, options as RequestOptions) as Promise<OperationResponse<K> | null>;
}

/** A downloaded file: its body and the name the server gave it (null when it gave none). */
export interface DownloadedFile {
  blob: Blob;
  filename: string | null;
}

/** The file name of a Content-Disposition header (RFC 6266: `filename*` wins over `filename`). */
export function filenameOf(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*=UTF-8''([^;]+)/i.exec(header)?.[1];
  if (extended) {
    try {
      return decodeURIComponent(extended.trim());
    } catch {
      // a malformed encoding falls back to the plain name
    }
  }
  return /filename="?([^";]+)"?/i.exec(header)?.[1]?.trim() ?? null;
}

/** Calls operation K for a file or an image: resolves with the body as a Blob (null when empty). */
export function requestBlob<K extends OperationKey>(
  key: K,
  options: OperationOptions<K> = {},
): Promise<Blob | null> {
  return requestOperation(key, {
    ...(options as RequestOptions),
    responseType: 'blob',
  }) as Promise<Blob | null>;
}
