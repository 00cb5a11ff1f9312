/**
 * The events calls of the bookings and planning calendars with 2,000 events:
 *
 *   npx tsx scripts/bench/bookings-events.ts [--events 2000] [--runs 10] [--postgres]
 *
 * Builds the app IN this process on a fresh temp DATA_DIR (embedded PGlite, or a private
 * PostgreSQL with --postgres; HYPERVISOR=none, no demo images, no built SPA), seeds the demo, then
 * a reservable item whose one-unit profile is offered by N one-hour plans back to back, and a
 * desktop of `advanced` with N half-hour bookings, one in each plan (written straight to the
 * database). Over HTTP, as `advanced` and `admin`, it times until the whole answer is read:
 *
 * - GET /api/v3/bookings/user/{desktop}/desktop for the whole range: the N bookings and the N
 *   availability windows between them (2N events);
 * - GET /api/v3/bookings/user for the whole range: the caller's N bookings;
 * - GET /api/v3/admin/reservables_planner/{item}/{start}/{end}: the item's N plans.
 *
 * Prints, per call, the events answered, the bytes, the first request and the median [min-max] of
 * the runs.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { seedIfEmpty, demoGuestProperties, demoHardware } from '../../server/src/seed/index.ts';
import {
  bookings,
  desktops,
  plannerEvents,
  reservableItems,
  reservableProfiles,
} from '../../server/src/platform/db/schema.ts';
import { startPostgres, type PgCluster } from '../../tests/support/postgres.ts';

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '10' },
    postgres: { type: 'boolean', default: false },
  },
});
const N = Math.max(1, Number(args.events));
const RUNS = Math.max(1, Number(args.runs));
const PASSWORD = 'bench-demo-password';
const ROOT = join(import.meta.dirname, '..', '..');
const HOUR = 3_600_000;
const ITEM = 'bench-gpu';
const PROFILE = 'BENCH-GPU-1U';

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
};

let app: FastifyInstance | undefined;
let pg: PgCluster | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-bookings-'));

async function insertInChunks<T>(rows: T[], insert: (chunk: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += 500) await insert(rows.slice(i, i + 500));
}

/** The bench item, its plans, and a desktop of `advanced` with one booking in each plan. */
async function seedEvents(server: FastifyInstance, from: number): Promise<string> {
  const advanced = await server.users.findLocal('advanced', 'default');
  const admin = await server.users.findLocal('admin', 'default');
  if (!advanced || !admin) throw new Error('the demo accounts are missing');
  await server.db.insert(reservableItems).values({ id: ITEM, name: 'Bench GPU', type: 'gpus' });
  await server.db.insert(reservableProfiles).values({
    id: PROFILE,
    itemId: ITEM,
    name: 'Bench GPU 1U',
    profile: '1U',
    units: 1,
    allowed: { roles: [] },
  });
  const desktopId = randomUUID();
  await server.db.insert(desktops).values({
    id: desktopId,
    userId: advanced.id,
    categoryId: advanced.categoryId,
    groupId: advanced.groupId,
    name: 'Bench GPU desktop',
    state: 'stopped',
    hardware: { ...demoHardware(), reservables: { vgpus: [PROFILE] } },
    guestProperties: demoGuestProperties(),
  });
  const slots = Array.from({ length: N }, (_, i) => from + i * HOUR);
  await insertInChunks(slots, (chunk) =>
    server.db.insert(plannerEvents).values(
      chunk.map((at) => ({
        id: randomUUID(),
        itemType: 'gpus' as const,
        itemId: ITEM,
        subitemId: PROFILE,
        units: 1,
        startAt: new Date(at),
        endAt: new Date(at + HOUR),
        userId: admin.id,
      })),
    ),
  );
  await insertInChunks(slots, (chunk) =>
    server.db.insert(bookings).values(
      chunk.map((at, i) => ({
        id: randomUUID(),
        itemId: desktopId,
        itemType: 'desktop' as const,
        title: `Bench booking ${i + 1}`,
        startAt: new Date(at),
        endAt: new Date(at + HOUR / 2),
        userId: advanced.id,
        reservables: { vgpus: [PROFILE] },
        profileId: PROFILE,
        priority: 1,
      })),
    ),
  );
  return desktopId;
}

async function main(): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DEMO_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
    HYPERVISOR: 'none',
  };
  if (args.postgres) {
    pg = await startPostgres();
    env.DATABASE_URL = pg.url;
  }
  app = await buildApp({
    ...loadConfig(env, ROOT),
    port: 0,
    prepareImages: false,
    distDir: join(dataDir, 'no-dist'),
  });
  await seedIfEmpty(app, { password: PASSWORD });
  const from = Math.ceil(Date.now() / HOUR) * HOUR + HOUR;
  const to = from + N * HOUR;
  const seedStart = performance.now();
  const desktopId = await seedEvents(app, from);
  console.log(
    `seeded ${N} plans and ${N} bookings in ${((performance.now() - seedStart) / 1000).toFixed(1)} s (${args.postgres ? 'PostgreSQL' : 'PGlite'})`,
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const base = `http://127.0.0.1:${port}`;

  const login = async (username: string) => {
    const res = await fetch(`${base}/authentication/login?provider=form&category_id=default`, {
      method: 'POST',
      body: new URLSearchParams({ username, password: PASSWORD }),
    });
    if (res.status !== 200) throw new Error(`login ${username} -> ${res.status}`);
    return (await res.text()).trim();
  };
  const tokens = { advanced: await login('advanced'), admin: await login('admin') };
  const range = `startDate=${encodeURIComponent(new Date(from).toISOString())}&endDate=${encodeURIComponent(new Date(to).toISOString())}`;
  const calls: { label: string; url: string; token: string; expect: number }[] = [
    {
      label: `GET /bookings/user/{id}/desktop (${N} bookings + ${N} windows)`,
      url: `/api/v3/bookings/user/${desktopId}/desktop?${range}`,
      token: tokens.advanced,
      expect: 2 * N,
    },
    {
      label: `GET /bookings/user (${N} bookings)`,
      url: `/api/v3/bookings/user?${range}`,
      token: tokens.advanced,
      expect: N,
    },
    {
      label: `GET /admin/reservables_planner/{item}/{start}/{end} (${N} plans)`,
      url: `/api/v3/admin/reservables_planner/${ITEM}/${new Date(from).toISOString()}/${new Date(to).toISOString()}`,
      token: tokens.admin,
      expect: N,
    },
  ];
  let failed = false;
  for (const call of calls) {
    const times: number[] = [];
    let events = 0;
    let bytes = 0;
    for (let run = 0; run <= RUNS; run++) {
      const started = performance.now();
      const res = await fetch(`${base}${call.url}`, {
        headers: { authorization: `Bearer ${call.token}`, 'accept-encoding': 'identity' },
      });
      const body = await res.text();
      times.push(performance.now() - started);
      if (res.status !== 200)
        throw new Error(`${call.label} -> ${res.status} ${body.slice(0, 200)}`);
      events = (JSON.parse(body) as unknown[]).length;
      bytes = Buffer.byteLength(body);
    }
    const [first = 0, ...rest] = times;
    const ok = events === call.expect;
    failed ||= !ok;
    console.log(
      `${ok ? 'ok  ' : 'FAIL'} ${call.label}: ${events} events, ${(bytes / 1024).toFixed(0)} KiB; first ${first.toFixed(1)} ms, median ${median(rest).toFixed(1)} ms [${Math.min(...rest).toFixed(1)}-${Math.max(...rest).toFixed(1)}] over ${RUNS} runs`,
    );
  }
  if (failed) process.exitCode = 1;
}

async function cleanup(): Promise<void> {
  await app?.close().catch(() => undefined);
  pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    void cleanup().then(() => process.exit(130));
  });

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
