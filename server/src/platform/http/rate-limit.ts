/**
 * The one place that builds a rate-limit answer (429 too_many_requests): every one carries a
 * `Retry-After` header, an HTTP date when the limit ends at a known time (a login ban, a counting
 * window) or a number of seconds when it ends when something else finishes (a download slot, a
 * console). The error handler adds the default delay to any 429 that reaches it without one, and
 * the raw refusals of a WebSocket upgrade take their header from here too.
 */
import { ApiError } from './api-error.ts';

/** Seconds a client waits when the limit ends when other work finishes, at no known time. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** When the client may try again: at a known time, or after a number of seconds. */
export type RetryAfter = { until: Date } | { seconds: number };

const DEFAULT_RETRY: RetryAfter = { seconds: DEFAULT_RETRY_AFTER_SECONDS };

/** The `Retry-After` header value for `retry`. */
export function retryAfterValue(retry: RetryAfter): string {
  if ('until' in retry) return retry.until.toUTCString();
  return String(Math.max(1, Math.ceil(retry.seconds)));
}

/** The headers of a rate-limit answer. */
export function retryAfterHeaders(retry: RetryAfter = DEFAULT_RETRY): { 'retry-after': string } {
  return { 'retry-after': retryAfterValue(retry) };
}

/** A 429 in our error shape with its `Retry-After` (params.retry_after: ISO time or seconds). */
export function tooManyRequests(options: {
  retry: RetryAfter;
  description?: string;
  code?: string;
  params?: Record<string, unknown>;
}): ApiError {
  const { retry } = options;
  const retryAfter = 'until' in retry ? retry.until.toISOString() : Number(retryAfterValue(retry));
  return new ApiError(
    'too_many_requests',
    options.description ?? `Retry after: ${retryAfterValue(retry)}`,
    options.code ?? 'too_many_requests',
    { ...options.params, retry_after: retryAfter },
    { headers: retryAfterHeaders(retry) },
  );
}

/** The raw HTTP answer that refuses a WebSocket upgrade (a 429 with its `Retry-After`). */
export function upgradeRefusal(status: number, reason: string): string {
  const retry = status === 429 ? `Retry-After: ${retryAfterValue(DEFAULT_RETRY)}\r\n` : '';
  return `HTTP/1.1 ${status} ${reason}\r\n${retry}Connection: close\r\nContent-Length: 0\r\n\r\n`;
}
