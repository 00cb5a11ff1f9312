/** Login error texts of the login page: a translation key and its values. */
import type { ApiError } from '@/providers/http-client';
import { formatTime } from '@/lib/times-of-day';

export interface LoginErrorText {
  /** The message's key, with the keys to fall back on when the catalogue has no such text. */
  key: string | string[];
  values?: Record<string, string>;
  /** 503: the page goes to /maintenance instead of showing a message. */
  maintenance?: boolean;
}

function formatRetryAfter(value: string | null | undefined, now: Date): string {
  if (!value) return '';
  const seconds = Number(value);
  const date = Number.isFinite(seconds)
    ? new Date(now.getTime() + seconds * 1000)
    : new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return formatTime(date);
}

/** Maps a login failure to its message. */
export function loginErrorText(
  error: Pick<ApiError, 'statusCode' | 'error' | 'retryAfter' | 'description_code'>,
  now = new Date(),
): LoginErrorText {
  switch (error.statusCode) {
    case 401:
      return { key: 'common:login.errors.invalidCredentials' };
    case 403:
      return error.error === 'user_disabled'
        ? { key: 'errors:user_disabled' }
        : { key: 'common:login.errors.disallowed' };
    case 429:
      return {
        key: 'common:login.errors.tooManyAttempts',
        values: { time: formatRetryAfter(error.retryAfter, now) },
      };
    case 500:
      return { key: 'common:login.errors.server' };
    case 503:
      // a category's LDAP directory that cannot be reached is no maintenance of the portal
      return error.description_code === 'ldap_unavailable'
        ? { key: 'errors:ldap_unavailable' }
        : { key: 'common:login.errors.server', maintenance: true };
    default:
      return { key: 'errors:generic' };
  }
}

/** A code the catalogue may name: lower-case words joined by underscores. */
const CODE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The message of a refusal a provider's sign-in sent back to the login page (`?error=<code>`):
 * the error texts' catalogue's text of that code, else the generic one; nothing without a code.
 */
export function refusalText(code: string | null): LoginErrorText | null {
  if (!code) return null;
  return { key: CODE.test(code) ? [`errors:${code}`, 'errors:generic'] : 'errors:generic' };
}
