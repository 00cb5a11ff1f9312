/**
 * One logout per session. When the socket has a transport error and the session check then answers
 * 401 (the session expired or was revoked), every signal of that end (the check's 401 through the
 * HTTP client, the socket's end of session, refine's error hook, late reads answered 401, the
 * socket's next handshake refused) leads to one `/logout` call, one teardown and one redirect.
 */
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { setNavigator } from '@/lib/navigation';
import { updateSessionState } from '@/lib/session-state';
import { clearToken, getToken, setToken } from '@/lib/token';
import type { SessionUser } from '@/generated/types';

type Auth = (cb: (data: object) => void) => void;

const fake = vi.hoisted(() => ({
  socket: null as EventEmitter | null,
  /** Runs the handshake's auth callback, as socket.io does on each (re)connect. */
  handshake: (): void => undefined,
}));

vi.mock('socket.io-client', () => ({
  io: (options: { auth: Auth }) => {
    const emitter = new EventEmitter() as EventEmitter & { disconnect: () => void };
    emitter.disconnect = () => undefined;
    fake.socket = emitter;
    fake.handshake = () => options.auth(() => undefined);
    return emitter;
  },
}));

const { AUTH_REJECTED, closeSocket, openSocket } = await import('@/lib/socket');
const { configureHttpClient, isApiError, request } = await import('./http-client');
const { authProvider, logout, onLogout } = await import('./auth-provider');

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}

const loginToken = (session: string): string =>
  jwt({
    kid: 'isardvdi',
    session_id: session,
    exp: Math.floor(Date.now() / 1000) + 3600,
    data: { user_id: 'u1', role_id: 'user', category_id: 'default' },
  });

const expired = (): Response =>
  new Response(
    JSON.stringify({
      error: 'unauthorized',
      description: 'Session expired',
      description_code: 'invalid_session',
      params: null,
    }),
    { status: 401, headers: { 'Content-Type': 'application/json' } },
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let logoutCalls: string[];
let navigations: string[];
let teardowns: number;
let undo: (() => void)[];

/**
 * The session as the SPA holds it after login, and a server that says it has ended. Returns the
 * session's token.
 */
function sessionThatEnded(session: string): string {
  const token = loginToken(session);
  setToken(token);
  updateSessionState({ user: { id: 'u1', role_id: 'user', name: 'User' } as SessionUser });
  vi.stubGlobal(
    'fetch',
    vi.fn<typeof fetch>(async (input, init) => {
      const url = new URL(String(input), 'http://portal.test');
      if (url.pathname.endsWith('/logout')) {
        logoutCalls.push(new Headers(init?.headers).get('Authorization') ?? '');
        await sleep(20);
        return new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } });
      }
      await sleep(5);
      return expired();
    }),
  );
  return token;
}

/** The socket wired as the session bootstrap wires it. */
function openSessionSocket(): void {
  openSocket({
    getToken: () => 'jwt',
    onEvent: () => undefined,
    onConnect: () => undefined,
    onFatal: (_message, token) => void logout(token),
    checkSession: () =>
      request('session.user', { background: true }).then(
        () => true,
        (error: unknown) => !(isApiError(error) && error.statusCode === 401),
      ),
  });
}

/** Refine's reaction to a failed read: its error hook, and a logout when the hook asks for one. */
async function refineOnError(error: unknown): Promise<void> {
  const answer = await authProvider.onError?.(error);
  if (answer?.logout) await authProvider.logout?.({});
  if (answer?.redirectTo) navigations.push(answer.redirectTo);
}

beforeEach(() => {
  logoutCalls = [];
  navigations = [];
  teardowns = 0;
  // As the app wires it (src/app/root.tsx).
  const previous = configureHttpClient({
    onUnauthorized: (_error, token) => void logout(token),
  });
  undo = [
    () => configureHttpClient(previous),
    setNavigator((path) => navigations.push(path)),
    onLogout(() => {
      teardowns += 1;
    }),
  ];
});

afterEach(() => {
  for (const step of undo) step();
  closeSocket();
  clearToken();
  vi.unstubAllGlobals();
});

describe('logout after a transport error followed by a 401', () => {
  it('calls /logout once and redirects once, whatever reports the end and when', async () => {
    const token = sessionThatEnded('s1');
    openSessionSocket();

    // The network drops; the session check that follows is answered 401.
    fake.socket?.emit('connect_error', new Error('websocket error'));
    // Meanwhile the resync's reads fail the same way, through refine too.
    const read = request('desktops.list').catch((error: unknown) => refineOnError(error));
    await vi.waitFor(() => expect(navigations.length).toBeGreaterThan(0), { timeout: 5000 });
    await read;

    // Late signals of the same end: another read's 401, the next handshake refused.
    await request('desktops.list').catch((error: unknown) => refineOnError(error));
    fake.socket?.emit('connect_error', new Error(AUTH_REJECTED));
    await sleep(100);

    expect(logoutCalls).toEqual([`Bearer ${token}`]);
    expect(navigations).toEqual(['/login']);
    expect(teardowns).toBe(1);
  });

  it('ends the next session again after a new login', async () => {
    sessionThatEnded('s2');
    await Promise.all([logout(), logout()]);
    sessionThatEnded('s3');
    await logout();
    expect(logoutCalls).toHaveLength(2);
    expect(navigations).toEqual(['/login', '/login']);
    expect(teardowns).toBe(2);
  });
});

/** Another sign-in stores its token (another tab, or a test setting the next user's cookie). */
function anotherSignIn(session: string): string {
  const next = loginToken(session);
  setToken(next);
  return next;
}

/** Nothing logged out or navigated, and the other sign-in's token is still stored. */
async function expectNothingEnded(next: string): Promise<void> {
  await sleep(50);
  expect(logoutCalls).toEqual([]);
  expect(navigations).toEqual([]);
  expect(getToken()).toBe(next);
}

describe('a 401 about a session this page no longer holds', () => {
  it('ends nothing when another sign-in stored its token while the refused request was out', async () => {
    sessionThatEnded('s4');
    const read = request('desktops.list');
    // Another tab signs in (or a test sets the next user's cookie) before the answer arrives.
    const next = anotherSignIn('s5');
    await expect(read).rejects.toMatchObject({ statusCode: 401 });
    await expectNothingEnded(next);
  });

  it("ends nothing when the socket's refused handshake carried the session replaced since", async () => {
    sessionThatEnded('s7');
    openSocket({
      getToken,
      onEvent: () => undefined,
      onConnect: () => undefined,
      onFatal: (_message, token) => void logout(token),
    });
    fake.handshake();
    // Another tab signs in (or a test sets the next user's cookie) before the refusal arrives.
    const next = anotherSignIn('s8');
    fake.socket?.emit('connect_error', new Error(AUTH_REJECTED));
    await expectNothingEnded(next);
  });

  it('keeps the cookie of a sign-in stored while the logout was out', async () => {
    sessionThatEnded('s9');
    const ending = logout();
    const next = anotherSignIn('s10');
    await ending;
    expect(logoutCalls).toHaveLength(1);
    expect(getToken()).toBe(next);
  });

  it("still ends the page's own session on a 401 of its own token", async () => {
    const token = sessionThatEnded('s6');
    await request('desktops.list').catch(() => undefined);
    await vi.waitFor(() => expect(navigations).toEqual(['/login']));
    expect(logoutCalls).toEqual([`Bearer ${token}`]);
  });
});
