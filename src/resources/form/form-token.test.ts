import { describe, expect, it } from 'vitest';
import { operations } from '@/generated/api';
import { formTokenState, type FormTokenInput } from './form-token';

const now = 1_700_000_000_000;
function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}
const token = (type: string | null, exp = now / 1000 + 600): string =>
  jwt({ kid: 'isardvdi', exp, ...(type ? { type } : { data: { role_id: 'user' } }) });

const input = (overrides: Partial<FormTokenInput>): FormTokenInput => ({
  operation: operations['session.resetPassword'],
  source: 'query',
  queryToken: null,
  storedToken: null,
  pathname: '/reset-password',
  nowMs: now,
  ...overrides,
});

describe('the bearer of a form route', () => {
  it('takes the query token first when the form says so', () => {
    const mailed = token('password-reset');
    const state = formTokenState(input({ queryToken: mailed, storedToken: token(null) }));
    expect(state).toMatchObject({ kind: 'ok', bearer: mailed, fromQuery: true });
  });

  it('takes the stored token without a query token', () => {
    const stored = token('password-reset-required');
    expect(formTokenState(input({ storedToken: stored }))).toMatchObject({
      kind: 'ok',
      bearer: stored,
      fromQuery: false,
    });
  });

  it('ignores the query token of a form that does not take one', () => {
    const stored = token('disclaimer-acknowledgement-required');
    const state = formTokenState(
      input({
        operation: operations['session.acknowledgeDisclaimer'],
        source: undefined,
        queryToken: token('password-reset'),
        storedToken: stored,
        pathname: '/disclaimer',
      }),
    );
    expect(state).toMatchObject({ kind: 'ok', bearer: stored });
  });

  it('sends a login token home where the call refuses it (a password changes in the profile)', () => {
    expect(formTokenState(input({ storedToken: token(null) }))).toMatchObject({
      kind: 'redirect',
      to: '/desktops',
    });
  });

  it('sends a token of another step to its page, a login token home', () => {
    const verify = input({
      operation: operations['session.verifyEmail'],
      pathname: '/verify-email',
    });
    expect(
      formTokenState({ ...verify, storedToken: token('email-verification-required') }),
    ).toEqual({ kind: 'redirect', to: '/verify-email/request' });
    expect(formTokenState({ ...verify, storedToken: token(null) })).toEqual({
      kind: 'redirect',
      to: '/desktops',
    });
  });

  it('has nothing to work with without a token, or with garbage', () => {
    expect(formTokenState(input({}))).toEqual({ kind: 'missing' });
    expect(formTokenState(input({ queryToken: 'not-a-jwt' }))).toEqual({ kind: 'missing' });
  });

  it('reports an expired link', () => {
    expect(formTokenState(input({ queryToken: token('password-reset', now / 1000 - 1) }))).toEqual({
      kind: 'expired',
    });
  });

  it('leaves calls without token types to their default bearer', () => {
    const state = formTokenState(
      input({
        operation: operations['session.signup'],
        source: undefined,
        storedToken: token(null),
        pathname: '/signup',
      }),
    );
    expect(state).toMatchObject({ kind: 'ok', bearer: null });
  });
});
