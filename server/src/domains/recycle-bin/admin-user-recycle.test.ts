/**
 * Deleting a user sends the account and what it owns to the deleting admin's recycle bin as one
 * `user` entry: the user can no longer log in, their desktops and templates leave their tables,
 * the entry's answers carry no secret; a restore brings the account back (same password) with its
 * items; a permanent delete of the entry removes the disks.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecycleBinDetail } from '../../../../src/generated/validators.js';
import type { UserRow } from '../../platform/db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, addTemplate, addUser, userRow } from '../../../test/support/fixtures.ts';

let t: TestApp;
let admin: string;
let dora: UserRow;
let desktopId = '';
let templateId = '';
let desktopDisk = '';
let templateDisk = '';

const call = (token: string, method: string, url: string) =>
  injectWithToken(t.app, token, { method: method as 'GET', url: `/api/v3${url}` });

const userEntries = async () =>
  (await call(admin, 'GET', '/recycle_bin/item_count/user'))
    .json<{ id: string; item_type: string; item_name: string; desktops: number }[]>()
    .filter((e) => e.item_type === 'user');

const owned = async (table: 'desktops' | 'templates') =>
  (
    await t.app.database.query<{ id: string }>(`SELECT id FROM ${table} WHERE user_id = $1`, [
      dora.id,
    ])
  ).map((r) => r.id);

const disk = async (path: string) => {
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, 'disk');
  return path;
};

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  admin = await login(t.app, 'admin');
  const seeded = await userRow(t.app, 'user');
  dora = await addUser(t.app, {
    username: 'dora',
    role: 'advanced',
    categoryId: seeded.categoryId,
    groupId: seeded.groupId,
  });
  templateId = randomUUID();
  templateDisk = await disk(join(t.config.dataDir, 'templates', `${templateId}.qcow2`));
  await addTemplate(t.app, dora, { id: templateId, name: 'Dora template', diskPath: templateDisk });
  desktopId = await addDesktop(t.app, dora, 'Dora desktop', { state: 'started' });
  desktopDisk = await disk(t.app.engine.diskPath(desktopId));
});
afterAll(async () => t.close());

describe('deleting a user to the recycle bin', () => {
  let entryId = '';

  it('moves the account and its items into one entry of the admin', async () => {
    const token = await login(t.app, 'dora');
    // an entry dora owned passes to the admin
    const own = await addDesktop(t.app, dora, 'Dora old desktop');
    expect((await call(token, 'DELETE', `/desktop/${own}`)).statusCode).toBe(200);

    const res = await call(admin, 'DELETE', `/admin/users/${dora.id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect((await loginRequest(t.app, 'dora')).statusCode).not.toBe(200);
    expect(await owned('desktops')).toEqual([]);
    expect(await owned('templates')).toEqual([]);
    expect(await t.app.users.byId(dora.id)).toBeUndefined();

    const entries = await userEntries();
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ item_name: 'dora', desktops: 1 });
    entryId = entries[0]?.id ?? '';
    const moved = await t.app.database.query<{ owner_id: string }>(
      "SELECT owner_id FROM recycle_bin WHERE item_type = 'desktop' AND item_name = 'Dora old desktop'",
    );
    expect(moved).toEqual([{ owner_id: (await userRow(t.app, 'admin')).id }]);
    expect(existsSync(desktopDisk) && existsSync(templateDisk)).toBe(true);
  });

  it('answers no secret of the account', async () => {
    const list = await call(admin, 'GET', '/recycle_bin/item_count/user');
    const detail = await call(admin, 'GET', `/recycle_bin/${entryId}`);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(RecycleBinDetail(detail.json()), JSON.stringify(RecycleBinDetail.errors)).toBe(true);
    expect(detail.json()).toMatchObject({ item_type: 'user', item_name: 'dora' });
    for (const body of [list.body, detail.body]) {
      expect(body).not.toContain(dora.passwordHash ?? 'no hash');
      expect(body).not.toMatch(/argon2|password|wg_|api_key|jti/i);
    }
  });

  it('restores the account with its password and its items', async () => {
    const res = await call(admin, 'PUT', `/recycle_bin/restore/${entryId}`);
    expect(res.statusCode, res.body).toBe(200);
    expect((await loginRequest(t.app, 'dora')).statusCode).toBe(200);
    expect(await owned('desktops')).toEqual([desktopId]);
    expect(await owned('templates')).toEqual([templateId]);
    const [desktop] = await t.app.database.query<{ state: string; name: string }>(
      'SELECT state, name FROM desktops WHERE id = $1',
      [desktopId],
    );
    expect(desktop).toEqual({ state: 'stopped', name: 'Dora desktop' });
  });

  it('restoring a user writes an audit entry: who brought which account back', async () => {
    const rows = await t.app.database.query<{
      action: string;
      target_type: string;
      target_name: string;
      actor_role: string;
      before: unknown;
      after: { username?: string } | null;
    }>(
      'SELECT action, target_type, target_name, actor_role, before, after FROM audit_log WHERE target_id = $1 ORDER BY at',
      [dora.id],
    );
    expect(rows.map((r) => r.action)).toEqual(['adminUsers.delete', 'recycle-bins.restore']);
    expect(rows[1]).toMatchObject({
      target_type: 'user',
      target_name: 'dora',
      actor_role: 'admin',
      before: null,
    });
    expect(rows[1]?.after?.username).toBe('dora');
  });

  it('refuses a restore when the user name was taken again', async () => {
    expect((await call(admin, 'DELETE', `/admin/users/${dora.id}`)).statusCode).toBe(200);
    const [entry] = (await userEntries()).filter((e) => e.id !== entryId);
    if (!entry) throw new Error('no second entry');
    entryId = entry.id;
    const again = await addUser(t.app, {
      username: 'dora',
      role: 'user',
      categoryId: dora.categoryId,
      groupId: dora.groupId,
    });
    const res = await call(admin, 'PUT', `/recycle_bin/restore/${entryId}`);
    expect([res.statusCode, res.json().description_code]).toEqual([409, 'user_exists']);
    expect(await owned('desktops')).toEqual([]);
    expect((await call(admin, 'DELETE', `/admin/users/${again.id}`)).statusCode).toBe(200);
  });

  it('deletes the disks for good with the entry', async () => {
    const res = await call(admin, 'DELETE', `/recycle_bin/${entryId}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(existsSync(desktopDisk)).toBe(false);
    expect(existsSync(templateDisk)).toBe(false);
    expect((await userEntries()).some((e) => e.id === entryId)).toBe(false);
  });
});
