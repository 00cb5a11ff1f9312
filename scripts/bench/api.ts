/**
 * API benchmark: `npx tsx scripts/bench/api.ts [--seconds 10] [--connections 50] [--desktops 50]`.
 * Starts a private PostgreSQL, builds the app on it, seeds N desktops for `user`, logs in and runs
 * autocannon against GET /api/v3/user/desktops with the bearer token.
 * Target on a 2-core machine: >= 2,000 req/s and p99 <= 50 ms, no errors.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { startPostgres } from '../../tests/support/postgres.ts';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { seedDesktops, seedIfEmpty } from '../../server/src/seed/index.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    desktops: { type: 'string', default: '50' },
  },
});
const TARGET_RPS = 2000;
const TARGET_P99 = 50;

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
  const check = await fetch(`http://127.0.0.1:${port}/api/v3/user/desktops`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const count = ((await check.json()) as unknown[]).length;
  console.log(
    `GET /api/v3/user/desktops -> ${check.status}, ${count} desktops; running autocannon ${values.seconds} s x ${values.connections} connections`,
  );

  const result = await autocannon({
    url: `http://127.0.0.1:${port}/api/v3/user/desktops`,
    connections: Number(values.connections),
    duration: Number(values.seconds),
    headers: { authorization: `Bearer ${token}` },
    // the load generator runs in its own thread so it does not share the server's event loop
    workers: 1,
  });
  const rps = result.requests.average;
  const p99 = result.latency.p99;
  const errors = result.errors + result.timeouts + result.non2xx;
  console.log(`requests/s: ${rps.toFixed(0)} (total ${result.requests.total})`);
  console.log(`latency: p50 ${result.latency.p50} ms, p99 ${p99} ms, max ${result.latency.max} ms`);
  console.log(
    `errors: ${errors} (errors ${result.errors}, timeouts ${result.timeouts}, non-2xx ${result.non2xx})`,
  );
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
