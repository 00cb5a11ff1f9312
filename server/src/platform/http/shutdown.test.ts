/**
 * A portal that stops (SIGTERM, a restart, a deploy) ends its live sockets first, so the HTTP
 * server's close does not wait for them (it waited the whole 25 s shutdown limit with any socket
 * open), and it ends them at the transport, so clients reconnect on their own: to this portal once
 * it is back, or to another node.
 */
import { describe, expect, it } from 'vitest';
import { io as connect } from 'socket.io-client';
import { buildTestApp, createTestDatabase, login } from '../../../test/support/helper.ts';

describe('shutdown with open sockets', () => {
  it('closes the app with a socket open, and the client sees a transport close it reconnects after', async () => {
    const t = await buildTestApp(await createTestDatabase());
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const token = await login(t.app, 'user');
    const socket = connect(base, {
      path: '/api/v3/socket.io',
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      extraHeaders: { origin: base },
      auth: { jwt: token },
    });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
      const reason = new Promise<string>((resolve) => socket.once('disconnect', resolve));
      await t.close();
      // "io server disconnect" would tell the client not to reconnect.
      expect(await reason).toBe('transport close');
    } finally {
      socket.close();
    }
  });
});
