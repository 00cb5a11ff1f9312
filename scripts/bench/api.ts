/**
 * API benchmark: `npx tsx scripts/bench/api.ts [--seconds 10] [--connections 50] [--desktops 50]
 * [--inline] [--profile] [--accept-encoding br]`.
 * Starts a private PostgreSQL, builds the app on it, seeds N desktops for `user`, logs in and runs
 * autocannon against GET /api/v3/user/desktops with the bearer token.
 *
 * Target on a 2-core machine: >= 5,000 req/s and p99 <= 25 ms, no errors, in the default mode.
 * By default autocannon runs in a child process (the target's mode): the server then has this
 * process to itself, so its CPU time per request (process.cpuUsage() over the run / requests) is
 * its own, and the load generator shares no event loop, heap or garbage collector with it.
 * `--inline` runs autocannon in a worker thread of this process instead (the earlier mode): the
 * process CPU then includes the load generator, so the bench prints the main thread's CPU too
 * (/proc/self/task), which is the server's JavaScript without autocannon.
 *
 * Besides req/s and p50/p99 it prints the server's CPU µs per request, the PostgreSQL backends' CPU
 * µs per request and the load average: on a shared machine req/s moves with the load, CPU time
 * per request much less. `--profile` also records a CPU profile of the server during the run
 * (bench-api-<time>.cpuprofile in the temp dir) and prints its areas and top functions.
 * `--accept-encoding` sends that Accept-Encoding header (a browser sends `gzip, deflate, br, zstd`);
 * the target is without one, as autocannon sends by default.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startPostgres } from '../../tests/support/postgres.ts';
import { cannonInChild, type CannonOptions, type LoadResult } from './cannon.ts';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { seedDesktops, seedIfEmpty } from '../../server/src/seed/index.ts';
import { startProfile, summariseProfile } from './cpu-profile.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    desktops: { type: 'string', default: '50' },
    inline: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    'accept-encoding': { type: 'string' },
  },
});
const TARGET_RPS = 5000;
const TARGET_P99 = 25;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICK_US = 10_000;

/** utime + stime of a process or thread from /proc, in µs; 0 when it is gone or unreadable. */
function procCpuUs(path: string): number {
  try {
    const stat = readFileSync(path, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return 0;
  }
}

const pg = await startPostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-'));
const password = 'bench-password';
const app = await buildApp({
  ...loadConfig({}),
  dataDir,
  databaseUrl: pg.url,
  logLevel: 'silent',
  host: '127.0.0.1',
  port: 0,
  distDir: join(dataDir, 'none'),
});
try {
  await seedIfEmpty(app, { password });
  await seedDesktops(app, 'user', Number(values.desktops) - 3); // the seed already gave `user` 3
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const login = await fetch(
    `http://127.0.0.1:${port}/authentication/login?provider=form&category_id=default`,
    {
      method: 'POST',
      body: new URLSearchParams({ username: 'user', password }),
    },
  );
  const token = await login.text();
  const url = `http://127.0.0.1:${port}/api/v3/user/desktops`;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  const acceptEncoding = values['accept-encoding'];
  if (acceptEncoding) headers['accept-encoding'] = acceptEncoding;
  const check = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await check.text();
  const count = (JSON.parse(body) as unknown[]).length;
  const mode = values.inline ? 'inline (worker thread of the server process)' : 'separate process';
  console.log(
    `GET /api/v3/user/desktops -> ${check.status}, ${count} desktops, ${body.length} B, Accept-Encoding: ${acceptEncoding ?? '(none)'}; autocannon ${values.seconds} s x ${values.connections} connections, ${mode}`,
  );

  // The PostgreSQL processes (backends, writer, wal writer...) whose CPU the run costs.
  const pgPids = (
    await app.database.query<{ pid: number }>('SELECT pid FROM pg_stat_activity')
  ).map((r) => r.pid);
  const pgCpu = () => pgPids.reduce((sum, pid) => sum + procCpuUs(`/proc/${pid}/stat`), 0);
  const mainThreadCpu = () => procCpuUs(`/proc/self/task/${process.pid}/stat`);
  const threads = readdirSync('/proc/self/task').length;

  const options: CannonOptions = {
    url,
    connections: Number(values.connections),
    duration: Number(values.seconds),
    headers,
  };
  const stopProfile = values.profile ? await startProfile() : null;
  const load0 = readFileSync('/proc/loadavg', 'utf8').trim();
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpu();
  const pg0 = pgCpu();
  const result = values.inline
    ? ((await autocannon({ ...options, workers: 1 })) as LoadResult)
    : await cannonInChild(options);
  const cpu = process.cpuUsage(cpu0);
  const mainUs = mainThreadCpu() - main0;
  const pgUs = pgCpu() - pg0;
  const load1 = readFileSync('/proc/loadavg', 'utf8').trim();
  const profile = stopProfile ? await stopProfile() : null;

  const rps = result.requests.average;
  const total = result.requests.total;
  const p99 = result.latency.p99;
  const errors = result.errors + result.timeouts + result.non2xx;
  const perRequest = (us: number) => (us / Math.max(1, total)).toFixed(1);
  console.log(`requests/s: ${rps.toFixed(0)} (total ${total})`);
  console.log(`latency: p50 ${result.latency.p50} ms, p99 ${p99} ms, max ${result.latency.max} ms`);
  console.log(
    values.inline
      ? `server CPU: ${perRequest(mainUs)} µs/request on the main thread (the process, autocannon's worker included: ${perRequest(cpu.user + cpu.system)} µs/request)`
      : `server CPU: ${perRequest(cpu.user + cpu.system)} µs/request (user ${perRequest(cpu.user)}, system ${perRequest(cpu.system)}; main thread ${perRequest(mainUs)}, ${threads} threads)`,
  );
  console.log(`PostgreSQL CPU: ${perRequest(pgUs)} µs/request (${pgPids.length} processes)`);
  console.log(`load average: before ${load0} / after ${load1}`);
  console.log(
    `errors: ${errors} (errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx})`,
  );
  if (profile)
    for (const line of summariseProfile(
      profile,
      join(tmpdir(), `bench-api-${Date.now()}.cpuprofile`),
    ))
      console.log(line);
  const ok = rps >= TARGET_RPS && p99 <= TARGET_P99 && errors === 0;
  console.log(
    ok
      ? `PASS (target >= ${TARGET_RPS} req/s, p99 <= ${TARGET_P99} ms)`
      : `FAIL (target >= ${TARGET_RPS} req/s, p99 <= ${TARGET_P99} ms, 0 errors)`,
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  await app.close();
  pg.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
