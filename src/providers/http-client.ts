/**
 * The one HTTP client. Every call names a generated operation (`operations[key]`): base, method,
 * path, body kind and time-out come from there. Failures are converted ONCE here into refine's
 * HttpError shape (`message`, `statusCode`, `errors`) keeping `description_code` and `params`.
 * 401 logs out (except where a call expects it), 503 goes to maintenance, 500 to the error page,
 * 429 resolves null except on login.
 */
import type { HttpError } from '@refinedev/core';
import { operations, type Operation } from '@/generated/api';
import type {
  OperationBody,
  OperationKey,
  OperationParams,
  OperationQuery,
  OperationResponse,
} from '@/generated/operation-types';
import { beginRequest } from '@/lib/pending';
import { decodeToken, expiresWithin, getToken, setToken, tokenType } from '@/lib/token';

export const API_BASE = '/api/v3';
export const AUTH_BASE = '/authentication';
/** Default time-out of calls the operation table gives none for. */
export const DEFAULT_TIMEOUT_MS = 60_000;
export const SESSION_NOT_RENEWABLE = 'Session cannot be renewed';

/** Error thrown by the client: refine's HttpError plus the wire error fields. */
export class ApiError extends Error implements HttpError {
  statusCode: number;
  errors?: Record<string, string>;
  error?: string;
  description_code?: string;
  params?: Record<string, unknown> | null;
  /** Retry-After header value (429). */
  retryAfter?: string | null;
  operation?: string;

  constructor(init: {
    message: string;
    statusCode: number;
    errors?: Record<string, string>;
    error?: string;
    description_code?: string;
    params?: Record<string, unknown> | null;
    retryAfter?: string | null;
    operation?: string;
  }) {
    super(init.message);
    this.name = 'ApiError';
    this.statusCode = init.statusCode;
    if (init.errors) this.errors = init.errors;
    if (init.error) this.error = init.error;
    if (init.description_code) this.description_code = init.description_code;
    this.params = init.params ?? null;
    this.retryAfter = init.retryAfter ?? null;
    if (init.operation) this.operation = init.operation;
  }
}

/** True for errors produced by this client. */
export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}

/** Hooks the application wires in (logout, navigation, expired-session modal). */
export interface HttpHooks {
  onUnauthorized: (error: ApiError) => void;
  onServerError: (error: ApiError) => void;
  onMaintenance: (error: ApiError) => void;
  onRenewFailed: () => void;
  onTokenRenewed: (token: string) => void;
}

const noop = (): void => undefined;
let hooks: HttpHooks = {
  onUnauthorized: noop,
  onServerError: noop,
  onMaintenance: noop,
  onRenewFailed: noop,
  onTokenRenewed: noop,
};

/** Wires the application reactions; returns the previous hooks (tests restore them). */
export function configureHttpClient(next: Partial<HttpHooks>): HttpHooks {
  const previous = hooks;
  hooks = { ...hooks, ...next };
  return previous;
}

export interface RequestOptions {
  /** Path parameters (`{name}` in the operation path). */
  params?: Record<string, string | number>;
  /** Query string values (undefined values are skipped). */
  query?: Record<string, string | number | boolean | undefined | null>;
  /** Request body (JSON object or form fields per the operation's `body`). */
  body?: unknown;
  /** Bearer token to send instead of the session token (special-token flows). */
  token?: string | null;
  /** Overrides the operation's time-out. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /**
   * `blob` resolves with the raw body as a Blob (images) instead of JSON/text; `file` with
   * `{ blob, filename }`, the name the server gave in Content-Disposition (downloads).
   */
  responseType?: 'blob' | 'file';
  /** Background polling (thumbnails): not counted as a pending request (no loading cursor). */
  background?: boolean;
}

/** Fills `{name}` placeholders of an operation path. */
export function buildPath(
  op: Pick<Operation, 'base' | 'path'>,
  params: Record<string, string | number> = {},
): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined || value === null || value === '')
      throw new Error(`Missing path parameter "${name}"`);
    return encodeURIComponent(String(value));
  });
  return (op.base === 'auth' ? AUTH_BASE : API_BASE) + path;
}

function buildQuery(query: RequestOptions['query']): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function encodeBody(op: Operation, body: unknown): { body?: BodyInit; contentType?: string } {
  if (op.body === 'none' || body === undefined) {
    // The authentication service requires `{}` on its POST endpoints.
    if (op.base === 'auth' && op.method === 'POST' && op.body === 'none')
      return { body: '{}', contentType: 'application/json' };
    return {};
  }
  if (op.body === 'form') {
    const form = new FormData();
    for (const [key, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
      if (value === undefined || value === null) continue;
      form.append(
        key,
        typeof value === 'object' && !(value instanceof Blob)
          ? JSON.stringify(value)
          : (value as string | Blob),
      );
    }
    return { body: form };
  }
  return { body: JSON.stringify(body), contentType: 'application/json' };
}

/** Converts any failure (response or network) into an ApiError. */
export async function toApiError(
  response: Response | null,
  cause: unknown,
  operation?: string,
): Promise<ApiError> {
  if (!response) {
    const aborted =
      cause instanceof DOMException &&
      (cause.name === 'AbortError' || cause.name === 'TimeoutError');
    return new ApiError({
      message: aborted
        ? 'Request timed out'
        : cause instanceof Error
          ? cause.message
          : 'Network error',
      statusCode: aborted ? 408 : 0,
      error: aborted ? 'timeout' : 'network_error',
      ...(operation ? { operation } : {}),
    });
  }
  let parsed: Record<string, unknown> | null = null;
  let text = '';
  try {
    text = await response.text();
    const value: unknown = text ? JSON.parse(text) : null;
    if (value && typeof value === 'object') parsed = value as Record<string, unknown>;
  } catch {
    parsed = null;
  }
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  const errors =
    parsed?.errors && typeof parsed.errors === 'object'
      ? (parsed.errors as Record<string, string>)
      : undefined;
  const params =
    parsed?.params && typeof parsed.params === 'object'
      ? (parsed.params as Record<string, unknown>)
      : null;
  const message =
    str(parsed?.description) ??
    str(parsed?.msg) ??
    str(parsed?.error) ??
    (text && !parsed ? text : undefined) ??
    response.statusText ??
    'Error';
  const errorCode = str(parsed?.error);
  const descriptionCode = str(parsed?.description_code);
  return new ApiError({
    message: message || `HTTP ${response.status}`,
    statusCode: response.status,
    ...(errors ? { errors } : {}),
    ...(errorCode ? { error: errorCode } : {}),
    ...(descriptionCode ? { description_code: descriptionCode } : {}),
    params,
    retryAfter: response.headers.get('Retry-After'),
    ...(operation ? { operation } : {}),
  });
}

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
    hooks.onTokenRenewed(payload.token);
    return payload.token;
  })().finally(() => {
    renewing = null;
  });
  return renewing;
}

/**
 * Returns a usable session token: renews it first when it is a login token within 30 s of exp.
 * A failed renewal rejects with 'Session cannot be renewed' and opens the expired-session modal.
 */
export async function ensureFreshToken(now = Date.now()): Promise<string | null> {
  const token = getToken();
  if (!token) return null;
  const claims = decodeToken(token);
  if (tokenType(claims) !== 'login' || !expiresWithin(claims, now)) return token;
  try {
    return await renewToken();
  } catch {
    hooks.onRenewFailed();
    throw new ApiError({
      message: SESSION_NOT_RENEWABLE,
      statusCode: 401,
      error: 'invalid_session',
    });
  }
}

/** Called after a call succeeded, with its operation key and path parameters. */
export type OperationSuccessListener = (
  key: string,
  params: Readonly<Record<string, string | number>>,
) => void;

const successListeners = new Set<OperationSuccessListener>();

/**
 * Follows successful calls (a desktop started, whichever screen started it); returns the
 * function that stops following. A listener that throws does not fail the call.
 */
export function onOperationSuccess(listener: OperationSuccessListener): () => void {
  successListeners.add(listener);
  return () => successListeners.delete(listener);
}

function notifySuccess(key: string, params: Readonly<Record<string, string | number>>): void {
  for (const listener of successListeners) {
    try {
      listener(key, params);
    } catch (error) {
      console.warn('operation listener', error);
    }
  }
}

/** Called after a call failed with an answer, with its operation key, path parameters and error. */
export type OperationFailureListener = (
  key: string,
  params: Readonly<Record<string, string | number>>,
  error: ApiError,
) => void;

const failureListeners = new Set<OperationFailureListener>();

/**
 * Follows refused calls (a start refused for the GPU plan, whichever screen asked); returns the
 * function that stops following. The call still rejects as before; a listener that throws does
 * not change that.
 */
export function onOperationFailure(listener: OperationFailureListener): () => void {
  failureListeners.add(listener);
  return () => failureListeners.delete(listener);
}

function notifyFailure(
  key: string,
  params: Readonly<Record<string, string | number>>,
  error: ApiError,
): void {
  for (const listener of failureListeners) {
    try {
      listener(key, params, error);
    } catch (cause) {
      console.warn('operation listener', cause);
    }
  }
}

const LOGIN_OPERATION = 'session.login';
const NO_LOGOUT_ON_401 = new Set<string>([LOGIN_OPERATION, 'session.logout', 'session.renew']);

/**
 * Calls a generated operation. Resolves with the parsed JSON (or text) body; 429 resolves with
 * null except on login. Rejects with an ApiError.
 */
export async function requestOperation(
  key: string,
  options: RequestOptions = {},
): Promise<unknown> {
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
      else token = await ensureFreshToken();
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
      if (status === 429 && key !== LOGIN_OPERATION) {
        console.warn('Too many requests', key);
        return null;
      }
      if (status === 401 && !NO_LOGOUT_ON_401.has(key)) hooks.onUnauthorized(error);
      else if (status === 503 && !url.includes('scheduler')) hooks.onMaintenance(error);
      else if (status === 500 && key !== LOGIN_OPERATION) hooks.onServerError(error);
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
 * for 429 (throttled calls are dropped silently, except login).
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
