import { describe, expect, it } from 'vitest';
import {
  COOKIE_WATCH_EXEMPT,
  decideMigrationBlock,
  decideRole,
  decideToken,
  EXPORT_USER_PATH,
  HOME_PATH,
  shouldLogoutOnMissingCookie,
} from './guard-decision';

const now = 1_700_000_000_000;
const exp = (seconds: number): number => now / 1000 + seconds;

describe('navigation guard decisions', () => {
  it('sends a role outside the route roles to the desktops page', () => {
    expect(decideRole('user', ['admin', 'manager', 'advanced'])).toBe(HOME_PATH);
    expect(decideRole('advanced', ['admin', 'manager', 'advanced'])).toBeNull();
    expect(decideRole(null, ['admin'])).toBe(HOME_PATH);
    expect(decideRole('user', null)).toBeNull();
  });

  it('goes to login without a token', () => {
    expect(decideToken(null, false, '/desktops', now)).toEqual({ kind: 'login' });
  });

  it.each([
    ['register', '/register'],
    ['category-select', '/login'],
    ['disclaimer-acknowledgement-required', '/disclaimer'],
    ['email-verification-required', '/verify-email/request'],
    ['email-verification', '/verify-email'],
    ['password-reset-required', '/reset-password'],
    ['password-reset', '/reset-password'],
  ] as const)('sends a %s token from a protected page to %s', (type, page) => {
    expect(decideToken({ type, exp: exp(600) }, true, '/desktops', now)).toEqual({
      kind: 'redirect',
      to: page,
    });
    // On its own page the token is at home.
    expect(decideToken({ type, exp: exp(600) }, true, page, now)).toEqual({ kind: 'ok' });
  });

  it('keeps a login token (with or without its type claim) where it is', () => {
    expect(decideToken({ exp: exp(120) }, true, '/desktops', now)).toEqual({ kind: 'ok' });
    expect(decideToken({ type: 'login', exp: exp(120) }, true, '/templates', now)).toEqual({
      kind: 'ok',
    });
  });

  it('renews a login token within 30 s of exp', () => {
    expect(decideToken({ exp: exp(20) }, true, '/desktops', now)).toEqual({ kind: 'renew' });
    expect(decideToken({ exp: exp(120) }, true, '/desktops', now)).toEqual({ kind: 'ok' });
  });

  it('logs out on a missing cookie except on the login and account pages', () => {
    expect(shouldLogoutOnMissingCookie(false, '/desktops')).toBe(true);
    expect(shouldLogoutOnMissingCookie(false, '/export-user')).toBe(true);
    for (const page of [
      '/login',
      '/signup',
      '/register',
      '/forgot-password',
      '/reset-password',
      '/verify-email',
      '/verify-email/request',
      '/disclaimer',
    ]) {
      expect(COOKIE_WATCH_EXEMPT).toContain(page);
      expect(shouldLogoutOnMissingCookie(false, page), page).toBe(false);
    }
    expect(shouldLogoutOnMissingCookie(true, '/desktops')).toBe(false);
  });

  it('keeps an account blocked for a migration on the export page', () => {
    expect(EXPORT_USER_PATH).toBe('/export-user');
    const blocked = { migrations_block: true };
    expect(decideMigrationBlock(blocked, '/desktops')).toBe('/export-user');
    expect(decideMigrationBlock(blocked, '/profile')).toBe('/export-user');
    expect(decideMigrationBlock(blocked, '/export-user')).toBeNull();
    expect(decideMigrationBlock({ migrations_block: false }, '/desktops')).toBeNull();
    expect(decideMigrationBlock(null, '/desktops')).toBeNull();
  });
});
