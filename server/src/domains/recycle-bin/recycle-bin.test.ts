/**
 * The recycle-bin detail tells the owner about a recycled desktop and its disk without any server
 * path: no string of the answer starts with the data directory or with '/'. Restoring the entry
 * brings the desktop back, once, under a free name.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecycleBinDetail } from '../../../../src/generated/validators.js';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, desktopRows, userRow } from '../../../test/support/fixtures.ts';

let t: TestApp;
let userToken: string;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  userToken = await login(t.app, 'user');
});
afterAll(async () => t.close());

/** Every string inside a JSON value. */
const stringsOf = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(stringsOf)
      : value && typeof value === 'object'
        ? Object.values(value).flatMap(stringsOf)
        : [];

describe('recycle bin', () => {
  it('shows a recycled desktop and its disk without a server path', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Recycled desktop');
    const del = await injectWithToken(t.app, userToken, {
      method: 'DELETE',
      url: `/api/v3/desktop/${id}`,
    });
    expect(del.statusCode, del.body).toBe(200);
    const [stored] = await t.app.database.query<{ id: string; data: { storages: unknown[] } }>(
      "SELECT id, data FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    if (!stored) throw new Error('no recycle-bin entry');
    // the server keeps the disk's path to purge it later
    expect(JSON.stringify(stored.data.storages)).toContain(t.config.dataDir);

    const res = await injectWithToken(t.app, userToken, {
      method: 'GET',
      url: `/api/v3/recycle_bin/${stored.id}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    const detail = res.json<{ storages: { id: string; directory_path: string }[] }>();
    expect(RecycleBinDetail(detail), JSON.stringify(RecycleBinDetail.errors)).toBe(true);
    expect(detail.storages).toHaveLength(1);
    expect(detail.storages[0]).toMatchObject({ id, directory_path: 'disks' });
    const strings = stringsOf(detail);
    expect(strings.length).toBeGreaterThan(5);
    expect(strings.filter((s) => s.startsWith(t.config.dataDir) || s.startsWith('/'))).toEqual([]);
    expect(res.body).not.toContain(t.config.dataDir);
  });

  it('makes one entry of a desktop deleted by several requests at once', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Deleted twice');
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        injectWithToken(t.app, userToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` }),
      ),
    );
    const codes = answers.map((res) => res.statusCode).sort();
    expect(codes.filter((code) => code === 200)).toHaveLength(1);
    expect(codes.filter((code) => code >= 500)).toEqual([]);
    const entries = await t.app.database.query(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    expect(entries).toHaveLength(1);
    expect(await desktopRows(t.app, 'id = $1', [id])).toEqual([]);
  });

  it('restores the entry: the desktop is back, stopped', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Restored desktop');
    // its disk file, which the restore finds in place
    await mkdir(dirname(t.app.engine.diskPath(id)), { recursive: true });
    await writeFile(t.app.engine.diskPath(id), 'disk');
    await injectWithToken(t.app, userToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` });
    expect(await desktopRows(t.app, 'id = $1', [id])).toHaveLength(0);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    const disks = async () =>
      (
        await injectWithToken(t.app, userToken, {
          method: 'GET',
          url: `/api/v3/recycle_bin/${entry?.id ?? ''}`,
        })
      ).json<{ storages: { id: string; status: string }[] }>().storages;
    expect(await disks()).toMatchObject([{ id, status: 'recycled' }]);
    const res = await injectWithToken(t.app, userToken, {
      method: 'PUT',
      url: `/api/v3/recycle_bin/restore/${entry?.id ?? ''}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    const row = await t.app.desktops.byId(id);
    expect(row).toMatchObject({ name: 'Restored desktop', state: 'stopped' });
    // the entry's disk is in use again
    expect(await disks()).toMatchObject([{ id, status: 'ready' }]);
  });

  it('a restored desktop whose disk file is gone is failed at restore time, with the reason', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Diskless desktop');
    await injectWithToken(t.app, userToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` });
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    const res = await injectWithToken(t.app, userToken, {
      method: 'PUT',
      url: `/api/v3/recycle_bin/restore/${entry?.id ?? ''}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.app.desktops.byId(id)).toMatchObject({
      state: 'failed',
      detail: 'The disk file of this desktop is missing',
    });
  });

  it('restores an entry once when five restores of it arrive at the same time', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Raced restore');
    await injectWithToken(t.app, userToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` });
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    const answers = await Promise.all(
      Array.from({ length: 5 }, () =>
        injectWithToken(t.app, userToken, {
          method: 'PUT',
          url: `/api/v3/recycle_bin/restore/${entry?.id ?? ''}`,
        }),
      ),
    );
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 428, 428, 428, 428]);
    for (const a of answers.filter((r) => r.statusCode === 428))
      expect(a.json().description_code).toBe('recycle_bin_not_recycled');
    expect(await desktopRows(t.app, 'id = $1', [id])).toHaveLength(1);
  });

  it('keeps a restored desktop and its disk when a permanent delete read the entry before the restore', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Raced purge');
    await injectWithToken(t.app, userToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` });
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    const entryId = entry?.id ?? '';
    // The delete's first read happens before the restore: it sees the entry still recycled.
    const stale = await t.app.recycleBin.get(entryId);
    const restore = await injectWithToken(t.app, userToken, {
      method: 'PUT',
      url: `/api/v3/recycle_bin/restore/${entryId}`,
    });
    expect(restore.statusCode, restore.body).toBe(200);
    const deletedDisks: string[] = [];
    const { get } = t.app.recycleBin;
    const { deleteDisk } = t.app.engine;
    let reads = 0;
    t.app.recycleBin.get = async (...args) => (reads++ === 0 ? stale : get(...args));
    t.app.engine.deleteDisk = async (path) => {
      deletedDisks.push(path);
      await deleteDisk.call(t.app.engine, path);
    };
    try {
      const remove = await injectWithToken(t.app, userToken, {
        method: 'DELETE',
        url: `/api/v3/recycle_bin/${entryId}`,
      });
      expect(remove.statusCode).toBe(428);
      expect(remove.json().description_code).toBe('recycle_bin_not_recycled');
    } finally {
      t.app.recycleBin.get = get;
      t.app.engine.deleteDisk = deleteDisk;
    }
    expect(deletedDisks).toEqual([]);
    expect((await t.app.recycleBin.get(entryId))?.status).toBe('restored');
    expect(await desktopRows(t.app, 'id = $1', [id])).toHaveLength(1);
  });

  it('restores under " (restored 2)" when the name and " (restored)" are both taken meanwhile', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await addDesktop(t.app, owner, 'Twice taken');
    await injectWithToken(t.app, userToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` });
    await addDesktop(t.app, owner, 'Twice taken');
    await addDesktop(t.app, owner, 'Twice taken (restored)');
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    const res = await injectWithToken(t.app, userToken, {
      method: 'PUT',
      url: `/api/v3/recycle_bin/restore/${entry?.id ?? ''}`,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.app.desktops.byId(id))?.name).toBe('Twice taken (restored 2)');
  });
});
