/**
 * Two portal nodes on one PostgreSQL database, in one process: both are in the admins' list of
 * live nodes, and what one node changes reaches the other through PostgreSQL alone (the socket.io
 * adapter and the cluster bus), never through a timer. The sweeps and the session cache are set far beyond the limits checked here, so only a
 * notification can meet them.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer as createTcpServer } from 'node:net';
import { io as connect, type Socket } from 'socket.io-client';
import WebSocket from 'ws';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  loginRequest,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';
import { until } from '../../../test/support/wait.ts';
import type {
  AdminNode,
  Desktop,
  RoleVisibilityEffective,
} from '../../../../src/generated/types.ts';
import { openDatabase } from '../db/client.ts';
import { createWork } from '../jobs/work.ts';
import { registerNode } from '../jobs/node-registry.ts';
import { portalVersion } from '../lib/version.ts';
import { MAX_ATTEMPTS } from '../auth/login-throttle.ts';
import { VNC_WS_PATH } from '../viewers/vnc-proxy.ts';

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
  // A data directory of its own, as on another machine: the token keys are in the database.
  const dataDir = join(folder, 'node-b');
  mkdirSync(dataDir, { recursive: true });
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

describe('the live nodes (GET /admin/nodes)', () => {
  /** A third node's short lease: a node killed leaves the list within it. */
  const LEASE_MS = 1500;
  const quiet = { warn: () => undefined, error: () => undefined };

  it('lists both nodes with what they hold, and a third until it closes or dies, live', async () => {
    const admin = await login(a.app, 'admin');
    // An admin's socket on node B hears of the nodes the leader (node A) sees change.
    const s = client(b, admin);
    await connected(s);
    const heard: { wire: string; node: Partial<AdminNode> & { id: string } }[] = [];
    for (const wire of ['nodes_add', 'nodes_update', 'nodes_delete'])
      s.on(wire, (node: AdminNode) => heard.push({ wire, node }));
    const heardOf = (name: string) => heard.filter((h) => h.node.id === name);
    const hear = (name: string, seen: number) =>
      until(
        async () => heardOf(name),
        (h) => h.length > seen,
        3000,
        10,
      );
    // A beat of the leader that starts now (one in progress may have read the list before).
    const leaderBeat = async () => {
      await a.app.work.beat();
      await a.app.work.beat();
    };
    const list = async () =>
      (
        await injectWithToken(a.app, admin, { method: 'GET', url: '/api/v3/admin/nodes' })
      ).json() as AdminNode[];
    const names = async () => (await list()).map((n) => n.id);
    const nodes = await until(list, (listed) => listed.length === 2);
    expect(nodes.map((n) => [n.id, n.version, n.leader])).toEqual([
      ['node-a', portalVersion, true],
      ['node-b', portalVersion, false],
    ]);
    const now = Date.now() / 1000;
    for (const n of nodes) {
      expect(n.address).toMatch(/:\d+$/);
      expect(n.started_at).toBeLessThanOrEqual(n.beat_at + 1);
      expect(Math.abs(now - n.beat_at)).toBeLessThan(30);
    }
    const manager = await login(b.app, 'manager');
    expect(
      (await injectWithToken(b.app, manager, { method: 'GET', url: '/api/v3/admin/nodes' }))
        .statusCode,
    ).toBe(403);

    // A third node's process (its background work on a pool of its own, as on another machine),
    // running a job and holding a lease.
    const database = await openDatabase({
      databaseUrl: a.config.databaseUrl,
      dataDir: '',
      poolSize: 2,
    });
    const third = (name: string) => {
      const work = createWork(database.query, { nodeName: name, leaseMs: LEASE_MS, log: quiet });
      const node = registerNode(database.query, work, {
        startedAt: new Date(),
        version: 'other-version',
        address: () => `${name}.example:8080`,
        log: quiet,
      });
      return { work, node };
    };
    try {
      const { work: c, node } = third('node-c');
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      c.handle('probe', () => finished);
      await c.start();
      const lease = await c.hold('probe:lease');
      await c.enqueue('probe', 'probe:job');
      await c.beat();
      await leaderBeat();
      // The node's arrival, then what it holds (in the arrival itself when the leader's first look
      // came after the claims).
      const arrived = await until(
        async () => heardOf('node-c'),
        (h) => h.at(-1)?.node.jobs?.length === 1,
        3000,
        10,
      );
      expect(arrived[0]?.wire).toBe('nodes_add');
      expect(arrived.at(-1)?.node).toMatchObject({
        version: 'other-version',
        jobs: ['probe:job'],
        leases: ['probe:lease'],
      });
      expect((await list())[2]).toMatchObject({
        id: 'node-c',
        version: 'other-version',
        address: 'node-c.example:8080',
        leader: false,
        jobs: ['probe:job'],
        leases: ['probe:lease'],
      });
      // Its job ends and its lease goes: the admins hear it at the leader's next beat.
      finish();
      await lease?.release();
      await until(
        () => list(),
        (listed) => listed[2]?.jobs.length === 0,
        3000,
        10,
      );
      let seen = heardOf('node-c').length;
      await leaderBeat();
      expect((await hear('node-c', seen)).slice(seen).map((h) => [h.wire, h.node.jobs])).toEqual([
        ['nodes_update', []],
      ]);
      // Beats that change nothing shown tell nothing: the next thing heard is the departure.
      seen = heardOf('node-c').length;
      for (let i = 0; i < 2; i++) {
        await c.beat();
        await leaderBeat();
        await b.app.work.beat();
      }
      // Closing: gone at once from the list, and from the admins' at the leader's next beat.
      await c.stop();
      await node.remove();
      expect(await names()).toEqual(['node-a', 'node-b']);
      await leaderBeat();
      expect((await hear('node-c', seen)).slice(seen).map((h) => h.wire)).toEqual(['nodes_delete']);

      // Killed: gone once its lease expired.
      const { work: d } = third('node-d');
      await d.start();
      expect(await names()).toEqual(['node-a', 'node-b', 'node-d']);
      await leaderBeat();
      await hear('node-d', 0);
      const killed = Date.now();
      d.halt();
      await until(names, (listed) => listed.length === 2, LEASE_MS * 4, 20);
      expect(Date.now() - killed).toBeLessThan(LEASE_MS * 2);
      // The leader deletes the dead node's row and tells the admins.
      await leaderBeat();
      expect((await hear('node-d', 1)).map((h) => h.wire)).toEqual(['nodes_add', 'nodes_delete']);
      s.close();
    } finally {
      await database.close();
    }
  });
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

  it('verifies on node B a token signed on node A, with data directories of their own', async () => {
    expect(a.config.dataDir).not.toBe(b.config.dataDir);
    expect(existsSync(join(b.config.dataDir, 'keys', 'jwt.key'))).toBe(false);
    const header = (jwt: string) =>
      JSON.parse(Buffer.from(jwt.split('.')[0] ?? '', 'base64url').toString('utf8')) as {
        kid?: string;
      };
    const before = await login(a.app, 'user');
    expect(header(before).kid).toBe('initial');
    const me = (t: TestApp, jwt: string) =>
      injectWithToken(t.app, jwt, { method: 'GET', url: '/api/v3/user' });
    expect((await me(b, before)).statusCode).toBe(200);
    // A new key made on node A: node B signs with it within a second; tokens out stay valid.
    const kid = await a.app.rotateSigningKey();
    expect(header(await login(a.app, 'user')).kid).toBe(kid);
    const onB = await until(
      () => login(b.app, 'user'),
      (jwt) => header(jwt).kid === kid,
      1000,
      10,
    );
    expect((await me(a, onB)).statusCode).toBe(200);
    for (const t of [a, b]) expect((await me(t, before)).statusCode).toBe(200);
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
    const latest = onB.find((d) => d.id === target?.id);
    expect(latest?.version).toBe(first + 2);
    // Emits made together cross in one NOTIFY statement, each of them, identical ones included.
    for (let i = 0; i < 3; i++)
      a.app.events.publish({
        name: 'desktops.updated',
        payload: latest as Desktop,
        ownerId: String(decodePayload(token).sub),
      });
    await until(
      async () => seen.length,
      (n) => n >= 5,
      1000,
      10,
    );
    await a.app.socketsFlushed();
    expect(seen.slice(2).map((d) => d.version)).toEqual([first + 2, first + 2, first + 2]);
  });

  it("closes the user's socket on node B within 1 s of a logout on node A", async () => {
    const token = await login(a.app, 'user');
    const s = client(b, token);
    await connected(s);
    // Node B has the session cached (for a minute, SLOW): only the bus can end it sooner.
    const before = await injectWithToken(b.app, token, { method: 'GET', url: '/api/v3/user' });
    expect(before.statusCode).toBe(200);
    const gone = new Promise<string>((resolve) => s.once('disconnect', (r) => resolve(r)));
    const started = Date.now();
    const out = await injectWithToken(a.app, token, {
      method: 'POST',
      url: '/authentication/logout',
    });
    expect(out.statusCode).toBeLessThan(300);
    expect(await gone).toBe('io server disconnect');
    expect(Date.now() - started).toBeLessThan(1000);
    const after = await injectWithToken(b.app, token, { method: 'GET', url: '/api/v3/user' });
    expect(after.statusCode).toBe(401);
  });

  it("closes the user's VNC console served by node B within 1 s of a logout on node A", async () => {
    // A TCP echo server stands in for the desktop's VNC listener. The reconcilers stop first: a
    // "started" desktop without a QEMU process would otherwise be marked failed under the test.
    await a.app.engine.close();
    await b.app.engine.close();
    const listener = createTcpServer((sock) => sock.pipe(sock));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const addr = listener.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    const token = await login(a.app, 'user');
    const claims = decodePayload(token);
    const target = (
      await injectWithToken(a.app, token, { method: 'GET', url: '/api/v3/user/desktops' })
    ).json<Desktop[]>()[0];
    expect(target).toBeDefined();
    const id = target?.id ?? '';
    await a.app.desktops.update(id, {
      state: 'started',
      runtime: { vncPort: port, spicePort: port },
    });
    const { ticket } = b.app.viewers.tickets.issue({
      userId: String(claims.sub),
      sessionId: String(claims.session_id),
      desktopId: id,
      protocol: 'vnc',
    });
    const base = bases.get(b) ?? '';
    const ws = new WebSocket(`${base.replace('http', 'ws')}${VNC_WS_PATH}?ticket=${ticket}`, {
      headers: { origin: base },
    });
    try {
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      expect(b.app.viewers.vnc.count(id)).toBe(1);
      const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
      const started = Date.now();
      await injectWithToken(a.app, token, { method: 'POST', url: '/authentication/logout' });
      expect(await closed).toBe(1008);
      expect(Date.now() - started).toBeLessThan(1000);
    } finally {
      ws.terminate();
      await a.app.desktops.update(id, { state: 'stopped', runtime: {} });
      await new Promise((resolve) => listener.close(resolve));
    }
  });

  it("closes a disabled user's socket on node B within 1 s", async () => {
    const token = await login(a.app, 'advanced');
    const s = client(b, token);
    await connected(s);
    const user = await a.app.users.findLocal('advanced', 'default');
    expect(user).toBeDefined();
    const gone = new Promise<string>((resolve) => s.once('disconnect', (r) => resolve(r)));
    const started = Date.now();
    await a.app.users.disable(user?.id ?? '');
    expect(await gone).toBe('io server disconnect');
    expect(Date.now() - started).toBeLessThan(1000);
    await a.app.users.update(user?.id ?? '', { active: true });
  });

  it('applies a role-visibility change saved on node A on node B without a restart', async () => {
    const admin = await login(a.app, 'admin');
    const user = await login(b.app, 'user');
    const mine = async () =>
      (
        await injectWithToken(b.app, user, { method: 'GET', url: '/api/v3/user/role-visibility' })
      ).json<RoleVisibilityEffective>();
    expect((await mine()).sets.desktops).toContain('read');
    const s = client(b, user);
    await connected(s);
    const told = new Promise<number>((resolve) =>
      s.once('role_visibility', (p: { version: number }) => resolve(p.version)),
    );
    const config = { roles: { desktops: { read: ['admin', 'manager', 'advanced'] } } };
    const saved = await injectWithToken(a.app, admin, {
      method: 'PUT',
      url: '/api/v3/admin/role-visibility',
      payload: { config },
    });
    expect(saved.statusCode).toBe(200);
    // Node B tells its socket once the config is in force there: what the client reads then is new.
    await told;
    expect(b.app.access.config).toEqual(config);
    expect((await mine()).sets.desktops).not.toContain('read');
    const list = await injectWithToken(b.app, user, {
      method: 'GET',
      url: '/api/v3/user/desktops',
    });
    expect(list.statusCode).toBe(403);
    // The file of the node that saved is written; node B's own file is not touched.
    expect(JSON.parse(readFileSync(join(folder, 'a.json'), 'utf8'))).toEqual(config);
    const reset = await injectWithToken(a.app, admin, {
      method: 'PUT',
      url: '/api/v3/admin/role-visibility',
      payload: { config: {} },
    });
    expect(reset.statusCode).toBe(200);
    await until(
      async () => b.app.access.config,
      (c) => Object.keys(c).length === 0,
      1000,
      10,
    );
  });

  it("boots a node on the running copy, unless the node's file changed after it", async () => {
    const admin = await login(a.app, 'admin');
    const saved = { roles: { desktops: { read: ['admin', 'manager', 'advanced'] } } };
    const put = (config: unknown) =>
      injectWithToken(a.app, admin, {
        method: 'PUT',
        url: '/api/v3/admin/role-visibility',
        payload: { config },
      });
    expect((await put(saved)).statusCode).toBe(200);
    // A node whose file is older than the running copy (not deployed since) takes the copy.
    const stale = { fields: { desktops: { description: ['admin'] } } };
    const oldFile = join(folder, 'c.json');
    writeFileSync(oldFile, JSON.stringify(stale));
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(oldFile, anHourAgo, anHourAgo);
    const c = await buildTestApp(a.config.databaseUrl, { portalConfigPath: oldFile });
    try {
      expect(c.app.access.config).toEqual(saved);
    } finally {
      await c.close();
    }
    // A node whose file changed after it (a change made in git) puts the file in force
    // everywhere.
    const deployed = { actions: { desktops: { delete: ['admin', 'manager'] } } };
    const newFile = join(folder, 'd.json');
    writeFileSync(newFile, JSON.stringify(deployed));
    const d = await buildTestApp(a.config.databaseUrl, { portalConfigPath: newFile });
    try {
      expect(d.app.access.config).toEqual(deployed);
      await until(
        async () => b.app.access.config,
        (c) => 'actions' in c,
        1000,
        10,
      );
      expect(b.app.access.config).toEqual(deployed);
    } finally {
      await d.close();
    }
    expect((await put({})).statusCode).toBe(200);
    await until(
      async () => a.app.access.config,
      (c) => Object.keys(c).length === 0,
      1000,
      10,
    );
  });

  it('applies portal settings saved on node A on node B at once', async () => {
    expect(await b.app.settings.maintenanceFor('default')).toBe(false);
    await a.app.settings.set('maintenance', true);
    await until(
      () => b.app.settings.maintenanceFor('default'),
      (on) => on,
      1000,
      10,
    );
    await a.app.settings.set('maintenance', false);
    await until(
      () => b.app.settings.maintenanceFor('default'),
      (on) => !on,
      1000,
      10,
    );
  });

  it('counts 20 wrong passwords alternating between the nodes as on one node', async () => {
    const wrong = async (t: TestApp, username: string) =>
      (await loginRequest(t.app, username, 'not-the-password')).statusCode;
    // The same 20 attempts on one node, then spread over two, for two accounts of one category.
    const oneNode: number[] = [];
    for (let i = 0; i < 20; i++) oneNode.push(await wrong(a, 'student01'));
    const twoNodes: number[] = [];
    for (let i = 0; i < 20; i++) twoNodes.push(await wrong(i % 2 === 0 ? a : b, 'student02'));
    expect(oneNode).toEqual([
      ...Array<number>(MAX_ATTEMPTS).fill(401),
      ...Array<number>(20 - MAX_ATTEMPTS).fill(429),
    ]);
    expect(twoNodes).toEqual(oneNode);
    // While banned, the right password is refused on either node.
    for (const t of [a, b])
      expect((await loginRequest(t.app, 'student02', TEST_PASSWORD)).statusCode).toBe(429);
  });
});
