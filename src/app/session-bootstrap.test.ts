import { afterEach, describe, expect, it, vi } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import { notifications } from '@mantine/notifications';
import { createLiveProvider } from '@/providers/live-provider';
import { request } from '@/providers/http-client';
import { getRoleVisibility } from '@/lib/role-visibility';
import { getSessionState, resetSessionState, subscribeSessionState } from '@/lib/session-state';
import { bootstrapSession, setBootstrapLiveProvider } from './session-bootstrap';

const triggered = vi.fn<(trigger: string, displays: readonly string[]) => Promise<void>>(
  async () => undefined,
);
vi.mock('@/features/notifications/user-notifications', () => ({
  clearUserNotifications: () => undefined,
  loadStatusBar: async () => undefined,
  showTriggeredNotifications: (trigger: string, displays: readonly string[]) =>
    triggered(trigger, displays),
}));

// The socket's own behaviour has its tests (src/lib/socket*.test.ts); here it only must not dial out.
const socket = vi.hoisted(() => ({ opened: 0 }));
vi.mock('@/lib/socket', () => ({
  openSocket: () => void (socket.opened += 1),
  closeSocket: () => undefined,
}));

afterEach(() => {
  resetSessionState();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  triggered.mockClear();
});

const ok = () =>
  new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } });

describe('the session wiring', () => {
  it('shows the start notifications after a desktop started, and not after a stop', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async () => ok()),
    );
    await request('desktops.action', { params: { id: 'd1', action: 'stop' } });
    expect(triggered).not.toHaveBeenCalled();
    await request('desktops.action', { params: { id: 'd1', action: 'start' } });
    expect(triggered).toHaveBeenCalledWith('start_desktop', ['modal']);
  });

  it('turns msg events into toasts', () => {
    const show = vi.spyOn(notifications, 'show').mockReturnValue('id');
    const live = createLiveProvider(new QueryClient(), { batch: 'sync' });
    setBootstrapLiveProvider(live);
    live.dispatch('msg', { type: 'danger', msg_code: 'desktop-time-limit', params: null });
    expect(show).toHaveBeenCalledWith(expect.objectContaining({ color: 'red', autoClose: 5000 }));
  });
});

describe('the session bootstrap', () => {
  it('draws the shell once, with the user, the config and the role visibility all read', async () => {
    const json = (body: unknown) =>
      new Response(JSON.stringify(body), {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
      });
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async (input) => {
        const path = new URL(String(input), 'http://portal.test').pathname;
        // the config answers last: the user alone must not be drawn before it
        if (path.endsWith('/user/config')) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          return json({ show_bookings_button: true });
        }
        if (path.endsWith('/user/role-visibility')) return json({ hidden: {} });
        if (path.endsWith('/user')) return json({ id: 'u1', role_id: 'user', name: 'User' });
        return json({});
      }),
    );
    const seen: string[] = [];
    const stop = subscribeSessionState(() => {
      const { user, config } = getSessionState();
      seen.push(
        `user ${user ? 'yes' : 'no'}, config ${config ? 'yes' : 'no'}, visibility ${getRoleVisibility() ? 'yes' : 'no'}`,
      );
    });
    await bootstrapSession();
    stop();
    expect(seen[0]).toBe('user yes, config yes, visibility yes');
  });

  it('on the home page, draws the shell once the first records asked ahead have come', async () => {
    // A fresh bootstrap (it runs once per session) and the prefetches of the same HTTP client.
    vi.resetModules();
    const http = await import('@/providers/http-client');
    const bootstrap = await import('./session-bootstrap');
    const state = await import('@/lib/session-state');
    const { resourceOf } = await import('@/generated/resources');
    const { HOME_PATH } = await import('@/lib/paths');
    const { previewQuery } = await import('@/lib/list-preview');
    const home = (await import('@/generated/resources')).resourceList.find(
      (resource) => resource.list === HOME_PATH,
    );
    const count = home && resourceOf(home.name)?.meta.list?.preview;
    if (!home || !count) throw new Error('the home list declares no preview');
    const json = (body: unknown) =>
      new Response(JSON.stringify(body), {
        status: 200,
        headers: { 'Content-Type': 'application/json' },
      });
    let previewAnswered = false;
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async (input) => {
        const url = new URL(String(input), 'http://portal.test');
        // the first records answer after the session's reads
        if (url.searchParams.has('limit')) {
          await new Promise((resolve) => setTimeout(resolve, 30));
          previewAnswered = true;
          return json([{ id: 'd1', name: 'First' }]);
        }
        if (url.pathname.endsWith('/user/config')) return json({});
        if (url.pathname.endsWith('/user/role-visibility')) return json({ hidden: {} });
        if (url.pathname.endsWith('/user')) return json({ id: 'u1', role_id: 'user', name: 'U' });
        return json({});
      }),
    );
    const before = window.location.pathname;
    window.history.replaceState(null, '', HOME_PATH);
    try {
      const call = { params: {}, query: previewQuery(count) };
      http.prefetchOperation(`${home.name}.list`, call);
      const seen: boolean[] = [];
      const stop = state.subscribeSessionState(() => seen.push(previewAnswered));
      await bootstrap.bootstrapSession();
      stop();
      expect(seen[0]).toBe(true);
      // and the list page's first render takes it
      expect(http.takeSettledPrefetch(`${home.name}.list`, call)).toEqual({
        data: [{ id: 'd1', name: 'First' }],
      });
    } finally {
      window.history.replaceState(null, '', before);
    }
  });

  it('opens the socket before the first reads answer, unless the token is due for renewal', async () => {
    vi.resetModules();
    const bootstrap = await import('./session-bootstrap');
    const token = await import('@/lib/token');
    const enc = (value: unknown): string =>
      btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
    const jwt = (exp: number) =>
      `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc({ kid: 'isardvdi', exp, data: { role_id: 'user' } })}.sig`;
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async (input) => {
        await answered;
        const path = new URL(String(input), 'http://portal.test').pathname;
        const body = path.endsWith('/user') ? { id: 'u1', role_id: 'user', name: 'U' } : {};
        return new Response(JSON.stringify(body), {
          status: 200,
          headers: { 'Content-Type': 'application/json' },
        });
      }),
    );
    token.setToken(jwt(Math.floor(Date.now() / 1000) + 3600));
    try {
      socket.opened = 0;
      const done = bootstrap.bootstrapSession();
      // a change made as the first screen appears must reach it as an event
      expect(socket.opened).toBe(1);
      answer();
      await done;
      // a login token 10 s from its end is renewed by the first reads before any handshake
      vi.resetModules();
      const again = await import('./session-bootstrap');
      (await import('@/lib/token')).setToken(jwt(Math.floor(Date.now() / 1000) + 10));
      socket.opened = 0;
      // (the renewal fails here: the fetch double answers no token; the reads' warnings are not the test's)
      vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      const renewing = again.bootstrapSession().catch(() => undefined);
      expect(socket.opened).toBe(0);
      await renewing;
    } finally {
      token.clearToken();
    }
  });
});
