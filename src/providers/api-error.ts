/**
 * The client's one error shape: refine's HttpError (`message`, `statusCode`, `errors`) keeping the
 * wire's `description_code` and `params`; every failure, answered or not, is converted once.
 */
import type { HttpError } from '@refinedev/core';

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
