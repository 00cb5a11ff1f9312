// @vitest-environment node
/**
 * The socket's reconnect policy against a real socket.io server: a network drop or a server
 * restart keeps the session (the client reconnects, re-authenticates and resyncs); only the
 * server's auth rejection, or a session check that the server answers "no longer valid", ends it.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AUTH_REJECTED, closeSocket, openSocket, SOCKET_PATH } from './socket';

interface Portal {
  port: number;
  close: () => Promise<void>;
  /** Tokens the handshake saw, in order. */
  handshakes: unknown[];
}

/** A socket.io server on `port` (0: any) that accepts only the token `valid`. */
async function startPortal(port = 0): Promise<Portal> {
  const http: HttpServer = createServer();
  const io = new Server(http, { path: SOCKET_PATH, transports: ['websocket'] });
  const handshakes: unknown[] = [];
  io.use((socket, next) => {
    const jwt = (socket.handshake.auth as { jwt?: unknown }).jwt;
    handshakes.push(jwt);
    next(jwt === 'valid' ? undefined : new Error(AUTH_REJECTED));
  });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    handshakes,
    close: () =>
      new Promise<void>((resolve) => {
        // Like a process that stops: the connections drop, nobody says goodbye.
        void io.close(() => resolve());
      }),
  };
}

const portals: Portal[] = [];
afterEach(async () => {
  closeSocket();
  await Promise.all(portals.splice(0).map((portal) => portal.close().catch(() => undefined)));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('socket reconnect policy', () => {
  it('a server gone for a second is reconnected to, re-authenticated and resynced, and the session stays', async () => {
    const first = await startPortal();
    portals.push(first);
    const onConnect = vi.fn();
    const onFatal = vi.fn();
    const checkSession = vi.fn(() => Promise.resolve(true));
    openSocket({
      url: `http://127.0.0.1:${first.port}`,
      getToken: () => 'valid',
      onEvent: vi.fn(),
      onConnect,
      onFatal,
      checkSession,
    });
    await vi.waitFor(() => expect(onConnect).toHaveBeenCalledTimes(1), { timeout: 5000 });

    // Stopped: the next reconnect attempts fail with transport errors.
    await first.close();
    portals.splice(0);
    await sleep(1000);
    const second = await startPortal(first.port);
    portals.push(second);

    await vi.waitFor(() => expect(onConnect).toHaveBeenCalledTimes(2), { timeout: 10_000 });
    expect(second.handshakes).toContain('valid');
    expect(onFatal).not.toHaveBeenCalled();
  });

  it('a transport error while the server says the session is over ends the session', async () => {
    const portal = await startPortal();
    portals.push(portal);
    const onConnect = vi.fn();
    const onFatal = vi.fn();
    openSocket({
      url: `http://127.0.0.1:${portal.port}`,
      getToken: () => 'valid',
      onEvent: vi.fn(),
      onConnect,
      onFatal,
      checkSession: () => Promise.resolve(false),
    });
    await vi.waitFor(() => expect(onConnect).toHaveBeenCalledTimes(1), { timeout: 5000 });
    await portal.close();
    portals.splice(0);
    await vi.waitFor(() => expect(onFatal).toHaveBeenCalledTimes(1), { timeout: 10_000 });
  });

  it('a handshake the server rejects for auth ends the session', async () => {
    const portal = await startPortal();
    portals.push(portal);
    const onFatal = vi.fn();
    const checkSession = vi.fn(() => Promise.resolve(true));
    openSocket({
      url: `http://127.0.0.1:${portal.port}`,
      getToken: () => 'revoked',
      onEvent: vi.fn(),
      onConnect: vi.fn(),
      onFatal,
      checkSession,
    });
    // with the token the refused handshake carried: the session it ends
    await vi.waitFor(() => expect(onFatal).toHaveBeenCalledWith(AUTH_REJECTED, 'revoked'), {
      timeout: 5000,
    });
    expect(checkSession).not.toHaveBeenCalled();
  });
});
