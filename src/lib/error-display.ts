/**
 * Error display: the `description_code` (or `error`) is looked up in the `errors`
 * namespace with `params`; unknown codes give the generic error. The codes of a quota or limit
 * refusal (the schema's `quotaCode` catalogue, which the server's refusals are checked against)
 * open a confirm popup (OK / Go to quota); others show a toast at top centre for 2000 ms. 401,
 * 500 and 503 are not displayed (the HTTP client already reacts to them); 429 is silent.
 */
import { useSyncExternalStore } from 'react';
import i18next from 'i18next';
import { notifications } from '@mantine/notifications';
import { isQuotaCode } from '@/generated/error-codes';

export const ERROR_TOAST_MS = 2000;
const SILENT_STATUSES = new Set([401, 429, 500, 503]);

export interface DisplayableError {
  statusCode?: number;
  description_code?: string;
  error?: string;
  params?: Record<string, unknown> | null;
}

/** Translation key and values for an error; falls back to `errors:generic`. */
export function errorMessageKey(error: DisplayableError | null | undefined): {
  key: string;
  code: string | null;
} {
  const code = error?.description_code ?? error?.error ?? null;
  if (code && i18next.exists(`errors:${code}`)) return { key: `errors:${code}`, code };
  return { key: 'errors:generic', code };
}

/** Translated message of an error. */
export function translateError(error: DisplayableError | null | undefined): string {
  const { key } = errorMessageKey(error);
  return i18next.t(key, { ...(error?.params ?? {}) });
}

let quotaMessage: string | null = null;
const listeners = new Set<() => void>();

function setQuotaMessage(next: string | null): void {
  quotaMessage = next;
  for (const listener of listeners) listener();
}

/** Closes the quota popup. */
export function closeQuotaPopup(): void {
  setQuotaMessage(null);
}

/** React binding of the quota popup message. */
export function useQuotaPopup(): string | null {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => quotaMessage,
    () => null,
  );
}

/**
 * Shows an API error: a quota refusal in the quota banner, any other as a toast, nothing for the
 * statuses handled elsewhere. Returns how it was shown.
 */
export function showError(error: unknown): 'quota' | 'toast' | 'silent' {
  const err = (error ?? {}) as DisplayableError;
  if (err.statusCode !== undefined && SILENT_STATUSES.has(err.statusCode)) return 'silent';
  const { code } = errorMessageKey(err);
  const message = translateError(err);
  if (isQuotaCode(code)) {
    setQuotaMessage(message);
    return 'quota';
  }
  notifications.show({ message, color: 'red', position: 'top-center', autoClose: ERROR_TOAST_MS });
  return 'toast';
}

/** Shows an informational toast (2000 ms, top centre). */
export function showInfo(message: string): void {
  notifications.show({ message, color: 'blue', position: 'top-center', autoClose: ERROR_TOAST_MS });
}
