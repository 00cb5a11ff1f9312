/**
 * Benchmark: a portal node killed (SIGKILL) in the middle of a deployment's creation. Starts a
 * private PostgreSQL and two real server processes on it (separate DATA_DIRs, the demo seed),
 * creates a deployment of Class A (31 desktops) on node A, kills node A `--kill-after` ms after the
 * answer, then waits until node B has made every remaining disk (it takes the job over once node
 * A's lease expires: 15 s and a beat). Prints the states at the kill, the time node B took, the
 * row count and the disks each node made: B makes those A had not recorded as made, so the sum is
 * 31, or 32 when A was killed between writing a disk and recording it (that copy stays in A's
 * DATA_DIR, unused).
 *
 * npx tsx scripts/bench/kill-node.ts [--kill-after 150] [--port 18081]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startPostgres } from '../../tests/support/postgres';

const { values } = parseArgs({
  options: {
    'kill-after': { type: 'string', default: '150' },
    port: { type: 'string', default: '18081' },
  },
});
const killAfterMs = Number(values['kill-after']);
const ports = [Number(values.port), Number(values.port) + 1] as const;
const password = 'kill-node-password';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cluster = await startPostgres();
const admin = new pg.Client({ connectionString: cluster.url });
await admin.connect();
await admin.query('CREATE DATABASE vdi');
await admin.end();
const url = new URL(cluster.url);
url.pathname = '/vdi';
const folder = mkdtempSync(join(tmpdir(), 'vdi-kill-node-'));

function node(name: string, port: number): ChildProcess {
  const dir = join(folder, name);
  mkdirSync(dir, { recursive: true });
  return spawn(process.execPath, ['--import', 'tsx', 'server/src/server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: url.toString(),
      DATA_DIR: dir,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_NAME: name,
      DEMO_PASSWORD: password,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function healthy(port: number): Promise<void> {
  for (let i = 0; i < 900; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/api/v3/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`node on port ${port} did not become healthy`);
}

const count = (rows: { state: string }[]) =>
  rows.reduce<Record<string, number>>((m, r) => ({ ...m, [r.state]: (m[r.state] ?? 0) + 1 }), {});

// Node A first: it seeds the database and makes the demo template's disk both nodes use.
const a = node('node-a', ports[0]);
await healthy(ports[0]);
const b = node('node-b', ports[1]);
await healthy(ports[1]);
const db = new pg.Client({ connectionString: url.toString() });
try {
  const login = await fetch(
    `http://127.0.0.1:${ports[0]}/authentication/login?provider=form&category_id=default`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ username: 'teacher', password }).toString(),
    },
  );
  const token = await login.text();
  const created = await fetch(`http://127.0.0.1:${ports[0]}/api/v3/deployments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'Killed node',
      desktop_name: 'Killed node desktop',
      template_id: 'demo-template',
      allowed: { groups: ['default-class-a'] },
    }),
  });
  const { id } = (await created.json()) as { id: string };
  await sleep(killAfterMs);
  a.kill('SIGKILL');
  const killed = Date.now();
  await db.connect();
  const states = async () =>
    (
      await db.query<{ id: string; state: string }>(
        'SELECT id, state FROM desktops WHERE tag = $1',
        [id],
      )
    ).rows;
  console.info(`at the kill: ${JSON.stringify(count(await states()))}`);
  let rows = await states();
  while (rows.some((r) => r.state === 'creating') && Date.now() - killed < 60_000) {
    await sleep(100);
    rows = await states();
  }
  const disks = (name: string) => {
    const dir = join(folder, name, 'disks');
    const ids = new Set(rows.map((r) => r.id));
    return existsSync(dir) ? readdirSync(dir).filter((f) => ids.has(f.split('.')[0] ?? '')) : [];
  };
  console.info(
    JSON.stringify({
      rows: rows.length,
      states: count(rows),
      finishedMsAfterKill: Date.now() - killed,
      disksMadeByA: disks('node-a').length,
      disksMadeByB: disks('node-b').length,
      jobsLeft: (await db.query('SELECT 1 FROM cluster_jobs')).rowCount,
    }),
  );
} finally {
  await db.end().catch(() => undefined);
  a.kill('SIGKILL');
  b.kill('SIGTERM');
  await new Promise((resolve) => b.once('exit', resolve));
  cluster.stop();
  rmSync(folder, { recursive: true, force: true });
}
