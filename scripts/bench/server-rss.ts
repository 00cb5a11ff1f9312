/**
 * Benchmark: the server's footprint as `npm start` runs it. Starts the compiled server bundle
 * (`dist-server/server.mjs`, built first when older than its sources) with `npm start`'s allocator
 * settings on the embedded PGlite in a fresh temp DATA_DIR with the demo seed, measures boot →
 * healthy, then reads the process's RSS after boot and once a minute while nobody uses it; then
 * restarts it on the same DATA_DIR and reads boot → healthy and the RSS each minute for three
 * minutes after the restart. Targets: RSS ≤ 250 MB after the idle time and after the restart.
 *
 * npx tsx scripts/bench/server-rss.ts [--minutes 10] [--port 8601]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  buildServer,
  SERVER_BUNDLE,
  SERVER_MALLOC_ENV,
  serverBundleStale,
} from '../lib/build-server.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    port: { type: 'string', default: '8601' },
  },
});
const minutes = Number(values.minutes);
const port = Number(values.port);
const TARGET_MB = 250;
const RESTART_MINUTES = 3;
const root = process.cwd();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident set of one process, in MB (10^6 bytes), from /proc; fails clearly once it is gone. */
function rssMb(pid: number): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    throw new Error(`the server (pid ${pid}) is gone: it exited or was killed during the run`);
  }
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? (Number(match[1]) * 1024) / 1e6 : Number.NaN;
}

if (serverBundleStale(root)) await buildServer(root);
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-rss-'));

interface Running {
  pid: number;
  bootMs: number;
  stop(): Promise<void>;
}

/** Starts the bundle on `dataDir` and resolves once it answers its health check. */
async function startServer(): Promise<Running> {
  const started = performance.now();
  const server = spawn(process.execPath, [SERVER_BUNDLE], {
    env: {
      ...SERVER_MALLOC_ENV,
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DEMO_PASSWORD: 'bench-demo-password',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const stop = async () => {
    if (server.exitCode !== null) return;
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  };
  for (;;) {
    const healthy = await fetch(`http://127.0.0.1:${port}/api/v3/health`)
      .then((response) => response.ok)
      .catch(() => false);
    if (healthy) break;
    if (server.exitCode !== null) throw new Error('the server exited before it was healthy');
    if (performance.now() - started > 180_000) {
      await stop();
      throw new Error('the server did not start');
    }
    await sleep(50);
  }
  return { pid: server.pid ?? 0, bootMs: performance.now() - started, stop };
}

const verdict = (mb: number) => (mb <= TARGET_MB ? 'PASS' : 'FAIL');
try {
  const first = await startServer();
  let idle: number;
  try {
    const boot = rssMb(first.pid);
    console.log(
      `first start → healthy ${first.bootMs.toFixed(0)} ms (initdb, migrations, demo seed)`,
    );
    console.log(`RSS after the first start ${boot.toFixed(1)} MB`);
    idle = boot;
    for (let minute = 1; minute <= minutes; minute++) {
      await sleep(60_000);
      idle = rssMb(first.pid);
      console.log(`RSS after ${minute} min idle ${idle.toFixed(1)} MB`);
    }
  } finally {
    await first.stop();
  }
  const again = await startServer();
  let restarted: number;
  try {
    console.log(`restart → healthy ${again.bootMs.toFixed(0)} ms`);
    restarted = rssMb(again.pid);
    // V8 gives an idle heap back a minute or two after the boot's garbage.
    for (let minute = 1; minute <= RESTART_MINUTES; minute++) {
      await sleep(60_000);
      restarted = rssMb(again.pid);
      console.log(`RSS ${minute} min after the restart ${restarted.toFixed(1)} MB`);
    }
  } finally {
    await again.stop();
  }
  console.log(
    `\nafter ${minutes} min idle ${idle.toFixed(1)} MB ${verdict(idle)}; ${RESTART_MINUTES} min after a restart ${restarted.toFixed(1)} MB ${verdict(restarted)} (target ≤ ${TARGET_MB} MB)`,
  );
  process.exitCode = idle <= TARGET_MB && restarted <= TARGET_MB ? 0 : 1;
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
