/**
 * Soak: `npx tsx scripts/bench/soak.ts [--users 500] [--minutes 10] [--console-share 0.2]`.
 *
 * Runs the portal as `npm start` does (the compiled bundle, embedded PGlite, its own DATA_DIR and
 * port) in a child process, with the event-loop probe preloaded (`scripts/lib/event-loop-probe.mjs`:
 * event-loop lag and RSS of the server process every 10 s on its stdout). Before it starts, the
 * bench seeds the demo into that DATA_DIR and adds `users` accounts with one stopped desktop each.
 *
 * Each simulated user signs in (form login), keeps one socket.io connection (the SPA's settings),
 * lists its desktops every 30 s and edits its desktop's description once a minute (a write through
 * the desktop service that publishes `desktop_update` to the owner: nothing boots, so 500 users do
 * not start 500 QEMU guests on a 2-core machine). A share of them (`console-share`, 20 %) are
 * managers of the default category who keep a console open: desktops of `user` really run (the
 * demo template's idle guest, TCG; one per 4 console users, the VNC proxy's limit of sockets per
 * desktop: 25 for 100) and each console user holds the VNC websocket of one of them (ticket from
 * GET /desktop/{id}/viewer/browser-vnc, then the proxy's websocket, kept open and reopened when it
 * closes). Starts are staggered over the first 30 s.
 *
 * Prints the list reads' p50/p95/p99 (whole run, and once every user is connected: the ramp's 500
 * sign-ins are the login storm's subject), the error rate of every request and connection, the
 * delivery of the edits' events, the server's event-loop lag p99 (worst and median 10-s window once
 * every user is connected) and its RSS after boot, once every user is connected, and at the end.
 * Targets, once every user is connected: read p95 ≤ 300 ms, lag p99 < 100 ms, RSS growth < 10 %;
 * over the whole run: errors < 0.1 %.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import { io, type Socket } from 'socket.io-client';
import WebSocket from 'ws';
import { buildApp } from '../../server/src/app.ts';
import { hashPassword } from '../../server/src/platform/auth/passwords.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { desktops, users, type DesktopInsert } from '../../server/src/platform/db/schema.ts';
import { userWrites } from '../../server/src/domains/directory/index.ts';
import {
  DEMO_TEMPLATE_ID,
  demoGuestProperties,
  demoHardware,
  seedIfEmpty,
} from '../../server/src/seed/index.ts';
import { demoAccount } from '../../server/src/seed/accounts.ts';
import { killQemus } from '../../tests/support/qemu-teardown.ts';
import { buildServer, serverBundleStale, SERVER_BUNDLE } from '../lib/build-server.mjs';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string', default: '500' },
    minutes: { type: 'string', default: '10' },
    'console-share': { type: 'string', default: '0.2' },
  },
});
const USERS = Number(args.users);
const DURATION_MS = Number(args.minutes) * 60_000;
const CONSOLE_USERS = Math.round(USERS * Number(args['console-share']));
/** The VNC proxy admits at most 4 sockets per desktop. */
const CONSOLES_PER_DESKTOP = 4;
const RUNNING = Math.ceil(CONSOLE_USERS / CONSOLES_PER_DESKTOP);
const CONSOLE_RETRY_MS = 5000;
const LIST_EVERY_MS = 30_000;
const ACT_EVERY_MS = 60_000;
const RAMP_MS = 30_000;
const EVENT_LIMIT_MS = 10_000;
const TARGET = { readP95Ms: 300, errorRate: 0.001, lagP99Ms: 100, rssGrowth: 0.1 };
const ROOT = new URL('../..', import.meta.url).pathname;
const PROBE = join(ROOT, 'scripts/lib/event-loop-probe.mjs');
const PASSWORD = 'bench-password';

interface ProbeSample {
  at: number;
  lagP50Ms: number;
  lagP99Ms: number;
  lagMaxMs: number;
  rssBytes: number;
  heapUsedBytes: number;
  cpuMs: number;
}

interface ListedDesktop {
  id: string;
  name: string;
  state?: string;
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) : 0;
const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const username = (i: number) => `soak${String(i + 1).padStart(4, '0')}`;
const isConsoleUser = (i: number) => i < CONSOLE_USERS;

/** The demo seed, then the soak accounts (managers first, for the consoles) with one desktop each. */
async function prepareData(dataDir: string): Promise<void> {
  const env = { DATA_DIR: dataDir, DEMO_PASSWORD: PASSWORD, LOG_LEVEL: 'warn', HOST: '127.0.0.1' };
  const app = await buildApp({ ...loadConfig(env, ROOT), port: 0 });
  try {
    await seedIfEmpty(app, { password: PASSWORD });
    const passwordHash = await hashPassword(PASSWORD);
    const accounts = Array.from({ length: USERS }, (_, i) => {
      const manager = isConsoleUser(i);
      return demoAccount({
        id: randomUUID(),
        username: username(i),
        name: `Soak ${manager ? 'manager' : 'user'} ${i + 1}`,
        groupId: manager ? 'default-managers' : 'default-users',
        role: manager ? 'manager' : 'user',
        passwordHash,
      });
    });
    await userWrites.createMany(app.db, accounts);
    const rows: DesktopInsert[] = accounts.map((account, i) => ({
      id: randomUUID(),
      userId: account.id,
      categoryId: 'default',
      groupId: account.groupId,
      name: `Soak desktop ${i + 1}`,
      description: 'Soak desktop',
      templateId: DEMO_TEMPLATE_ID,
      hardware: demoHardware(),
      guestProperties: demoGuestProperties(),
    }));
    // The desktops that run for the consoles: `user`'s, made `creating` so the portal's
    // reconciler makes their disks over the demo template when it boots.
    const [owner] = await app.db.select().from(users).where(eq(users.uid, 'user')).limit(1);
    if (!owner) throw new Error('no seeded user `user`');
    for (let i = 0; i < RUNNING; i += 1)
      rows.push({
        id: randomUUID(),
        userId: owner.id,
        categoryId: owner.categoryId,
        groupId: owner.groupId,
        name: `Console desktop ${String(i + 1).padStart(3, '0')}`,
        description: 'Soak console desktop',
        templateId: DEMO_TEMPLATE_ID,
        hardware: demoHardware(),
        guestProperties: demoGuestProperties(),
        state: 'creating',
      });
    for (let i = 0; i < rows.length; i += 500)
      await app.db.insert(desktops).values(rows.slice(i, i + 500));
  } finally {
    await app.close();
  }
}

const probe: ProbeSample[] = [];

/** Starts the portal with the probe preloaded; resolves once it prints that it listens. */
function startPortal(port: number, dataDir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', PROBE, SERVER_BUNDLE], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DEMO_PASSWORD: PASSWORD,
      LOG_LEVEL: 'warn',
      BENCH_PROBE_MS: '10000',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let pending = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.startsWith('event-loop-probe '))
        probe.push(JSON.parse(line.slice('event-loop-probe '.length)) as ProbeSample);
      else output = `${output}${line}\n`.slice(-4000);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = `${output}${chunk.toString()}`.slice(-4000);
  });
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (/listening on/.test(output)) {
        clearInterval(timer);
        resolve(child);
      }
    }, 50);
    child.once('exit', (code) => {
      clearInterval(timer);
      reject(new Error(`the portal ended (${code}): ${output.slice(-800)}`));
    });
  });
}

/** Counts of what was tried and what failed, by kind. */
const tried = new Map<string, number>();
const failed = new Map<string, number>();
/** failures by kind and reason (status code or error), counted */
const failures = new Map<string, number>();
const count = (kind: string, ok: boolean, why?: string) => {
  tried.set(kind, (tried.get(kind) ?? 0) + 1);
  if (ok) return;
  failed.set(kind, (failed.get(kind) ?? 0) + 1);
  const key = `${kind}: ${(why ?? '').slice(0, 80)}`;
  failures.set(key, (failures.get(key) ?? 0) + 1);
};
const readMs: number[] = [];
/** when each read ended (performance.now()), to tell the ramp from the steady state */
const readEnd: number[] = [];
const actMs: number[] = [];
const eventMs: number[] = [];
let eventsMissed = 0;
let signInsRefused = 0;
let stopping = false;

class SimulatedUser {
  token = '';
  desktopId = '';
  socket: Socket | undefined;
  console: WebSocket | undefined;
  consoleOpenedAt = 0;
  /** edits whose desktop_update has not arrived: when each PUT was sent */
  pendingEdits: number[] = [];
  edits = 0;
  timers: NodeJS.Timeout[] = [];
  renewing: Promise<void> | undefined;
  stopped = false;

  constructor(
    readonly index: number,
    readonly base: string,
    readonly consoleDesktop: string | undefined,
  ) {}

  /**
   * Renews the login token when it is within 30 s of its end, as the SPA does before a request
   * (sessions last SESSION_EXPIRATION, 5 minutes by default, and are renewed up to 30 minutes).
   */
  async freshToken(): Promise<void> {
    const payload = this.token.split('.')[1] ?? '';
    const { exp } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
      exp?: number;
    };
    if (exp === undefined || exp * 1000 - Date.now() > 30_000) return;
    this.renewing ??= (async () => {
      try {
        const res = await fetch(`${this.base}/authentication/renew`, {
          method: 'POST',
          headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
          body: '{}',
        });
        const answer = (await res.json()) as { token?: string };
        count('renew', res.ok && !!answer.token, String(res.status));
        if (answer.token) this.token = answer.token;
      } catch (error) {
        count('renew', false, String(error));
      }
    })().finally(() => {
      this.renewing = undefined;
    });
    await this.renewing;
  }

  async request(path: string, init: RequestInit = {}): Promise<Response> {
    await this.freshToken();
    return fetch(`${this.base}/api/v3${path}`, {
      ...init,
      headers: {
        authorization: `Bearer ${this.token}`,
        'content-type': 'application/json',
        ...init.headers,
      },
    });
  }

  async signIn(): Promise<void> {
    for (;;) {
      const res = await fetch(
        `${this.base}/authentication/login?provider=form&category_id=default`,
        {
          method: 'POST',
          body: new URLSearchParams({ username: username(this.index), password: PASSWORD }),
        },
      );
      // A 503 is the login pool's back-pressure (Retry-After: 1): a client waits and tries again.
      // Counted apart: neither an error nor an operation of the soak.
      if (res.status === 503) {
        signInsRefused += 1;
        await sleep(1000);
        continue;
      }
      count('sign-in', res.status === 200, String(res.status));
      if (res.status !== 200) throw new Error(`sign-in of ${username(this.index)}: ${res.status}`);
      this.token = (await res.text()).trim();
      return;
    }
  }

  connect(): Promise<void> {
    const socket = io(this.base, {
      path: '/api/v3/socket.io',
      transports: ['websocket'],
      extraHeaders: { origin: this.base },
      auth: (cb) => cb({ jwt: this.token }),
      reconnection: true,
      reconnectionDelay: 1000,
      reconnectionDelayMax: 2000,
    });
    this.socket = socket;
    socket.on('desktop_update', (payload: { id?: string }) => {
      if (payload.id !== this.desktopId) return;
      const sent = this.pendingEdits.shift();
      if (sent !== undefined) eventMs.push(performance.now() - sent);
    });
    socket.on('disconnect', (reason) => {
      if (!stopping) count('socket', false, `disconnect: ${reason}`);
    });
    return new Promise((resolve) => {
      socket.once('connect', () => {
        count('socket', true);
        resolve();
      });
      socket.once('connect_error', (error) => {
        count('socket', false, `connect_error: ${error.message}`);
        resolve();
      });
    });
  }

  async list(): Promise<void> {
    const started = performance.now();
    try {
      const res = await this.request('/user/desktops');
      const body = (await res.json()) as ListedDesktop[];
      readMs.push(performance.now() - started);
      readEnd.push(performance.now());
      count('list', res.status === 200, String(res.status));
      if (res.status === 200 && !this.desktopId) this.desktopId = body[0]?.id ?? '';
    } catch (error) {
      count('list', false, String(error));
    }
  }

  async act(): Promise<void> {
    if (!this.desktopId) return;
    this.edits += 1;
    const started = performance.now();
    this.pendingEdits.push(started);
    try {
      const res = await this.request(`/domain/${this.desktopId}`, {
        method: 'PUT',
        body: JSON.stringify({ description: `Soak edit ${this.edits}` }),
      });
      await res.arrayBuffer();
      actMs.push(performance.now() - started);
      count('edit', res.ok, `${res.status}`);
      if (!res.ok) this.pendingEdits.pop();
    } catch (error) {
      this.pendingEdits.pop();
      count('edit', false, String(error));
    }
  }

  async openConsole(): Promise<void> {
    if (!this.consoleDesktop || stopping) return;
    try {
      const res = await this.request(`/desktop/${this.consoleDesktop}/viewer/browser-vnc`);
      const answer = (await res.json()) as { url?: string };
      count('console ticket', res.ok && !!answer.url, `${res.status} ${JSON.stringify(answer)}`);
      if (!res.ok || !answer.url) return;
      const ws = new WebSocket(`${this.base.replace('http', 'ws')}${answer.url}`, ['binary'], {
        origin: this.base,
      });
      this.console = ws;
      await new Promise<void>((resolve) => {
        let banner = false;
        ws.once('message', (data: Buffer) => {
          banner = data.toString('latin1').startsWith('RFB ');
          count('console open', banner, `first message ${data.toString('latin1').slice(0, 20)}`);
          this.consoleOpenedAt = performance.now();
          resolve();
        });
        ws.once('error', (error) => {
          if (!banner) count('console open', false, String(error));
          resolve();
        });
        ws.once('close', (code) => {
          if (stopping) return;
          if (banner)
            count(
              'console held',
              false,
              `closed ${code} after ${((performance.now() - this.consoleOpenedAt) / 1000).toFixed(0)} s`,
            );
          resolve();
          // A console that was open comes back at once, as a viewer page reconnects; a refused
          // one is asked again later.
          const timer = setTimeout(() => void this.openConsole(), banner ? 1000 : CONSOLE_RETRY_MS);
          this.timers.push(timer);
        });
      });
    } catch (error) {
      count('console ticket', false, String(error));
    }
  }

  /** Signs in, connects, opens the console, then lists and acts on their own clocks. */
  async run(): Promise<void> {
    await this.signIn();
    await this.connect();
    await this.list();
    if (this.consoleDesktop) await this.openConsole();
    const repeat = (everyMs: number, firstMs: number, work: () => Promise<void>) => {
      const tick = () => {
        if (stopping) return;
        void work();
        this.timers.push(setTimeout(tick, everyMs));
      };
      this.timers.push(setTimeout(tick, firstMs));
    };
    repeat(LIST_EVERY_MS, LIST_EVERY_MS, () => this.list());
    repeat(ACT_EVERY_MS, Math.random() * ACT_EVERY_MS, () => this.act());
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.console?.readyState === WebSocket.OPEN) count('console held', true);
    for (const timer of this.timers) clearTimeout(timer);
    this.socket?.close();
    this.console?.close();
    eventsMissed += this.pendingEdits.filter(
      (at) => performance.now() - at > EVENT_LIMIT_MS,
    ).length;
  }
}

/** Signs `user` in, waits for its console desktops to have their disks, starts them. */
async function startConsoleDesktops(base: string): Promise<string[]> {
  const login = await fetch(`${base}/authentication/login?provider=form&category_id=default`, {
    method: 'POST',
    body: new URLSearchParams({ username: 'user', password: PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`sign-in of user: ${login.status}`);
  const token = (await login.text()).trim();
  const api = (path: string) =>
    fetch(`${base}/api/v3${path}`, { headers: { authorization: `Bearer ${token}` } });
  const demo = async () =>
    ((await (await api('/user/desktops')).json()) as ListedDesktop[])
      .filter((d) => d.name.startsWith('Console desktop'))
      .sort((a, b) => a.name.localeCompare(b.name));
  const waitAll = async (state: string, limitMs: number) => {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const listed = await demo();
      if (listed.length && listed.every((d) => d.state === state)) return listed;
      if (Date.now() > deadline)
        throw new Error(`console desktops not ${state}: ${JSON.stringify(listed)}`);
      await sleep(500);
    }
  };
  const stopped = await waitAll('stopped', 180_000);
  for (const d of stopped) {
    const res = await api(`/desktop/start/${d.id}`);
    if (!res.ok) throw new Error(`start ${d.name}: ${res.status} ${await res.text()}`);
  }
  const started = await waitAll('started', 120_000);
  return started.map((d) => d.id);
}

const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-soak-'));
let portal: ChildProcess | undefined;
const simulated: SimulatedUser[] = [];
let cleaned: Promise<void> | undefined;
/** Stops the users, the portal and its QEMUs, and removes the data; once, also on Ctrl-C. */
function cleanup(): Promise<void> {
  cleaned ??= (async () => {
    stopping = true;
    for (const user of simulated) user.stop();
    // The portal leaves its QEMUs running when it stops: stop them, before and after it.
    const stopQemus = () =>
      killQemus(dataDir).catch((error: unknown) => console.error('QEMU stop failed:', error));
    await stopQemus();
    if (portal && portal.exitCode === null) {
      const exited = new Promise((resolve) => portal?.once('exit', resolve));
      portal.kill('SIGTERM');
      await exited;
    }
    await stopQemus();
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return cleaned;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void cleanup().finally(() => process.exit(130));
  });

if (serverBundleStale(ROOT)) await buildServer(ROOT);
let exitCode = 1;
try {
  const loadBefore = load();
  console.log(`load average before: ${loadBefore}`);
  const prepared = performance.now();
  await prepareData(dataDir);
  console.log(
    `seeded the demo and ${USERS} accounts (${CONSOLE_USERS} console managers) in ${((performance.now() - prepared) / 1000).toFixed(1)} s`,
  );
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  portal = await startPortal(port, dataDir);
  const consoleDesktops = CONSOLE_USERS > 0 ? await startConsoleDesktops(base) : [];
  console.log(
    `portal on ${base} (PGlite, pid ${portal.pid}); ${consoleDesktops.length} desktops running for the consoles`,
  );
  await sleep(10_500);
  const bootSample = probe.at(-1);

  const runStart = performance.now();
  for (let i = 0; i < USERS; i += 1)
    simulated.push(
      new SimulatedUser(
        i,
        base,
        isConsoleUser(i) ? consoleDesktops[i % consoleDesktops.length] : undefined,
      ),
    );
  const started = simulated.map(async (user, i) => {
    await sleep((i * RAMP_MS) / USERS);
    await user.run().catch((error: unknown) => count('user', false, String(error)));
  });
  await Promise.all(started);
  const rampMs = performance.now() - runStart;
  const connected = simulated.filter((u) => u.socket?.connected).length;
  console.log(
    `${USERS} users started in ${(rampMs / 1000).toFixed(1)} s: ${connected} sockets connected, ` +
      `${simulated.filter((u) => u.console?.readyState === WebSocket.OPEN).length} consoles open; load ${load()}`,
  );
  const steadyFrom = Date.now();
  const steadyFromPerf = performance.now();
  let nextReport = performance.now() + 60_000;
  while (performance.now() - runStart < DURATION_MS) {
    await sleep(1000);
    if (performance.now() < nextReport) continue;
    nextReport += 60_000;
    const last = probe.at(-1);
    const reads = [...readMs].sort((a, b) => a - b);
    console.log(
      `${((performance.now() - runStart) / 60_000).toFixed(0)} min: ${reads.length} reads, p95 ${quantile(reads, 0.95).toFixed(0)} ms; ` +
        `failed ${[...failed.values()].reduce((a, b) => a + b, 0)}; server lag p99 ${last?.lagP99Ms.toFixed(1)} ms, RSS ${mib(last?.rssBytes ?? 0)}; load ${load()}`,
    );
  }
  await sleep(EVENT_LIMIT_MS);
  stopping = true;
  for (const user of simulated) user.stop();
  const loadAfter = load();

  const reads = [...readMs].sort((a, b) => a - b);
  const steadyReads = readMs
    .filter((_, i) => (readEnd[i] ?? 0) >= steadyFromPerf)
    .sort((a, b) => a - b);
  const acts = [...actMs].sort((a, b) => a - b);
  const events = [...eventMs].sort((a, b) => a - b);
  const totalTried = [...tried.values()].reduce((a, b) => a + b, 0);
  const totalFailed = [...failed.values()].reduce((a, b) => a + b, 0);
  const errorRate = totalTried ? totalFailed / totalTried : 1;
  const windows = probe.filter((s) => s.at >= steadyFrom);
  const windowP99 = windows.map((s) => s.lagP99Ms).sort((a, b) => a - b);
  const lagWorst = windowP99.at(-1) ?? Number.NaN;
  // RSS moves with each collection: the median of the first three windows once every user is
  // connected, against the median of the last three.
  const medianRss = (samples: ProbeSample[]) =>
    quantile(
      samples.map((x) => x.rssBytes).sort((a, b) => a - b),
      0.5,
    );
  const first = windows[0];
  const last = windows.at(-1);
  const cpuShare =
    first && last && last.at > first.at ? (last.cpuMs - first.cpuMs) / (last.at - first.at) : 0;
  const rssStart = medianRss(windows.slice(0, 3));
  const rssEnd = medianRss(windows.slice(-3));
  const growth = (rssEnd - rssStart) / rssStart;

  console.log(
    `\nsoak: ${USERS} users (${CONSOLE_USERS} with a console on ${consoleDesktops.length} running desktops), ${(DURATION_MS / 60_000).toFixed(1)} min, PGlite`,
  );
  console.log(
    `load average: before ${loadBefore}, after ${loadAfter} (2 cores shared with other work)`,
  );
  const readLine = (xs: number[]) =>
    `${xs.length}, p50 ${quantile(xs, 0.5).toFixed(0)} ms, p95 ${quantile(xs, 0.95).toFixed(0)} ms, p99 ${quantile(xs, 0.99).toFixed(0)} ms, max ${(xs.at(-1) ?? 0).toFixed(0)} ms`;
  console.log(`reads (GET /user/desktops), whole run: ${readLine(reads)}`);
  console.log(`reads once every user is connected (the targets): ${readLine(steadyReads)}`);
  console.log(
    `edits (PUT /domain/{id}): ${acts.length}, p95 ${quantile(acts, 0.95).toFixed(0)} ms; their desktop_update: ${events.length} received, p95 ${quantile(events, 0.95).toFixed(0)} ms after the PUT, ${eventsMissed} missing after ${EVENT_LIMIT_MS / 1000} s`,
  );
  console.log(
    `tried / failed: ${[...tried.entries()].map(([kind, n]) => `${kind} ${n}/${failed.get(kind) ?? 0}`).join(', ')}`,
  );
  for (const [failure, n] of [...failures].sort((a, b) => b[1] - a[1]).slice(0, 8))
    console.log(`  ${n} × ${failure}`);
  console.log(`error rate: ${(errorRate * 100).toFixed(3)} % (${totalFailed} of ${totalTried})`);
  console.log(
    `server event-loop lag p99 per 10-s window: worst ${lagWorst.toFixed(1)} ms, median ${quantile(windowP99, 0.5).toFixed(1)} ms (${windows.length} windows); max ${Math.max(...windows.map((s) => s.lagMaxMs)).toFixed(0)} ms`,
  );
  console.log(
    `server CPU once every user is connected: ${(cpuShare * 100).toFixed(0)} % of one core; sign-ins refused with 503 and retried during the ramp: ${signInsRefused}`,
  );
  console.log(
    `server RSS: after boot ${mib(bootSample?.rssBytes ?? 0)}, every user connected ${mib(rssStart)}, end ${mib(rssEnd)} (medians of 3 windows; growth ${(growth * 100).toFixed(1)} %)`,
  );
  const checks: [string, boolean][] = [
    [`read p95 ≤ ${TARGET.readP95Ms} ms`, quantile(steadyReads, 0.95) <= TARGET.readP95Ms],
    [`errors < ${TARGET.errorRate * 100} %`, errorRate < TARGET.errorRate],
    [`event-loop lag p99 < ${TARGET.lagP99Ms} ms`, lagWorst < TARGET.lagP99Ms],
    [`RSS growth < ${TARGET.rssGrowth * 100} %`, growth < TARGET.rssGrowth],
  ];
  for (const [name, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}: ${name}`);
  exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
