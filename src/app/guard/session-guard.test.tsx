/**
 * The guard's renewal of a login token near its end: a renewal refused ends the page's own
 * session, but when another sign-in stored a new session while the renewal was out (another tab,
 * or a test setting the next user's cookie), the guard goes on with that one instead of ending it.
 */
import { cleanup, render } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { MantineProvider } from '@mantine/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearToken, getToken, setToken } from '@/lib/token';

const calls = vi.hoisted(() => ({
  renew: null as null | (() => Promise<void>),
  logout: [] as unknown[],
  bootstrapped: [] as (string | null)[],
}));

vi.mock('@/providers/http-client', async (original) => ({
  ...(await original<typeof import('@/providers/http-client')>()),
  renewToken: () => calls.renew?.() ?? Promise.resolve(),
}));
vi.mock('@/providers/auth-provider', async (original) => ({
  ...(await original<typeof import('@/providers/auth-provider')>()),
  logout: (failed?: string | null) => {
    calls.logout.push(failed);
    return Promise.resolve({ success: true, redirectTo: '/login' });
  },
}));
vi.mock('../session-bootstrap', () => ({
  bootstrapSession: () => {
    calls.bootstrapped.push(getToken());
    return Promise.resolve();
  },
}));

const { SessionGuard } = await import('./session-guard');

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}

/** A login token of `session` ending in `seconds`. */
const loginToken = (session: string, seconds: number): string =>
  jwt({
    kid: 'isardvdi',
    session_id: session,
    exp: Math.floor(Date.now() / 1000) + seconds,
    data: { user_id: 'u1', role_id: 'user', category_id: 'default' },
  });

function renderGuard(): void {
  render(
    <MantineProvider>
      <MemoryRouter initialEntries={['/desktops']}>
        <SessionGuard>
          <p>desktops</p>
        </SessionGuard>
      </MemoryRouter>
    </MantineProvider>,
  );
}

beforeEach(() => {
  calls.logout = [];
  calls.bootstrapped = [];
});

afterEach(() => {
  cleanup();
  clearToken();
});

describe('SessionGuard: a renewal refused', () => {
  it("ends the page's own session, naming its token", async () => {
    const ending = loginToken('s1', 10);
    setToken(ending);
    calls.renew = () => Promise.reject(new Error('refused'));
    renderGuard();
    await vi.waitFor(() => expect(calls.logout).toEqual([ending]));
    expect(calls.bootstrapped).toEqual([]);
  });

  it('goes on with a session another sign-in stored meanwhile, without ending it', async () => {
    setToken(loginToken('s2', 10));
    const next = loginToken('s3', 3600);
    calls.renew = () => {
      setToken(next);
      return Promise.reject(new Error('refused'));
    };
    renderGuard();
    await vi.waitFor(() => expect(calls.bootstrapped).toEqual([next]));
    expect(calls.logout).toEqual([]);
  });
});
