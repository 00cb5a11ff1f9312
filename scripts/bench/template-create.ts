/**
 * Template creation time: a template made from a stopped desktop through POST /api/v3/template,
 * for the demo disk and for a 2 GiB disk.
 *
 *   npx tsx scripts/bench/template-create.ts [--runs 3] [--size-gib 2] [--postgres]
 *
 * Builds the app IN this process on a fresh temp DATA_DIR (embedded PGlite, or a private
 * PostgreSQL with --postgres), with the demo images, and logs in as `advanced`. Per run it makes a
 * desktop through POST /api/v3/persistent_desktop, then times POST /api/v3/template: the answer
 * (the request only records the intent) and the moment the template is `ready` (the socket event
 * of the server's event bus), i.e. when `qemu-img convert` has flattened the desktop's disk chain
 * into the template's own standalone image. It checks that image with `qemu-img info` (no
 * backing file).
 *
 * The 2 GiB case: a 2 GiB base image whose every byte is written (a non-zero pattern, so qemu-img
 * can not skip it), registered as a template; the desktop is an overlay on it with 256 MiB written
 * of its own, so the copy reads a real two-level chain. The page cache is warm (the data was just
 * written): the figures are the server side of the work, not a cold disk read. Everything is
 * removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../server/src/app.ts';
import { loadConfig } from '../../server/src/platform/config/config.ts';
import { templates } from '../../server/src/platform/db/schema.ts';
import { demoGuestProperties, demoHardware, seedIfEmpty } from '../../server/src/seed/index.ts';
import { startPostgres, type PgCluster } from '../../tests/support/postgres.ts';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'size-gib': { type: 'string', default: '2' },
    postgres: { type: 'boolean', default: false },
  },
});
const RUNS = Math.max(1, Number(args.runs));
const SIZE_GIB = Math.max(1, Number(args['size-gib']));
const PASSWORD = 'bench-demo-password';
const ROOT = join(import.meta.dirname, '..', '..');
const MIB = 1024 * 1024;
const CHUNK_MIB = 256;

let app: FastifyInstance | undefined;
let pg: PgCluster | undefined;
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-template-'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: readonly number[]) =>
  [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? Number.NaN;
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

function qemuImg(argv: string[]): string {
  return execFileSync('qemu-img', argv, { encoding: 'utf8' });
}

/** Writes `mib` MiB of a non-zero pattern from `offsetMib` into a qcow2, in chunks. */
function fill(path: string, offsetMib: number, mib: number, pattern: number): void {
  for (let done = 0; done < mib; done += CHUNK_MIB) {
    const size = Math.min(CHUNK_MIB, mib - done);
    execFileSync('qemu-io', [
      '-f',
      'qcow2',
      '-c',
      `write -P ${pattern} ${offsetMib + done}M ${size}M`,
      path,
    ]);
  }
}

interface Run {
  answerMs: number;
  readyMs: number;
  bytes: number;
}

async function main(): Promise<void> {
  const env: NodeJS.ProcessEnv = {
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DEMO_PASSWORD: PASSWORD,
    LOG_LEVEL: 'warn',
  };
  if (args.postgres) {
    pg = await startPostgres();
    env.DATABASE_URL = pg.url;
  }
  const config = {
    ...loadConfig(env, ROOT),
    port: 0,
    prepareImages: true,
    distDir: join(dataDir, 'no-dist'),
  };
  const built = await buildApp(config);
  app = built;
  await seedIfEmpty(built, { password: PASSWORD });
  await built.engine.reconcile();

  const ready = new Map<string, number>();
  built.events.subscribe((event) => {
    if (event.name === 'templates.updated' && event.payload.status === 'ready')
      ready.set(event.payload.id, performance.now());
  });
  const login = await built.inject({
    method: 'POST',
    url: '/authentication/login?provider=form&category_id=default',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username: 'advanced', password: PASSWORD }).toString(),
  });
  if (login.statusCode !== 200) throw new Error(`login -> ${login.statusCode}`);
  const token = login.body;
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    built.inject({
      method,
      url: `/api/v3${url}`,
      headers: { authorization: `Bearer ${token}` },
      ...(payload ? { payload } : {}),
    });

  const stoppedDesktop = async (name: string, templateId: string, diskGib?: number) => {
    const res = await api('POST', '/persistent_desktop', {
      template_id: templateId,
      name,
      ...(diskGib ? { hardware: { disk_size: diskGib } } : {}),
    });
    if (res.statusCode !== 200) throw new Error(`desktop -> ${res.statusCode} ${res.body}`);
    const { id } = res.json<{ id: string }>();
    for (let i = 0; i < 600; i++) {
      const row = await built.desktops.byId(id);
      if (row?.state === 'stopped' && row.diskPath) return { id, disk: row.diskPath };
      if (row?.state === 'failed') throw new Error(`desktop failed: ${row.detail ?? ''}`);
      await sleep(50);
    }
    throw new Error('desktop not ready');
  };

  const timeTemplate = async (desktopId: string, name: string): Promise<Run> => {
    const t0 = performance.now();
    const res = await api('POST', '/template', { desktop_id: desktopId, name });
    const answerMs = performance.now() - t0;
    if (res.statusCode !== 200) throw new Error(`template -> ${res.statusCode} ${res.body}`);
    const { id } = res.json<{ id: string }>();
    for (;;) {
      const at = ready.get(id);
      if (at !== undefined) {
        const row = await built.templates.get(id);
        const info = JSON.parse(qemuImg(['info', '--output=json', row?.diskPath ?? ''])) as {
          'backing-filename'?: string;
          'actual-size': number;
        };
        if (info['backing-filename'] !== undefined)
          throw new Error('the template has a backing file');
        return { answerMs, readyMs: at - t0, bytes: info['actual-size'] };
      }
      const row = await built.templates.get(id);
      if (row?.status === 'failed') throw new Error(`template failed: ${row.detail ?? ''}`);
      await sleep(5);
    }
  };

  const report = (label: string, runs: Run[]) => {
    const readyMs = runs.map((r) => r.readyMs);
    const bytes = runs[0]?.bytes ?? 0;
    console.log(
      `${label}: answer ${fmt(median(runs.map((r) => r.answerMs)))} (median), ready ${fmt(median(readyMs))} ` +
        `[${fmt(Math.min(...readyMs))}–${fmt(Math.max(...readyMs))}] over ${runs.length} runs; ` +
        `template image ${(bytes / MIB).toFixed(1)} MiB, ${(bytes / MIB / (median(readyMs) / 1000)).toFixed(0)} MiB/s`,
    );
  };

  console.log(
    `database: ${args.postgres ? 'PostgreSQL' : 'PGlite'}, ${RUNS} runs per case, DATA_DIR ${dataDir}`,
  );
  const demoRuns: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    const desktop = await stoppedDesktop(`Bench demo ${i}`, 'demo-template');
    demoRuns.push(await timeTemplate(desktop.id, `Bench demo template ${i}`));
  }
  report('demo disk (GRUB rescue image + overlay)', demoRuns);

  const base = join(dataDir, 'bench', `base-${SIZE_GIB}g.qcow2`);
  mkdirSync(join(dataDir, 'bench'), { recursive: true });
  const prepStart = performance.now();
  qemuImg(['create', '-q', '-f', 'qcow2', base, `${SIZE_GIB}G`]);
  fill(base, 0, SIZE_GIB * 1024, 0x5a);
  const admin = await built.users.findLocal('admin', 'default');
  if (!admin) throw new Error('no admin');
  await built.db.insert(templates).values({
    id: 'bench-base',
    name: `Bench ${SIZE_GIB} GiB base`,
    userId: admin.id,
    categoryId: admin.categoryId,
    groupId: admin.groupId,
    hardware: { ...demoHardware(), disk_size: SIZE_GIB },
    guestProperties: demoGuestProperties(),
    diskPath: base,
    allowed: { roles: [], categories: false, groups: false, users: false },
  });
  console.log(
    `prepared a ${SIZE_GIB} GiB base image, every byte written, in ${((performance.now() - prepStart) / 1000).toFixed(1)} s`,
  );
  const bigRuns: Run[] = [];
  for (let i = 0; i < RUNS; i++) {
    const desktop = await stoppedDesktop(`Bench big ${i}`, 'bench-base', SIZE_GIB);
    fill(desktop.disk, 0, CHUNK_MIB, 0xa5);
    bigRuns.push(await timeTemplate(desktop.id, `Bench big template ${i}`));
  }
  report(`${SIZE_GIB} GiB disk (written base + 256 MiB overlay)`, bigRuns);
}

main()
  .catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(async () => {
    await app?.close().catch(() => undefined);
    try {
      pg?.stop();
    } catch (err) {
      console.error('postgres stop failed:', err);
    }
    rmSync(dataDir, { recursive: true, force: true });
  });
