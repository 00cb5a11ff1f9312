// The end-to-end portals: each Playwright worker runs its own portal (tests/e2e/fixtures.ts), the
// server bundle on <E2E_DATA_DIR>/worker-<slot>. The first slot's portal keeps the embedded
// database (PGlite, `npm start`'s default); the others each have a database of the run's
// PostgreSQL cluster (E2E_DATABASE_URL, started by `npm test` or the Playwright global set-up).
// PGlite runs PostgreSQL compiled to WebAssembly inside the portal's process: the route sweeps
// cost the portals 41 CPU-seconds on it against 16 (portals and PostgreSQL) on the cluster. A
// portal's first start makes its database and demo (migrations, seed, disks: about 8
// CPU-seconds on PGlite); `npm test` prepares the first workers' data while its last, mostly
// waiting, server tests run, so the portals then start as on a restart (about 2 CPU-seconds).
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SERVER_BUNDLE } from './build-server.mjs';

/** The demo accounts' password on every end-to-end portal. */
export const E2E_DEMO_PASSWORD = 'e2e-demo-password';

/**
 * Playwright's workers: one portal per core and one more (a test mostly waits, for a guest, a
 * socket event, a page, so the others fill the cores it leaves idle: two workers left the two
 * cores 30 % idle, three 10 %). E2E_WORKERS=1 runs the tests one after the other.
 */
export function e2eWorkers() {
  return Number(process.env.E2E_WORKERS ?? availableParallelism() + 1);
}

/** The data directory of the portal of slot `slot` (see claimPortalSlot). */
export function workerDataDir(e2eDataDir, slot) {
  return join(e2eDataDir, `worker-${slot}`);
}

/**
 * The next free slot of the run's shared portals, claimed for good by the calling worker. A
 * worker that starts the usual portal takes the lowest slot no worker has taken (an atomic
 * `mkdir`), so the first ones get the data `npm test` prepared, slot 0 the embedded database,
 * and a worker started again after a failure gets a fresh portal, whatever Playwright's worker
 * numbers are: the workers of the specs that bring a portal of their own start first.
 */
export function claimPortalSlot(e2eDataDir) {
  mkdirSync(e2eDataDir, { recursive: true });
  for (let slot = 0; ; slot++) {
    try {
      mkdirSync(join(e2eDataDir, `claimed-${slot}`));
      return slot;
    } catch (err) {
      if (err?.code !== 'EEXIST') throw err;
    }
  }
}

/** Frees every slot: a run's global set-up starts from none claimed on reused data. */
export function releasePortalSlots(e2eDataDir) {
  for (const entry of readdirSync(e2eDataDir, { withFileTypes: true }))
    if (entry.isDirectory() && /^claimed-\d+$/.test(entry.name))
      rmSync(join(e2eDataDir, entry.name), { recursive: true });
}

/**
 * The end-to-end spec files (names under `testDir`) whose portal has an environment of its own (a
 * `portalEnv` worker fixture: their own database, network or guacd double). Each needs a worker
 * of its own, which Playwright starts only once no test of the usual portal is left; so they run
 * first, beside the usual portals, rather than alone at the end.
 */
export function ownPortalSpecs(testDir) {
  return readdirSync(testDir)
    .filter((file) => file.endsWith('.spec.ts'))
    .filter((file) => /^\s*portalEnv:/m.test(readFileSync(join(testDir, file), 'utf8')))
    .sort();
}

/**
 * The database URL of the portal of slot `slot` on the cluster at `base` (made if missing), or
 * undefined for the embedded database: slot 0's, or every slot's without a cluster.
 */
export async function workerDatabaseUrl(base, slot) {
  if (!base || slot === 0) return undefined;
  const name = `e2e_worker_${slot}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } catch (err) {
    // 42P04: it exists (a portal started again on the same data).
    if (err?.code !== '42P04') throw err;
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The environment of every end-to-end portal, beside its worker's port, mail sink and media; its
 * database is `databaseUrl` when given, else the embedded one under `dataDir`.
 */
export function portalBaseEnv(dataDir, databaseUrl) {
  return {
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    DEMO_PASSWORD: E2E_DEMO_PASSWORD,
    QEMU_ACCEL: 'tcg',
    // Stopping desktops is tested; their guests ignore the power button, so each stop waits this
    // long before it is forced.
    DESKTOP_STOP_TIMEOUT: '5s',
    // The role-visibility screen writes here, never into the checkout's config/.
    PORTAL_CONFIG: join(dataDir, 'portal.json'),
    // The demo guests need no network, and the workers' portals share the host: no bridge, TAP or
    // dnsmasq of theirs outlives the run (networks have their own server test).
    NETWORK_MODE: 'none',
  };
}

/**
 * Prepares the data of the portals of slots 0 to count-1, one after the other (`server.mjs
 * --prepare`), their databases on the cluster at `databaseBase` (see workerDatabaseUrl); resolves
 * to a step result like the other quiet steps of `npm test`. A directory whose preparation failed
 * is removed, so its portal makes it on its first start as before.
 */
export async function preparePortalData(root, e2eDataDir, count, databaseBase) {
  const started = Date.now();
  let output = '';
  let ok = true;
  for (let index = 0; index < count; index++) {
    const dataDir = workerDataDir(e2eDataDir, index);
    const databaseUrl = await workerDatabaseUrl(databaseBase, index);
    const code = await new Promise((resolve) => {
      const child = spawn(process.execPath, [SERVER_BUNDLE, '--prepare'], {
        cwd: root,
        env: { ...process.env, ...portalBaseEnv(dataDir, databaseUrl) },
      });
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('close', resolve);
    });
    if (code !== 0) {
      ok = false;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return {
    name: 'end-to-end portals prepared',
    ok,
    output,
    seconds: (Date.now() - started) / 1000,
  };
}
