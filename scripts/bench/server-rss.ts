/**
 * Benchmark: the server's footprint as `npm start` runs it. Starts the compiled server bundle
 * (`dist-server/server.mjs`, built first when older than its sources) on the embedded PGlite in a
 * fresh temp DATA_DIR with the demo seed, measures boot → healthy, then reads the process's RSS
 * after boot and once a minute while nobody uses it. Targets: RSS ≤ 250 MB after boot and after
 * the idle time.
 *
 * npx tsx scripts/bench/server-rss.ts [--minutes 10] [--port 8601]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildServer, SERVER_BUNDLE, serverBundleStale } from '../lib/build-server.mjs';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    port: { type: 'string', default: '8601' },
  },
});
const minutes = Number(values.minutes);
const port = Number(values.port);
const TARGET_MB = 250;
const root = process.cwd();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resident set of one process, in MB (10^6 bytes), from /proc. */
function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? (Number(match[1]) * 1024) / 1e6 : Number.NaN;
}

if (serverBundleStale(root)) await buildServer(root);
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-rss-'));
const started = performance.now();
const server = spawn(process.execPath, [SERVER_BUNDLE], {
  env: {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DEMO_PASSWORD: 'bench-demo-password',
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'inherit'],
});
const pid = server.pid ?? 0;
try {
  for (;;) {
    const healthy = await fetch(`http://127.0.0.1:${port}/api/v3/health`)
      .then((response) => response.ok)
      .catch(() => false);
    if (healthy) break;
    if (server.exitCode !== null) throw new Error('the server exited before it was healthy');
    if (performance.now() - started > 120_000) throw new Error('the server did not start');
    await sleep(50);
  }
  const bootMs = performance.now() - started;
  const boot = rssMb(pid);
  console.log(`boot → healthy ${bootMs.toFixed(0)} ms (fresh DATA_DIR: migrations and demo seed)`);
  console.log(`RSS after boot ${boot.toFixed(1)} MB`);
  let last = boot;
  for (let minute = 1; minute <= minutes; minute++) {
    await sleep(60_000);
    last = rssMb(pid);
    console.log(`RSS after ${minute} min idle ${last.toFixed(1)} MB`);
  }
  const verdict = (mb: number) => (mb <= TARGET_MB ? 'PASS' : 'FAIL');
  console.log(
    `\nafter boot ${boot.toFixed(1)} MB ${verdict(boot)}; after ${minutes} min idle ${last.toFixed(1)} MB ${verdict(last)} (target ≤ ${TARGET_MB} MB)`,
  );
  process.exitCode = boot <= TARGET_MB && last <= TARGET_MB ? 0 : 1;
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
}
