/** How a call of an operation goes on the wire: its URL, query string and body. */
import type { Operation } from '@/generated/api';

export const API_BASE = '/api/v3';
export const AUTH_BASE = '/authentication';
/** Default time-out of calls the operation table gives none for. */
export const DEFAULT_TIMEOUT_MS = 60_000;
export const SESSION_NOT_RENEWABLE = 'Session cannot be renewed';

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

export function buildQuery(query: RequestOptions['query']): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export function encodeBody(
  op: Operation,
  body: unknown,
): { body?: BodyInit; contentType?: string } {
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
