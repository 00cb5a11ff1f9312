/**
 * Login storm: `npx tsx scripts/bench/login-storm.ts [--rate 50] [--seconds 60] [--postgres]`.
 * Builds the app in this process (embedded PGlite, or a private PostgreSQL with --postgres),
 * seeds the demo, then sends `rate` form logins a second (open loop: a new one every 1/rate s,
 * whether the earlier ones have answered or not) of the seeded students with their password.
 * Password hashing runs in a bounded pool; what it cannot take in time must be refused with 503
 * `server_busy` and a Retry-After, never queued without end.
 * Targets: p95 of all answers ≤ 1.5 s, every 503 with Retry-After, no other failure, RSS bounded.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startPostgres } from '../../tests/support/postgres.ts';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { seedIfEmpty } from '../../server/src/seed/index.ts';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    postgres: { type: 'boolean', default: false },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const TARGET_P95_MS = 1500;

const pg = values.postgres ? await startPostgres() : undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-'));
const password = 'bench-password';
const app = await buildApp({
  ...loadConfig({}),
  dataDir,
  databaseUrl: pg?.url,
  logLevel: 'silent',
  host: '127.0.0.1',
  port: 0,
  distDir: join(dataDir, 'none'),
  prepareImages: false,
});

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | null;
  code?: string;
}

const quantile = (sorted: number[], q: number) =>
  sorted.length ? (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) : 0;

try {
  await seedIfEmpty(app, { password });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  const url = `http://127.0.0.1:${port}/authentication/login?provider=form&category_id=default`;

  const login = async (n: number): Promise<Answer> => {
    const username = `student${String((n % 42) + 1).padStart(2, '0')}`;
    const started = performance.now();
    try {
      const res = await fetch(url, {
        method: 'POST',
        body: new URLSearchParams({ username, password }),
      });
      const text = await res.text();
      const answer: Answer = {
        status: res.status,
        ms: performance.now() - started,
        retryAfter: res.headers.get('retry-after'),
      };
      if (res.status !== 200)
        answer.code = (JSON.parse(text) as { description_code?: string }).description_code;
      return answer;
    } catch (error) {
      return { status: 0, ms: performance.now() - started, retryAfter: null, code: String(error) };
    }
  };

  // Warm up: one login, so the first answers do not measure module loading.
  await login(0);
  let rssMax = process.memoryUsage().rss;
  const rssTimer = setInterval(() => {
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
  }, 250);
  console.log(
    `login storm: ${rate}/s for ${seconds} s (${values.postgres ? 'PostgreSQL' : 'PGlite'})`,
  );
  const pending: Promise<Answer>[] = [];
  const total = rate * seconds;
  const start = performance.now();
  for (let n = 0; n < total; n += 1) {
    const due = start + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(login(n));
  }
  const answers = await Promise.all(pending);
  clearInterval(rssTimer);
  const elapsed = (performance.now() - start) / 1000;

  const byStatus = new Map<string, number>();
  for (const a of answers) {
    const key = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
  }
  const all = answers.map((a) => a.ms).sort((a, b) => a - b);
  const ok = answers
    .filter((a) => a.status === 200)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const refused = answers.filter((a) => a.status === 503);
  const refusedWithoutRetry = refused.filter((a) => !a.retryAfter).length;
  const failures = answers.filter((a) => a.status !== 200 && a.status !== 503).length;
  const p95 = quantile(all, 0.95);
  console.log(
    `sent ${answers.length} in ${elapsed.toFixed(1)} s; answers: ${JSON.stringify(Object.fromEntries(byStatus))}`,
  );
  console.log(
    `all answers: p50 ${quantile(all, 0.5).toFixed(0)} ms, p95 ${p95.toFixed(0)} ms, p99 ${quantile(all, 0.99).toFixed(0)} ms, max ${(all.at(-1) ?? 0).toFixed(0)} ms`,
  );
  console.log(
    `signed in: ${ok.length} (${(ok.length / elapsed) | 0}/s), p50 ${quantile(ok, 0.5).toFixed(0)} ms, p95 ${quantile(ok, 0.95).toFixed(0)} ms`,
  );
  console.log(
    `refused 503: ${refused.length} (${refusedWithoutRetry} without Retry-After); other failures: ${failures}`,
  );
  console.log(`RSS max ${(rssMax / 2 ** 20).toFixed(0)} MiB`);
  const pass = p95 <= TARGET_P95_MS && refusedWithoutRetry === 0 && failures === 0;
  console.log(
    `${pass ? 'PASS' : 'FAIL'}: p95 ≤ ${TARGET_P95_MS} ms, every 503 with Retry-After, no other failure`,
  );
  process.exitCode = pass ? 0 : 1;
} finally {
  await app.close();
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
