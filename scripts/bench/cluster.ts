/**
 * Cluster benchmark: `npx tsx scripts/bench/cluster.ts [--clients 1000] [--seconds 1]
 * [--api-seconds 10] [--api-runs 3] [--connections 50] [--cpu-prof <dir>]`.
 *
 * Runs what `npm run cluster -- --nodes 2` runs (scripts/lib/cluster.ts: a private PostgreSQL, two
 * portal nodes of the server bundle, HAProxy in front), then adds `clients` accounts with one
 * desktop each straight into the database.
 *
 * Events across nodes: each account signs in and keeps one socket.io connection (the SPA's
 * settings), half on node 1 and half on node 2. Then every account edits its desktop's description
 * once, through the other node, the edits spread evenly over `seconds`: each edit is a write that
 * publishes `desktop_update` to its owner, which must cross to the owner's node through the
 * PostgreSQL adapter. Prints the latency from each change (the desktop's row written: its
 * `updated_at`, in the database's clock, which is this machine's) to its event at the client, and
 * from each edit's request (which adds the API's own queue: a burst asks for more writes a second
 * than two cores make), the events lost (none may be) and the desktops whose event skipped or
 * repeated a version (the seeded version + 1 is the only right one). Target: change -> event p95
 * ≤ 100 ms, none lost.
 *
 * API through HAProxy: autocannon (in a child process) against GET /api/v3/user/desktops with
 * `user`'s token through HAProxy, `api-runs` times with two nodes, then as many with one (node 2
 * killed, HAProxy's health check has taken it out). Prints req/s, p50, p99 and the load average of
 * each run (the machine may be shared).
 *
 * `--cpu-prof <dir>` starts each node with `--cpu-prof` into that folder: node 1, stopped at the
 * end, writes its profile of the whole run (node 2 is killed, so it writes none).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { io, type Socket } from 'socket.io-client';
import { hashPassword } from '../../server/src/platform/auth/passwords.ts';
import { openDatabase } from '../../server/src/platform/db/client.ts';
import { desktops, type DesktopInsert } from '../../server/src/platform/db/schema.ts';
import { userWrites } from '../../server/src/domains/directory/index.ts';
import {
  DEMO_TEMPLATE_ID,
  demoGuestProperties,
  demoHardware,
} from '../../server/src/seed/index.ts';
import { demoAccount } from '../../server/src/seed/accounts.ts';
import { startCluster } from '../lib/cluster.ts';
import { buildServer, serverBundleStale } from '../lib/build-server.mjs';
import { cannonInChild } from './cannon.ts';

const { values: args } = parseArgs({
  options: {
    clients: { type: 'string', default: '1000' },
    seconds: { type: 'string', default: '1' },
    'api-seconds': { type: 'string', default: '10' },
    'api-runs': { type: 'string', default: '3' },
    connections: { type: 'string', default: '50' },
    port: { type: 'string', default: '18480' },
    'cpu-prof': { type: 'string' },
  },
});
const CLIENTS = Number(args.clients);
const WINDOW_MS = Number(args.seconds) * 1000;
const PASSWORD = 'bench-cluster-password';
const TARGET_P95_MS = 100;
/** How long an edit's event may take before it counts as lost. */
const EVENT_LIMIT_MS = 10_000;
const ROOT = new URL('../..', import.meta.url).pathname;

/** CPU seconds (user + system) a process has used so far, from /proc. */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
};

const quantile = (values: number[], q: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
};

/**
 * The edits' HTTP client: node:http over keep-alive connections opened before the burst, one per
 * account, as a signed-in browser holds one to its portal. fetch() cost this one thread about a
 * millisecond of CPU per edit, most of it a new connection each, and its late turns stamped the
 * events late.
 */
const editAgent = new Agent({ keepAlive: true, maxFreeSockets: CLIENTS, scheduling: 'fifo' });
const call = (
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: editAgent,
        headers:
          body === undefined ? headers : { ...headers, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });

/** Runs `work` over `items` with at most `limit` at a time. */
async function pool<T>(items: T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

if (serverBundleStale(ROOT)) await buildServer(ROOT);
const cluster = await startCluster({
  nodes: 2,
  port: Number(args.port),
  env: { DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn' },
  ...(args['cpu-prof'] ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${args['cpu-prof']}`] } : {}),
  output: (line) => {
    if (/ (WARN|ERROR|FATAL) /.test(line)) console.log(line);
  },
});
const [one, two] = cluster.nodes;
if (!one || !two) throw new Error('the cluster has fewer than two nodes');
const sockets: Socket[] = [];
try {
  // The accounts, each with one stopped desktop (no disk: nothing boots).
  const prepared = performance.now();
  const database = await openDatabase({ databaseUrl: cluster.databaseUrl, dataDir: '' });
  const passwordHash = await hashPassword(PASSWORD);
  const accounts = Array.from({ length: CLIENTS }, (_, i) =>
    demoAccount({
      id: randomUUID(),
      username: `cluster${String(i + 1).padStart(4, '0')}`,
      name: `Cluster user ${i + 1}`,
      groupId: 'default-users',
      role: 'user',
      passwordHash,
    }),
  );
  await userWrites.createMany(database.db, accounts);
  const rows: DesktopInsert[] = accounts.map((account, i) => ({
    id: randomUUID(),
    userId: account.id,
    categoryId: 'default',
    groupId: account.groupId,
    name: `Cluster desktop ${i + 1}`,
    description: 'Cluster desktop',
    templateId: DEMO_TEMPLATE_ID,
    hardware: demoHardware(),
    guestProperties: demoGuestProperties(),
  }));
  for (let i = 0; i < rows.length; i += 500)
    await database.db.insert(desktops).values(rows.slice(i, i + 500));
  const versions = new Map(
    (
      await database.query<{ id: string; version: number }>(
        'SELECT id, version FROM desktops WHERE id = ANY($1)',
        [rows.map((row) => row.id)],
      )
    ).map((row) => [row.id, Number(row.version)]),
  );
  await database.close();

  // Sign-ins and sockets: client i on node (i mod 2).
  const tokens: string[] = new Array<string>(CLIENTS);
  const received = new Map<string, { version: number; at: number; epoch: number }[]>();
  /** sockets the server or the network closed (their events are lost: no reconnection here) */
  const dropped: string[] = [];
  await pool(
    accounts.map((account, i) => ({ account, i })),
    8,
    async ({ account, i }) => {
      const node = i % 2 === 0 ? one : two;
      const login = await fetch(
        `${node.url}/authentication/login?provider=form&category_id=default`,
        {
          method: 'POST',
          body: new URLSearchParams({ username: account.uid, password: PASSWORD }),
        },
      );
      if (!login.ok) throw new Error(`login of ${account.uid}: ${login.status}`);
      const token = (await login.text()).trim();
      tokens[i] = token;
      const socket = io(node.url, {
        path: '/api/v3/socket.io',
        transports: ['websocket'],
        // As a browser on the node's own page would send it.
        extraHeaders: { origin: node.url },
        auth: { jwt: token },
        reconnection: false,
      });
      sockets.push(socket);
      socket.on('disconnect', (reason) => {
        if (reason !== 'io client disconnect') dropped.push(reason);
      });
      socket.on('desktop_update', (payload: { id?: string; version?: number }) => {
        if (!payload.id) return;
        const list = received.get(payload.id) ?? [];
        list.push({ version: Number(payload.version), at: performance.now(), epoch: Date.now() });
        received.set(payload.id, list);
      });
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', () => resolve());
        socket.once('connect_error', reject);
      });
    },
  );
  console.log(
    `cluster: 2 nodes + HAProxy on PostgreSQL; ${CLIENTS} accounts signed in, ${sockets.filter((s) => s.connected).length} sockets connected (${Math.ceil(CLIENTS / 2)} on node 1, ${Math.floor(CLIENTS / 2)} on node 2) in ${((performance.now() - prepared) / 1000).toFixed(1)} s`,
  );

  // The burst: every account edits its desktop once, through the node its socket is not on.
  // PostgreSQL's backends (the nodes' pools are open by now): their CPU is read from /proc.
  const pids = await openDatabase({ databaseUrl: cluster.databaseUrl, dataDir: '' });
  const backends = (
    await pids.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid()',
    )
  ).map((row) => Number(row.pid));
  await pids.close();
  const postgresCpu = () =>
    backends.reduce((sum, pid) => {
      try {
        return sum + cpuSeconds(pid);
      } catch {
        return sum;
      }
    }, 0);
  // Each account's connection to the node it edits through, open before the first edit.
  await Promise.all(
    rows.map(async (_row, i) => {
      const node = i % 2 === 0 ? two : one;
      const status = await call(`${node.url}/api/v3/health`, 'GET');
      if (status !== 200) throw new Error(`health of ${node.name}: ${status}`);
    }),
  );
  const sent = new Map<string, number>();
  const answered = new Map<string, number>();
  const failures: string[] = [];
  const burstStart = performance.now();
  /** this process's clock in µs, the clock of the nodes' CPU profiles */
  const monotonicUs = () => process.hrtime.bigint() / 1000n;
  const burstFrom = monotonicUs();
  // This process's own event-loop delay: its 1,000 sockets and requests share one thread, and a
  // late turn here delays the moment an event is stamped as received.
  const benchLag = monitorEventLoopDelay({ resolution: 5 });
  benchLag.enable();
  const cpuBefore = [one, two].map((node) => cpuSeconds(node.pid));
  const benchCpuBefore = process.cpuUsage();
  const postgresCpuBefore = postgresCpu();
  await Promise.all(
    rows.map(async (row, i) => {
      await sleep((i * WINDOW_MS) / CLIENTS);
      const node = i % 2 === 0 ? two : one;
      sent.set(row.id, performance.now());
      const status = await call(
        `${node.url}/api/v3/domain/${row.id}`,
        'PUT',
        { authorization: `Bearer ${tokens[i]}`, 'content-type': 'application/json' },
        JSON.stringify({ description: `Cluster edit ${i + 1}` }),
      ).catch((err: unknown) => {
        failures.push(`${row.id}: ${String(err)}`);
        return 0;
      });
      answered.set(row.id, performance.now());
      if (status !== 200 && status !== 0) failures.push(`${row.id}: ${status}`);
    }),
  );
  const writesMs = performance.now() - burstStart;
  const deadline = performance.now() + EVENT_LIMIT_MS;
  while (received.size < CLIENTS && performance.now() < deadline) await sleep(50);
  const burstCpu = [one, two].map((node, i) => cpuSeconds(node.pid) - (cpuBefore[i] ?? 0));
  benchLag.disable();
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const postgresBurstCpu = postgresCpu() - postgresCpuBefore;
  const burstTo = monotonicUs();
  await sleep(500); // late duplicates would show now

  // When each desktop changed: its row's updated_at (the start of the edit's transaction, in the
  // database's clock, which is this machine's).
  const changedAt = new Map<string, number>();
  const reader = await openDatabase({ databaseUrl: cluster.databaseUrl, dataDir: '' });
  for (const row of await reader.query<{ id: string; at: number }>(
    'SELECT id, extract(epoch FROM updated_at) * 1000 AS at FROM desktops WHERE id = ANY($1)',
    [rows.map((r) => r.id)],
  ))
    changedAt.set(row.id, Number(row.at));
  await reader.close();
  /** from the change (the row written) to the event at the client: the live layer's latency */
  const changeToEvent: number[] = [];
  const latencies: number[] = [];
  /** from the edit's answer to the event: the crossing itself, without the write */
  const afterAnswer: number[] = [];
  const writes: number[] = [];
  let lost = 0;
  const wrongVersions: string[] = [];
  for (const row of rows) {
    const events = received.get(row.id) ?? [];
    const at = sent.get(row.id) ?? 0;
    if (events.length === 0) lost += 1;
    else {
      changeToEvent.push((events[0]?.epoch ?? 0) - (changedAt.get(row.id) ?? 0));
      latencies.push((events[0]?.at ?? at) - at);
      afterAnswer.push((events[0]?.at ?? at) - (answered.get(row.id) ?? at));
    }
    writes.push((answered.get(row.id) ?? at) - at);
    const expected = (versions.get(row.id) ?? 0) + 1;
    if (events.length > 1 || (events[0] && events[0].version !== expected))
      wrongVersions.push(
        `${row.id}: versions ${events.map((e) => e.version).join(',')} (expected ${expected})`,
      );
  }
  const p95 = quantile(changeToEvent, 0.95);
  console.log(
    `burst: ${CLIENTS} edits in ${(writesMs / 1000).toFixed(2)} s (${failures.length} failed), each through the node its owner's socket is not on; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `change -> client event: p50 ${quantile(changeToEvent, 0.5).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, max ${Math.max(...changeToEvent).toFixed(0)} ms (from the row written to the event at its client)`,
  );
  console.log(
    `edit request -> client event: p50 ${quantile(latencies, 0.5).toFixed(0)} ms, p95 ${quantile(latencies, 0.95).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms; lost ${lost}; sockets dropped ${dropped.length}${dropped.length ? ` (${[...new Set(dropped)].join(', ')})` : ''}; wrong or repeated versions ${wrongVersions.length}${wrongVersions.length ? ` (${wrongVersions.slice(0, 3).join('; ')})` : ''}`,
  );
  console.log(
    `  of which the edit's answer: p50 ${quantile(writes, 0.5).toFixed(0)} ms, p95 ${quantile(writes, 0.95).toFixed(0)} ms; answer -> event: p50 ${quantile(afterAnswer, 0.5).toFixed(0)} ms, p95 ${quantile(afterAnswer, 0.95).toFixed(0)} ms (negative: the event came first)`,
  );
  const cpuTotal = burstCpu.reduce((sum, s) => sum + s, 0);
  console.log(
    `nodes' CPU from the first edit to the last event: ${burstCpu.map((s, i) => `node ${i + 1} ${s.toFixed(2)} s`).join(', ')}; ${((cpuTotal * 1000) / CLIENTS).toFixed(2)} ms per edit (its request, write and crossing event)`,
  );
  console.log(
    `other CPU over the same time: PostgreSQL's backends ${postgresBurstCpu.toFixed(2)} s, this process (1,000 sockets and the edits' requests) ${((benchCpu.user + benchCpu.system) / 1e6).toFixed(2)} s`,
  );
  const lagMs = (ns: number) => (ns / 1e6).toFixed(0);
  console.log(
    `bench's own event-loop delay over the burst: p50 ${lagMs(benchLag.percentile(50))} ms, p95 ${lagMs(benchLag.percentile(95))} ms, max ${lagMs(benchLag.max)} ms (a late turn here stamps events late)`,
  );
  if (args['cpu-prof'])
    console.log(
      `burst window in the profiles' clock (µs): ${burstFrom} to ${burstTo} (node 1's profile is written at the end)`,
    );
  for (const failure of failures.slice(0, 5)) console.log(`  edit failed: ${failure}`);
  for (const socket of sockets) socket.close();
  editAgent.destroy();

  // API through HAProxy, two nodes then one.
  const login = await fetch(
    `${cluster.url}/authentication/login?provider=form&category_id=default`,
    {
      method: 'POST',
      body: new URLSearchParams({ username: 'user', password: PASSWORD }),
    },
  );
  const userToken = (await login.text()).trim();
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
  const api = async (label: string) => {
    for (let run = 1; run <= Number(args['api-runs']); run++) {
      const before = load();
      const result = await cannonInChild({
        url: `${cluster.url}/api/v3/user/desktops`,
        connections: Number(args.connections),
        duration: Number(args['api-seconds']),
        headers: { authorization: `Bearer ${userToken}` },
      });
      const errors = result.errors + result.timeouts + result.non2xx;
      console.log(
        `API through HAProxy, ${label}, run ${run}: ${result.requests.average.toFixed(0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, errors ${errors} (load average before ${before}, after ${load()})`,
      );
    }
  };
  // The burst's sockets closed: the nodes settle before the API is measured.
  await sleep(3000);
  await api('2 nodes');
  await two.crash();
  // HAProxy takes the node out after two failed checks (2 s apart): every answer is node 1's then.
  let node1Only = 0;
  while (node1Only < 10) {
    const health = (await (await fetch(`${cluster.url}/api/v3/health`)).json()) as {
      node?: string;
    };
    node1Only = health.node === one.name ? node1Only + 1 : 0;
    await sleep(100);
  }
  await api('1 node (node 2 killed)');
  console.log(
    `load average: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const ok =
    lost === 0 && wrongVersions.length === 0 && failures.length === 0 && p95 <= TARGET_P95_MS;
  console.log(
    ok
      ? `PASS (target: change -> event p95 <= ${TARGET_P95_MS} ms, no event lost or out of order)`
      : `FAIL (target: change -> event p95 <= ${TARGET_P95_MS} ms, no event lost or out of order, no failed edit)`,
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  for (const socket of sockets) socket.close();
  await cluster.stop();
}
