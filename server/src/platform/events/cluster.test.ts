/**
 * Two portal nodes on one PostgreSQL database, in one process: what one node changes reaches the
 * other through PostgreSQL alone (the socket.io adapter and the cluster bus), never through a
 * timer. The sweeps and the session cache are set far beyond the limits checked here, so only a
 * notification can meet them.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { until } from '../../../test/support/wait.ts';
import type { Desktop } from '../../../../src/generated/types.ts';

let a: TestApp;
let b: TestApp;
let folder: string;
const bases = new Map<TestApp, string>();
const open: Socket[] = [];

/** Far beyond the 1 s the cluster promises: a timer cannot pass these tests for the bus. */
const SLOW = { socketSweepMs: 60_000, sessionCacheMs: 60_000 };

beforeAll(async () => {
  const url = await createTestDatabase();
  folder = mkdtempSync(join(tmpdir(), 'vdi-cluster-'));
  // Each node has a config file of its own, as on two machines.
  a = await buildTestApp(url, {
    ...SLOW,
    nodeName: 'node-a',
    portalConfigPath: join(folder, 'a.json'),
  });
  // Every node signs and verifies tokens with the same key (DATA_DIR/keys/jwt.key).
  const dataDir = join(folder, 'node-b');
  mkdirSync(join(dataDir, 'keys'), { recursive: true });
  copyFileSync(join(a.config.dataDir, 'keys', 'jwt.key'), join(dataDir, 'keys', 'jwt.key'));
  b = await buildTestApp(url, {
    ...SLOW,
    nodeName: 'node-b',
    dataDir,
    portalConfigPath: join(folder, 'b.json'),
  });
  for (const t of [a, b]) {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    bases.set(t, `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
  }
  // The socket.io adapters know each other once their heartbeats crossed.
  await until(
    async () => [
      await a.app.io.of('/').adapter.serverCount(),
      await b.app.io.of('/').adapter.serverCount(),
    ],
    (counts) => counts.every((n) => n === 2),
  );
});
afterAll(async () => {
  for (const s of open) s.close();
  await a.close();
  await b.close();
  rmSync(folder, { recursive: true, force: true });
});

function client(node: TestApp, jwt: string): Socket {
  const base = bases.get(node) ?? '';
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 3000,
    extraHeaders: { origin: base },
    auth: { jwt },
  });
  open.push(s);
  return s;
}

const connected = (s: Socket) =>
  new Promise<void>((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('connect_error', reject);
  });

describe('two nodes on one PostgreSQL', () => {
  it('names each node in its health answer', async () => {
    for (const [t, name] of [
      [a, 'node-a'],
      [b, 'node-b'],
    ] as const) {
      const res = await t.app.inject({ method: 'GET', url: '/api/v3/health' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok', database: true, node: name });
    }
  });

  it('delivers an event caused through node A to a socket on node B, versions in order', async () => {
    const token = await login(a.app, 'user');
    const s = client(b, token);
    await connected(s);
    const list = (
      await injectWithToken(a.app, token, { method: 'GET', url: '/api/v3/user/desktops' })
    ).json<Desktop[]>();
    const target = list[0];
    expect(target).toBeDefined();
    const seen: Desktop[] = [];
    s.on('desktop_update', (d: Desktop) => {
      if (d.id === target?.id) seen.push(d);
    });
    const started = Date.now();
    await a.app.desktops.update(target?.id ?? '', { state: 'starting' });
    await a.app.desktops.update(target?.id ?? '', { state: 'stopped' });
    await until(
      async () => seen.length,
      (n) => n === 2,
      1000,
      10,
    );
    expect(Date.now() - started).toBeLessThan(1000);
    const first = target?.version ?? 0;
    expect(seen.map((d) => [d.state, d.version])).toEqual([
      ['starting', first + 1],
      ['stopped', first + 2],
    ]);
    // Node B's list cache follows node A's write.
    const onB = (
      await injectWithToken(b.app, token, { method: 'GET', url: '/api/v3/user/desktops' })
    ).json<Desktop[]>();
    expect(onB.find((d) => d.id === target?.id)?.version).toBe(first + 2);
  });
});
