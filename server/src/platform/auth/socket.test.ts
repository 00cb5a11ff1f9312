import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  signWithWrongKey,
  type TestApp,
} from '../../../test/support/helper.ts';
import pg from 'pg';
import type { Desktop, Message } from '../../../../src/generated/types.ts';
import { sendMessage } from '../events/messages.ts';
import { ADAPTER_APPLICATION_NAME } from '../http/socket-io.ts';
import { sleep, until } from '../../../test/support/wait.ts';

let t: TestApp;
let base: string;
const open: Socket[] = [];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase(), { socketSweepMs: 200 });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(async () => {
  for (const s of open) s.close();
  await t.close();
});

/** A client as a browser on the portal's page connects: with the portal's Origin. */
function client(auth: Record<string, unknown> | undefined, query?: Record<string, string>): Socket {
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 3000,
    extraHeaders: { origin: base },
    ...(auth ? { auth } : {}),
    ...(query ? { query } : {}),
  });
  open.push(s);
  return s;
}

const outcome = (s: Socket) =>
  new Promise<string>((resolve) => {
    s.once('connect', () => resolve('connected'));
    s.once('connect_error', (err) => resolve(`error:${err.message}`));
  });

const disconnected = (s: Socket) =>
  new Promise<string>((resolve) => s.once('disconnect', (reason) => resolve(reason)));

describe('socket.io /api/v3/socket.io', () => {
  it('rejects a handshake without a token, with garbage, a wrong-key token or a special token', async () => {
    const token = await login(t.app, 'user');
    const special = await t.app.tokens.signSpecial('password-reset-required', 'x', 600);
    for (const auth of [
      undefined,
      { jwt: 'garbage' },
      { jwt: await signWithWrongKey(decodePayload(token)) },
      { jwt: special },
    ]) {
      expect(await outcome(client(auth))).toBe('error:Connection rejected by server');
    }
  });

  it('rejects a foreign Origin', async () => {
    const token = await login(t.app, 'user');
    const s = connect(base, {
      path: '/api/v3/socket.io',
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      auth: { jwt: token },
      extraHeaders: { origin: 'https://evil.example' },
    });
    open.push(s);
    expect(await outcome(s)).toMatch(/^error:/);
  });

  it("delivers desktop_update to the owner's room only; a client-named room is ignored", async () => {
    const userToken = await login(t.app, 'user');
    const otherToken = await login(t.app, 'advanced');
    const owner = client({ jwt: userToken });
    // the other user asks for the owner's room in query and auth: ignored
    const other = client(
      { jwt: otherToken, room: `user:${String(decodePayload(userToken).sub)}` },
      { room: `user:${String(decodePayload(userToken).sub)}` },
    );
    expect(await Promise.all([outcome(owner), outcome(other)])).toEqual(['connected', 'connected']);
    const seenByOther: unknown[] = [];
    other.onAny((...args) => seenByOther.push(args));
    const list = (
      await injectWithToken(t.app, userToken, { method: 'GET', url: '/api/v3/user/desktops' })
    ).json() as Desktop[];
    const target = list[0];
    expect(target).toBeDefined();
    const received = new Promise<Desktop>((resolve) =>
      owner.once('desktop_update', (d: Desktop) => resolve(d)),
    );
    await t.app.desktops.update(target?.id ?? '', { state: 'starting' });
    const payload = await received;
    expect(typeof payload).toBe('object');
    expect(payload).toMatchObject({ id: target?.id, state: 'starting' });
    expect(payload.version).toBe((target?.version ?? 0) + 1);
    await sleep(500);
    expect(seenByOther).toEqual([]);
    await t.app.desktops.update(target?.id ?? '', { state: 'stopped' });
  });

  it('disconnects the socket at logout', async () => {
    const token = await login(t.app, 'user');
    const s = client({ jwt: token });
    expect(await outcome(s)).toBe('connected');
    const gone = disconnected(s);
    const started = Date.now();
    await injectWithToken(t.app, token, { method: 'POST', url: '/authentication/logout' });
    expect(await gone).toBe('io server disconnect');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('delivers a message sent just before a logout while the database takes 3 s to send it', async () => {
    const token = await login(t.app, 'user');
    const userId = String(decodePayload(token).sub);
    const s = client({ jwt: token });
    expect(await outcome(s)).toBe('connected');
    const got: string[] = [];
    s.on('msg', (m: Message) => got.push(m.msg_code));
    // A first message opens the adapter's sending connection, beside its listening one.
    sendMessage(t.app, userId, { type: 'info', msg_code: 'first' });
    await until(
      async () => got.length,
      (n) => n === 1,
    );
    const db = new pg.Client({ connectionString: t.config.databaseUrl });
    await db.connect();
    const { rows } = await db.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = $1 AND query NOT LIKE 'LISTEN%'`,
      [ADAPTER_APPLICATION_NAME],
    );
    await db.end();
    expect(rows).toHaveLength(1);
    const pid = rows[0]?.pid ?? 0;
    // The sending connection's server process stops for 3 s: the next NOTIFY waits that long.
    process.kill(pid, 'SIGSTOP');
    const resumed = sleep(3000).then(() => process.kill(pid, 'SIGCONT'));
    try {
      const gone = disconnected(s);
      sendMessage(t.app, userId, { type: 'info', msg_code: 'last' });
      await injectWithToken(t.app, token, { method: 'POST', url: '/authentication/logout' });
      expect(await gone).toBe('io server disconnect');
      expect(got).toEqual(['first', 'last']);
    } finally {
      await resumed;
    }
  });

  it('disconnects within the sweep when another node revokes the session or the renew window passes', async () => {
    const token = await login(t.app, 'user');
    const s = client({ jwt: token });
    expect(await outcome(s)).toBe('connected');
    const gone = disconnected(s);
    await t.app.database.query('UPDATE sessions SET revoked_at = now() WHERE id = $1', [
      decodePayload(token).session_id,
    ]);
    expect(await gone).toBe('io server disconnect');

    const token2 = await login(t.app, 'user');
    const s2 = client({ jwt: token2 });
    expect(await outcome(s2)).toBe('connected');
    const gone2 = disconnected(s2);
    await t.app.database.query(
      "UPDATE sessions SET max_renew_at = now() - interval '1 second' WHERE id = $1",
      [decodePayload(token2).session_id],
    );
    expect(await gone2).toBe('io server disconnect');
    // reconnecting with the same token is refused
    expect(await outcome(client({ jwt: token2 }))).toBe('error:Connection rejected by server');
  });

  it('keeps a socket that connects while a sweep is reading the sessions it checks', async () => {
    const first = await login(t.app, 'user');
    expect(await outcome(client({ jwt: first }))).toBe('connected');
    const sessions = t.app.sessions;
    const original = sessions.connectable.bind(sessions);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reading = (): void => undefined;
    const read = new Promise<void>((resolve) => (reading = resolve));
    let swept = (): void => undefined;
    const done = new Promise<void>((resolve) => (swept = resolve));
    // The next sweep reads the sessions of the sockets open now, then waits here.
    sessions.connectable = async (ids) => {
      reading();
      await held;
      const alive = await original(ids);
      // After the sweep's own loop over the sockets, which runs as soon as it has the answer.
      setImmediate(swept);
      return alive;
    };
    try {
      await read;
      const token = await login(t.app, 'user');
      const late = client({ jwt: token });
      expect(await outcome(late)).toBe('connected');
      release();
      await done;
      const sessionId = decodePayload(token).session_id;
      expect(
        [...t.app.io.sockets.sockets.values()].some((s) => s.data.sessionId === sessionId),
        'the socket that connected during the sweep is still open',
      ).toBe(true);
      expect(late.connected).toBe(true);
    } finally {
      sessions.connectable = original;
      release();
    }
  });

  it('refuses other websocket upgrades that no handler registered', async () => {
    const { WebSocket } = await import('ws');
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v3/vnc/nothing`);
    const code = await new Promise<number | string>((resolve) => {
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('error', (err) => resolve(err.message));
    });
    expect(code).toBe(404);
  });

  it('routes registered upgrade prefixes to their handler', async () => {
    const { WebSocket } = await import('ws');
    t.app.upgrades.register('/api/v3/test-echo', (req, socket, head, wss) => {
      wss.handleUpgrade(req, socket, head, (ws) =>
        ws.on('message', (m) => ws.send(`echo:${String(m)}`)),
      );
    });
    const ws = new WebSocket(`${base.replace('http', 'ws')}/api/v3/test-echo/1`);
    const reply = await new Promise<string>((resolve, reject) => {
      ws.on('open', () => ws.send('hi'));
      ws.on('message', (m) => resolve(String(m)));
      ws.on('error', reject);
    });
    ws.close();
    expect(reply).toBe('echo:hi');
  });
});
