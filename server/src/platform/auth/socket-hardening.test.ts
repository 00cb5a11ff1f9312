/**
 * socket.io hardening against a real PostgreSQL: the handshake's Origin must be the portal's own
 * (a missing one is refused), a client emitting more than 20 events a second is disconnected and
 * what clients send changes nothing, and a socket goes within 1 s of logout or of its user being
 * disabled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import { eq } from 'drizzle-orm';
import { users } from '../db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { sleep } from '../../../test/support/wait.ts';

let t: TestApp;
let base: string;
let port: number;
const open: Socket[] = [];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = address;
  port = Number(new URL(address).port);
});
afterAll(async () => {
  for (const s of open) s.close();
  await t.close();
});

/** A socket.io client sending `origin` as its Origin header (none when null). */
function client(jwt: string, origin: string | null = base): Socket {
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 3000,
    auth: { jwt },
    ...(origin === null ? {} : { extraHeaders: { origin } }),
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
  new Promise<{ reason: string; at: number }>((resolve) =>
    s.once('disconnect', (reason) => resolve({ reason, at: Date.now() })),
  );

describe('socket.io origin', () => {
  it("refuses a handshake without Origin, with a null one or another scheme, host or port; accepts the portal's own", async () => {
    const token = await login(t.app, 'user');
    for (const origin of [
      null,
      'null',
      `https://127.0.0.1:${port}`,
      `http://127.0.0.1:${port + 1}`,
      'http://evil.example',
    ]) {
      expect(await outcome(client(token, origin)), String(origin)).toMatch(/^error:/);
    }
    expect(await outcome(client(token, `http://127.0.0.1:${port}`))).toBe('connected');
    expect(await outcome(client(token, `http://localhost:${port}`))).toBe('connected');
  });
});

describe('socket.io client events', () => {
  it('disconnects a client that emits more than 20 events in a second', async () => {
    const token = await login(t.app, 'user');
    const s = client(token);
    expect(await outcome(s)).toBe('connected');
    const gone = disconnected(s);
    const started = Date.now();
    for (let i = 0; i < 1000; i++) s.emit('flood', i);
    const result = await Promise.race([gone, sleep(3000).then(() => undefined)]);
    expect(result?.reason).toBe('io server disconnect');
    expect((result?.at ?? Infinity) - started).toBeLessThan(1000);
  });

  it('keeps a client that stays at 20 events a second, ignores unknown events and lets none change its rooms', async () => {
    const token = await login(t.app, 'user');
    const s = client(token);
    expect(await outcome(s)).toBe('connected');
    let lost = false;
    s.on('disconnect', () => (lost = true));
    for (let round = 0; round < 2; round++) {
      // a burst of exactly 20, then the next second
      for (let i = 0; i < 20; i++) s.emit('join', { room: 'admins' });
      await sleep(1050);
    }
    for (const name of ['subscribe', 'desktop_update', 'user:someone'])
      s.emit(name, { room: 'admins' });
    await sleep(300);
    expect(lost).toBe(false);
    expect(s.connected).toBe(true);
    const sessionId = String(decodePayload(token).session_id);
    const server = [...t.app.io.sockets.sockets.values()].find(
      (x) => x.data.sessionId === sessionId,
    );
    expect(server).toBeDefined();
    // Its own user room and its role's room (what role visibility hides reaches it there).
    expect([...(server?.rooms ?? [])].filter((r) => r !== server?.id)).toEqual([
      `user:${String(decodePayload(token).sub)}`,
      'role:user',
    ]);
  });
});

describe('socket.io revocation', () => {
  it('disconnects within 1 s of logout and of the user being disabled', async () => {
    const timings: Record<string, number> = {};
    const token = await login(t.app, 'user');
    const s = client(token);
    expect(await outcome(s)).toBe('connected');
    const gone = disconnected(s);
    let started = Date.now();
    await injectWithToken(t.app, token, { method: 'POST', url: '/authentication/logout' });
    const first = await gone;
    expect(first.reason).toBe('io server disconnect');
    timings.logout = first.at - started;

    const row = (await t.app.db.select().from(users).where(eq(users.uid, 'user')))[0];
    if (!row) throw new Error('no user');
    const token2 = await login(t.app, 'user');
    const s2 = client(token2);
    expect(await outcome(s2)).toBe('connected');
    const gone2 = disconnected(s2);
    started = Date.now();
    await t.app.users.update(row.id, { active: false });
    const second = await gone2;
    await t.app.users.update(row.id, { active: true });
    expect(second.reason).toBe('io server disconnect');
    timings['user disabled'] = second.at - started;

    console.info('socket disconnect after revocation (ms):', JSON.stringify(timings));
    for (const [name, ms] of Object.entries(timings)) expect(ms, name).toBeLessThan(1000);
  });
});
