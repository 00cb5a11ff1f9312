/**
 * Recycle-bin retention on real disk files: the purge timer deletes for good the entries older than
 * the configured retention (their disk files go, the owner hears `update_recycle_bin`), keeps the
 * younger ones, keeps everything when the retention is "forever" (null), and with a retention of 0
 * a deleted desktop's disk goes at once.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, userRow } from '../../../test/support/fixtures.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const HOUR_MS = 3_600_000;

let t: TestApp;
let token: string;
const published: ResourceEvent[] = [];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  token = await login(t.app, 'user');
  t.app.events.subscribe((event) => published.push(event));
});
afterAll(async () => t.close());

const until = untilWithin(10_000);

/** A desktop with a real disk, deleted to the recycle bin `hoursAgo` hours ago: entry id and disk path. */
const recycled = async (name: string, hoursAgo: number) => {
  const owner = await userRow(t.app, 'user');
  const id = await addDesktop(t.app, owner, name);
  const path = t.app.engine.diskPath(id);
  await t.app.hypervisor.prepareDisk({ path, sizeGiB: 1 });
  const res = await injectWithToken(t.app, token, {
    method: 'DELETE',
    url: `/api/v3/desktop/${id}`,
  });
  expect(res.statusCode, res.body).toBe(200);
  const [entry] = await t.app.database.query<{ id: string }>(
    "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
    [id],
  );
  if (!entry) throw new Error('no recycle bin entry');
  await age(entry.id, hoursAgo);
  expect(existsSync(path)).toBe(true);
  return { entry: entry.id, path, ownerId: owner.id };
};

const age = (entryId: string, hoursAgo: number) =>
  t.app.database.query('UPDATE recycle_bin SET accessed = $2 WHERE id = $1', [
    entryId,
    new Date(Date.now() - hoursAgo * HOUR_MS),
  ]);

const statusOf = async (entryId: string) => (await t.app.recycleBin.get(entryId))?.status ?? 'gone';

const entryEvents = (entryId: string) =>
  published.flatMap((e) =>
    e.name === 'recycle-bins.updated' && e.payload.id === entryId
      ? [{ status: e.payload.status, ownerId: e.ownerId }]
      : [],
  );

describe('recycle bin purge', () => {
  it('purges on the timer the entries older than the retention, with their disks, and keeps younger ones', async () => {
    const retention = await t.app.recycleBinService.cutoffHours();
    if (retention === null || retention < 2)
      throw new Error(`unexpected default retention ${retention}`);
    const old = await recycled('Old enough', retention + 1);
    const young = await recycled('Too young', retention - 1);
    published.length = 0;
    t.app.recycleBinPurge.start(50);
    try {
      await until(
        () => statusOf(old.entry),
        (s) => s === 'deleted',
      );
    } finally {
      t.app.recycleBinPurge.stop();
    }
    expect(existsSync(old.path)).toBe(false);
    expect(entryEvents(old.entry)).toEqual([
      { status: 'deleting', ownerId: old.ownerId },
      { status: 'deleted', ownerId: old.ownerId },
    ]);
    expect(await statusOf(young.entry)).toBe('recycled');
    expect(existsSync(young.path)).toBe(true);
    expect(entryEvents(young.entry)).toEqual([]);
    const count = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/recycle_bin/count',
    });
    expect(count.json()).toBe(1);
  });

  it('keeps every entry when the retention is forever (null)', async () => {
    await t.app.settings.set('recycle_bin_cutoff_time', null);
    const ancient = await recycled('Kept forever', 10_000);
    expect(await t.app.recycleBinPurge.runOnce()).toEqual([]);
    expect(await statusOf(ancient.entry)).toBe('recycled');
    expect(existsSync(ancient.path)).toBe(true);
  });

  it('with a retention of 0 deletes a desktop at once and purges what is still in the bin', async () => {
    const waiting = await recycled('Waiting in the bin', 0.01);
    await t.app.settings.set('recycle_bin_cutoff_time', 0);
    const cutoff = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/recycle-bin/user/cutoff-time',
    });
    expect(cutoff.json()).toEqual({ recycle_bin_cuttoff_time: 0 });

    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Deleted at once');
    const path = t.app.engine.diskPath(id);
    await t.app.hypervisor.prepareDisk({ path, sizeGiB: 1 });
    const res = await injectWithToken(t.app, token, {
      method: 'DELETE',
      url: `/api/v3/desktop/${id}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(existsSync(path)).toBe(false);
    expect(
      await t.app.database.query(
        "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
        [id],
      ),
    ).toEqual([]);

    expect(await t.app.recycleBinPurge.runOnce()).toContain(waiting.entry);
    expect(await statusOf(waiting.entry)).toBe('deleted');
    expect(existsSync(waiting.path)).toBe(false);
  });
});
