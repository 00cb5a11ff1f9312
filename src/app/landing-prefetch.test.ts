import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HOME_PATH } from '@/lib/paths';
import { clearToken, setToken } from '@/lib/token';
import { pendingCount } from '@/lib/pending';
import { clearPrefetched, prefetchOperation, requestOperation } from '@/providers/http-client';
import {
  dropLandingAnswersOnConnect,
  LANDING_PREVIEW_WAIT_MS,
  landingPreviewSettled,
  prefetchLanding,
} from './landing-prefetch';

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}

const inAnHour = (): number => Math.floor(Date.now() / 1000) + 3600;
const fetchMock = vi.fn<typeof fetch>();
const paths = (): string[] =>
  fetchMock.mock.calls.map(([url]) => {
    const { pathname, search } = new URL(String(url), 'http://portal.test');
    return pathname + search;
  });

beforeEach(() => {
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(() =>
    Promise.resolve(
      new Response(JSON.stringify({ id: 'u1' }), {
        headers: { 'Content-Type': 'application/json' },
      }),
    ),
  );
});
afterEach(() => {
  clearPrefetched();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

describe('the landing reads after login', () => {
  it('sends the bootstrap reads and the home list’s first records together, and the later calls take them', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: inAnHour(), data: { role_id: 'user' } }));
    prefetchLanding(HOME_PATH);
    prefetchLanding(HOME_PATH); // the entry after the login asks again: nothing more is sent
    // A token far from its expiry needs no renewal: the reads leave in this very task. Of the
    // home list only its first records (its x-ui.list.preview): the whole list read ahead would
    // be read again after the socket's connect anyway.
    expect(paths()).toEqual([
      '/api/v3/user',
      '/api/v3/user/role-visibility',
      '/api/v3/user/config',
      '/api/v3/user/desktops?limit=24',
    ]);
    expect(await requestOperation('session.user')).toEqual({ id: 'u1' });
    expect(await requestOperation('desktops.list', { params: {}, query: { limit: 24 } })).toEqual({
      id: 'u1',
    });
    expect(fetchMock).toHaveBeenCalledTimes(4);
    // The application's entry asks ahead again after the bootstrap took the user: nothing is sent.
    prefetchLanding(HOME_PATH);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fetchMock).toHaveBeenCalledTimes(4);
    // Taken once: the next call asks the server again.
    await requestOperation('session.user');
    expect(fetchMock).toHaveBeenCalledTimes(5);
  });

  it('leaves the home list out elsewhere and does nothing for another token or none', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: inAnHour(), data: { role_id: 'user' } }));
    prefetchLanding('/templates');
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(3));
    expect(paths()).not.toContain('/api/v3/user/desktops');
    fetchMock.mockClear();
    setToken(jwt({ kid: 'isardvdi', type: 'register', exp: inAnHour() }));
    prefetchLanding(HOME_PATH);
    clearToken();
    prefetchLanding(HOME_PATH);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('never hands an answer asked in one session to another', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: inAnHour(), session_id: 'a' }));
    prefetchLanding(HOME_PATH);
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(4));
    setToken(jwt({ kid: 'isardvdi', exp: inAnHour(), session_id: 'b' }));
    await requestOperation('session.user');
    expect(fetchMock).toHaveBeenCalledTimes(5);
  });
});

describe('an answer asked ahead and taken', () => {
  it('counts as a request in flight until it comes (submit buttons wait), not after', async () => {
    let answer: (response: Response) => void = () => undefined;
    fetchMock.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));
    prefetchOperation('session.categories');
    expect(pendingCount()).toBe(0); // asked ahead in the background
    const taken = requestOperation('session.categories');
    expect(pendingCount()).toBe(1);
    answer(
      new Response(JSON.stringify([{ id: 'default' }]), {
        headers: { 'Content-Type': 'application/json' },
      }),
    );
    expect(await taken).toEqual([{ id: 'default' }]);
    expect(pendingCount()).toBe(0);
    expect(fetchMock).toHaveBeenCalledTimes(1);

    // come before it is taken: nothing is in flight
    prefetchOperation('session.providers');
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(2));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const early = requestOperation('session.providers');
    expect(pendingCount()).toBe(0);
    expect(await early).toEqual({ id: 'u1' });
  });
});

describe('the wait for the home list’s first records', () => {
  it('ends when they come, or after its limit when they do not', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: inAnHour(), data: { role_id: 'user' } }));
    vi.useFakeTimers();
    try {
      fetchMock.mockImplementation(() => new Promise<Response>(() => undefined));
      prefetchLanding(HOME_PATH);
      let done = false;
      void landingPreviewSettled(HOME_PATH).then(() => (done = true));
      await vi.advanceTimersByTimeAsync(LANDING_PREVIEW_WAIT_MS - 1);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(done).toBe(true);
      // another page waits for nothing
      let elsewhere = false;
      void landingPreviewSettled('/templates').then(() => (elsewhere = true));
      await Promise.resolve();
      expect(elsewhere).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('the socket’s connect', () => {
  it('leaves the home list’s first records to the page and has the other answers asked again', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: inAnHour(), data: { role_id: 'user' } }));
    prefetchLanding(HOME_PATH);
    expect(fetchMock).toHaveBeenCalledTimes(4);
    dropLandingAnswersOnConnect();
    // the first records still come from the read asked ahead
    await requestOperation('desktops.list', { params: {}, query: { limit: 24 } });
    expect(fetchMock).toHaveBeenCalledTimes(4);
    // an answer that may predate an event the socket now carries is asked again
    await requestOperation('config.show');
    expect(paths().slice(4)).toEqual(['/api/v3/user/config']);
    // and asking ahead again in the same session still sends nothing
    prefetchLanding(HOME_PATH);
    expect(fetchMock).toHaveBeenCalledTimes(5);
  });
});
