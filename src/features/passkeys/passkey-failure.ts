/**
 * The text shown when a passkey step fails: the screen's own text for the error's code, else the
 * shared error text, else the screen's general "passkey failed".
 */
import type { TFunction } from 'i18next';
import type { DisplayableError } from '@/lib/error-display';

export function passkeyFailureText(t: TFunction, texts: string, error: unknown): string {
  const err = (error ?? {}) as DisplayableError;
  const code = err.description_code ?? err.error;
  const keys = code ? [`${texts}.errors.${code}`, `errors:${code}`] : [];
  return t([...keys, `${texts}.passkeyFailed`]);
}
