/**
 * The boot check of disk files against the rows: an orphan file is moved to the quarantine with its
 * relative path (never deleted), the files of a template copy or a download in progress, recent
 * files and symbolic links are left alone, a stopped desktop whose disk is gone becomes failed with
 * the reason, an interrupted disk operation ends, a recycle-bin entry whose disk is gone stays
 * restorable and says so, and the check runs by itself when the server starts.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { buildApp } from '../../app.ts';
import { desktops } from '../../platform/db/schema.ts';
import { checkDisks, MISSING_DISK_DETAIL, QUARANTINE_DIR } from './disk-check.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, addMedia, addTemplate, userRow } from '../../../test/support/fixtures.ts';

let t: TestApp;
const lines: string[] = [];
const outside = join(process.env.TMPDIR ?? '/tmp', `disk-check-outside-${process.pid}.qcow2`);

beforeAll(async () => {
  t = await buildTestApp(
    await createTestDatabase(),
    { logLevel: 'info', logFormat: 'json' },
    { logSink: { write: (chunk: string) => lines.push(chunk) } },
  );
});
afterAll(async () => {
  await rm(outside, { force: true });
  await t.close();
});

const disks = () => join(t.config.dataDir, 'disks');
const TWO_HOURS_AGO = new Date(Date.now() - 2 * 3_600_000);

/** A file of some bytes, last changed two hours ago unless `fresh`. */
const file = async (path: string, fresh = false) => {
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, 'QFI\xfb some disk bytes');
  if (!fresh) await utimes(path, TWO_HOURS_AGO, TWO_HOURS_AGO);
};

/** The log lines (pino JSON) with this message. */
const logged = (msg: string) =>
  lines
    .join('')
    .split('\n')
    .filter((l) => l.includes(`"msg":"${msg}"`))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('disk check', () => {
  it('quarantines orphans, leaves work in progress alone and settles rows whose disk is gone', async () => {
    const owner = await userRow(t.app, 'user');
    const token = await login(t.app, 'user');
    // orphans
    await file(join(disks(), 'orphan.qcow2'));
    await file(join(disks(), 'old', 'left-behind.qcow2'));
    // left alone: recent, a link to a file outside the data directory, files of work in progress
    await file(join(disks(), 'fresh.qcow2'), true);
    await file(outside);
    await symlink(outside, join(disks(), 'link.qcow2'));
    const copying = join(disks(), 'templates', 'copying-template.qcow2');
    await addTemplate(t.app, owner, {
      id: 'copying-template',
      status: 'creating',
      diskPath: copying,
    });
    await file(`${copying}.part`);
    const downloading = join(disks(), 'downloads', 'media-in-flight.iso');
    await addMedia(t.app, owner, {
      id: 'media-in-flight',
      kind: 'iso',
      status: 'downloading',
      path: downloading,
    });
    await file(join(disks(), 'downloads', 'tmp-media-in-flight-chunk'));
    // named by rows: a desktop's disk, a recycled desktop's disk
    const kept = await addDesktop(t.app, owner, 'Kept desktop');
    await t.app.hypervisor.prepareDisk({ path: t.app.engine.diskPath(kept), sizeGiB: 1 });
    await utimes(t.app.engine.diskPath(kept), TWO_HOURS_AGO, TWO_HOURS_AGO);
    // rows whose disk is gone, or an interrupted operation
    const lost = await addDesktop(t.app, owner, 'Lost disk');
    const moved = await addDesktop(t.app, owner, 'Data directory moved');
    await t.app.db
      .update(desktops)
      .set({ diskPath: `/old-data-dir/disks/${moved}.qcow2` })
      .where(eq(desktops.id, moved));
    await file(t.app.engine.diskPath(moved));
    const interrupted = await addDesktop(t.app, owner, 'Interrupted resize', {
      state: 'maintenance',
      currentAction: 'resize',
    });
    await t.app.hypervisor.prepareDisk({ path: t.app.engine.diskPath(interrupted), sizeGiB: 1 });
    const recycledDesktop = await addDesktop(t.app, owner, 'Recycled, disk gone');
    await t.app.hypervisor.prepareDisk({
      path: t.app.engine.diskPath(recycledDesktop),
      sizeGiB: 1,
    });
    const del = await injectWithToken(t.app, token, {
      method: 'DELETE',
      url: `/api/v3/desktop/${recycledDesktop}`,
    });
    expect(del.statusCode, del.body).toBe(200);
    await rm(t.app.engine.diskPath(recycledDesktop));
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [recycledDesktop],
    );
    if (!entry) throw new Error('no recycle bin entry');

    lines.length = 0;
    const report = await checkDisks(t.app);

    expect(report.quarantined.sort()).toEqual(['old/left-behind.qcow2', 'orphan.qcow2']);
    const [stamp, ...more] = readdirSync(join(disks(), QUARANTINE_DIR));
    expect(more).toEqual([]);
    const quarantine = join(disks(), QUARANTINE_DIR, stamp ?? '');
    expect(existsSync(join(quarantine, 'orphan.qcow2'))).toBe(true);
    expect(existsSync(join(quarantine, 'old', 'left-behind.qcow2'))).toBe(true);
    expect(existsSync(join(disks(), 'orphan.qcow2'))).toBe(false);

    expect(report.kept).toEqual({ inProgress: 2, recent: 1, links: 1 });
    for (const path of [
      join(disks(), 'fresh.qcow2'),
      `${copying}.part`,
      join(disks(), 'downloads', 'tmp-media-in-flight-chunk'),
      t.app.engine.diskPath(kept),
      outside,
    ])
      expect(existsSync(path), path).toBe(true);
    expect(await readlink(join(disks(), 'link.qcow2'))).toBe(outside);

    expect(report.failedDesktops).toContain(lost);
    expect(report.failedDesktops).not.toContain(kept);
    // a file of the same name in the disks folder: neither quarantined nor its desktop failed
    expect(report.foundElsewhere).toEqual([moved]);
    expect(existsSync(t.app.engine.diskPath(moved))).toBe(true);
    expect((await t.app.desktops.byId(moved))?.state).toBe('stopped');
    expect(await t.app.desktops.byId(lost)).toMatchObject({
      state: 'failed',
      detail: MISSING_DISK_DETAIL,
    });
    expect((await t.app.desktops.byId(kept))?.state).toBe('stopped');
    const start = await injectWithToken(t.app, token, {
      method: 'GET',
      url: `/api/v3/desktop/start/${lost}`,
    });
    // a failed desktop offers "retry", not "start": nothing boots on the missing disk
    expect(start.statusCode, start.body).toBe(428);
    expect(start.json()).toMatchObject({ description_code: 'unable_to_start_desktop_from' });
    expect(await t.app.hypervisor.status(lost)).toBe('absent');

    expect(report.interrupted).toEqual([interrupted]);
    expect(await t.app.desktops.byId(interrupted)).toMatchObject({
      state: 'stopped',
      currentAction: null,
    });

    expect(report.entriesMissingDisk).toEqual([entry.id]);
    expect((await t.app.recycleBin.get(entry.id))?.status).toBe('recycled');
    const detail = await injectWithToken(t.app, token, {
      method: 'GET',
      url: `/api/v3/recycle_bin/${entry.id}`,
    });
    expect(detail.json<{ storages: { status: string }[] }>().storages).toEqual([
      expect.objectContaining({ id: recycledDesktop, status: 'non_existing' }),
    ]);

    const [summary] = logged('disk check');
    expect(summary).toMatchObject({
      quarantined: 2,
      keptInProgress: 2,
      keptRecent: 1,
      links: 1,
      interrupted: 1,
      entriesMissingDisk: 1,
    });
    expect(summary?.failedDesktops).toBe(report.failedDesktops.length);
    expect(logged('disk check: a disk file no row names was moved to the quarantine')).toHaveLength(
      2,
    );

    // a second run finds nothing more to do
    const again = await checkDisks(t.app);
    expect(again.quarantined).toEqual([]);
    expect(again.failedDesktops).toEqual([]);
    expect(again.entriesMissingDisk).toEqual([]);
  });

  it('runs by itself when the server starts', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Disk lost while down');
    await t.app.hypervisor.prepareDisk({ path: t.app.engine.diskPath(id), sizeGiB: 1 });
    await t.app.close();
    await rm(t.app.engine.diskPath(id));
    await file(join(disks(), 'orphan-while-down.qcow2'));
    lines.length = 0;
    t.app = await buildApp(t.config, {
      logSink: { write: (chunk: string) => lines.push(chunk) },
    });
    const [row] = await t.app.db.select().from(desktops).where(eq(desktops.id, id));
    expect(row).toMatchObject({ state: 'failed', detail: MISSING_DISK_DETAIL });
    expect(existsSync(join(disks(), 'orphan-while-down.qcow2'))).toBe(false);
    expect(logged('disk check')).toEqual([expect.objectContaining({ quarantined: 1 })]);
  });
});
