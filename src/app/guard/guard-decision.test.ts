import { describe, expect, it } from 'vitest';
import { decideRole, decideToken, HOME_PATH, shouldLogoutOnMissingCookie } from './guard-decision';

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

  it('forces the pages of special token types', () => {
    expect(decideToken({ type: 'register' }, true, '/desktops', now)).toEqual({
      kind: 'redirect',
      to: '/register',
    });
    expect(decideToken({ type: 'category-select' }, true, '/desktops', now)).toEqual({
      kind: 'redirect',
      to: '/login',
    });
    expect(
      decideToken({ type: 'disclaimer-acknowledgement-required' }, true, '/desktops', now),
    ).toEqual({ kind: 'redirect', to: '/disclaimer' });
    expect(decideToken({ type: 'email-verification-required' }, true, '/desktops', now)).toEqual({
      kind: 'redirect',
      to: '/verify-email',
    });
    expect(decideToken({ type: 'password-reset' }, true, '/reset-password', now)).toEqual({
      kind: 'ok',
    });
  });

  it('renews a login token within 30 s of exp', () => {
    expect(decideToken({ exp: exp(20) }, true, '/desktops', now)).toEqual({ kind: 'renew' });
    expect(decideToken({ exp: exp(120) }, true, '/desktops', now)).toEqual({ kind: 'ok' });
  });

  it('logs out on a missing cookie except on the exempt pages', () => {
    expect(shouldLogoutOnMissingCookie(false, '/desktops')).toBe(true);
    expect(shouldLogoutOnMissingCookie(false, '/reset-password')).toBe(false);
    expect(shouldLogoutOnMissingCookie(true, '/desktops')).toBe(false);
  });
});
