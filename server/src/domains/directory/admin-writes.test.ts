/**
 * Administration writes and their audit entries: each write appends one entry with the actor, the
 * target and before/after snapshots without secrets, in the same transaction; the audit table
 * refuses UPDATE and DELETE; the rule violations answer their codes (user_exists, group_exists,
 * enrollment_code_taken, category_exists, custom_url_name_taken, user_owns_items (media),
 * cannot_delete_self, group_has_users, category_has_users); a new password or a disabled account
 * ends the user's sessions; quotas are stored where the profile reads them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, addMedia, userRow } from '../../../test/support/fixtures.ts';

let t: TestApp;
let admin: string;
let manager: string;

const call = (token: string, method: string, url: string, payload?: unknown) =>
  injectWithToken(t.app, token, {
    method: method as 'GET',
    url: `/api/v3${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

interface Entry {
  id: string;
  actor: string;
  actor_name: string;
  actor_role: string;
  category: string | null;
  action: string;
  target_type: string;
  target_id: string;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

const auditCount = async () =>
  (await t.app.database.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log'))[0]?.n;
const latest = async (token = admin) =>
  (await call(token, 'GET', '/admin/audit')).json<Entry[]>()[0];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  admin = await login(t.app, 'admin');
  manager = await login(t.app, 'manager');
});

afterAll(async () => {
  await t.close();
});

describe('users', () => {
  let id = '';
  it('creates a user with one audit entry and no secret in it', async () => {
    const before = await auditCount();
    const res = await call(manager, 'POST', '/admin/users', {
      username: 'carol',
      name: 'Carol',
      email: 'carol@example.org',
      role: 'advanced',
      group: 'default-advanced',
      secondary_groups: ['default-class-a'],
      password: 'Secret-pass-1',
      quota: { desktops: 3, running: 1 },
    });
    expect(res.statusCode, res.body).toBe(200);
    id = res.json<{ id: string }>().id;
    expect(await auditCount()).toBe((before ?? 0) + 1);
    const entry = await latest();
    expect(entry).toMatchObject({
      action: 'adminUsers.create',
      actor_name: 'Demo Manager',
      actor_role: 'manager',
      category: 'default',
      target_type: 'user',
      target_id: id,
      before: null,
      after: { username: 'carol', role: 'advanced', secondary_groups: ['default-class-a'] },
    });
    const row = await userRow(t.app, 'carol');
    expect(JSON.stringify(entry)).not.toContain(row.passwordHash ?? 'no-hash');
    expect(JSON.stringify(entry)).not.toMatch(/argon2|Secret-pass-1|password_hash/);
    // the quota is the one the profile shows as the user's own restriction (once the category's
    // disclaimer is accepted the login is a plain one)
    await t.app.users.update(id, { disclaimerAcknowledged: true });
    const token = await login(t.app, 'carol', 'Secret-pass-1');
    const profile = await call(token, 'GET', '/user/profile');
    expect(profile.json()).toMatchObject({
      quota: { desktops: 3, running: 1 },
      restriction_applied: 'user_quota',
    });
  });

  it('refuses a duplicate username, a missing group and a weak password', async () => {
    const base = { name: 'X', role: 'user', group: 'default-users', password: 'Good-pass-12' };
    const dup = await call(admin, 'POST', '/admin/users', { ...base, username: 'carol' });
    expect([dup.statusCode, dup.json().description_code]).toEqual([409, 'user_exists']);
    const nogroup = await call(admin, 'POST', '/admin/users', {
      ...base,
      username: 'dave',
      group: 'nope',
    });
    expect([nogroup.statusCode, nogroup.json().description_code]).toEqual([404, 'group_not_found']);
    const weak = await call(admin, 'POST', '/admin/users', {
      ...base,
      username: 'dave',
      password: 'short',
    });
    expect([weak.statusCode, weak.json().description_code]).toEqual([
      400,
      'password_character_length',
    ]);
  });

  it('updates with before and after, and disabling ends the sessions', async () => {
    const token = await login(t.app, 'carol', 'Secret-pass-1');
    const res = await call(admin, 'PUT', `/admin/users/${id}`, { name: 'Carol B', active: false });
    expect(res.statusCode, res.body).toBe(200);
    const entry = await latest();
    expect(entry).toMatchObject({
      action: 'adminUsers.update',
      actor_name: 'Demo Admin',
      before: { name: 'Carol', active: true },
      after: { name: 'Carol B', active: false },
    });
    expect((await call(token, 'GET', '/user')).statusCode).toBe(401);
    await call(admin, 'PUT', `/admin/users/${id}`, { active: true });
  });

  it('sets a password: the policy applies, the sessions end, a reset is required', async () => {
    const token = await login(t.app, 'carol', 'Secret-pass-1');
    const weak = await call(admin, 'POST', `/admin/users/${id}/password`, {
      password: 'carol-123456',
    });
    expect(weak.json().description_code).toBe('password_username');
    const res = await call(admin, 'POST', `/admin/users/${id}/password`, {
      password: 'Fresh-pass-9',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await call(token, 'GET', '/user')).statusCode).toBe(401);
    expect((await userRow(t.app, 'carol')).passwordResetRequired).toBe(true);
    const entry = await latest();
    expect(entry?.action).toBe('adminUsers.setPassword');
    expect(JSON.stringify(entry)).not.toMatch(/Fresh-pass-9|argon2/);
    expect((await loginRequest(t.app, 'carol', 'Fresh-pass-9')).statusCode).toBe(200);
  });

  it('deletes a user who has no media, never oneself', async () => {
    const carol = await userRow(t.app, 'carol');
    await addMedia(t.app, carol, { id: 'carol-iso', kind: 'iso' });
    const owns = await call(admin, 'DELETE', `/admin/users/${id}`);
    expect(owns.statusCode).toBe(428);
    expect(owns.json()).toMatchObject({
      description_code: 'user_owns_items',
      params: { desktops: 0, templates: 0, media: 1, deployments: 0 },
    });
    await t.app.database.query('DELETE FROM media WHERE user_id = $1', [id]);
    // desktops go to the recycle bin with the account
    await addDesktop(t.app, carol, 'Carol desktop');
    const res = await call(admin, 'DELETE', `/admin/users/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(await t.app.users.byId(id)).toBeUndefined();
    expect(await latest()).toMatchObject({ action: 'adminUsers.delete', after: null });
    const self = (await userRow(t.app, 'admin')).id;
    const me = await call(admin, 'DELETE', `/admin/users/${self}`);
    expect([me.statusCode, me.json().description_code]).toEqual([428, 'cannot_delete_self']);
  });
});

describe('groups', () => {
  it('creates, refuses duplicates and taken codes, counts users, deletes an empty one', async () => {
    const res = await call(admin, 'POST', '/admin/groups', {
      name: 'Class C',
      category: 'default',
      enrollment: { user: 'CLASS-C-2026' },
      quota: { desktops: 2 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ id: string }>().id;
    expect(await latest()).toMatchObject({ action: 'adminGroups.create', target_id: id });
    const dup = await call(admin, 'POST', '/admin/groups', {
      name: 'class c',
      category: 'default',
    });
    expect([dup.statusCode, dup.json().description_code]).toEqual([409, 'group_exists']);
    const taken = await call(admin, 'PUT', `/admin/groups/${id}`, {
      enrollment: { advanced: 'WELCOME-USERS' },
    });
    expect([taken.statusCode, taken.json().description_code]).toEqual([
      409,
      'enrollment_code_taken',
    ]);
    // the code registers into the group
    expect(await t.app.users.enrollment('CLASS-C-2026')).toMatchObject({
      groupId: id,
      role: 'user',
    });
    const list = (await call(admin, 'GET', '/admin/groups')).json<
      { id: string; users: number }[]
    >();
    expect(list.find((g) => g.id === 'default-class-a')?.users).toBe(30);
    const busy = await call(admin, 'DELETE', '/admin/groups/default-class-a');
    expect([busy.statusCode, busy.json().description_code]).toEqual([428, 'group_has_users']);
    const gone = await call(admin, 'DELETE', `/admin/groups/${id}`);
    expect(gone.statusCode, gone.body).toBe(200);
    expect(await latest()).toMatchObject({ action: 'adminGroups.delete', after: null });
  });
});

describe('categories', () => {
  it('creates with a default group, keeps names unique, deletes only an empty one', async () => {
    const res = await call(admin, 'POST', '/admin/categories', {
      name: 'Night school',
      custom_url_name: 'night',
      quota: { desktops: 1 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json<{ id: string }>().id;
    const shown = await call(admin, 'GET', `/admin/categories/${id}`);
    expect(shown.json()).toMatchObject({ name: 'Night school', groups: 1, users: 0 });
    const groups = (await call(admin, 'GET', '/admin/groups')).json<
      { category: string; name: string }[]
    >();
    expect(groups.filter((g) => g.category === id).map((g) => g.name)).toEqual(['Night school']);
    const dup = await call(admin, 'POST', '/admin/categories', { name: 'night SCHOOL' });
    expect([dup.statusCode, dup.json().description_code]).toEqual([409, 'category_exists']);
    const url = await call(admin, 'POST', '/admin/categories', {
      name: 'Other',
      custom_url_name: 'night',
    });
    expect([url.statusCode, url.json().description_code]).toEqual([409, 'custom_url_name_taken']);
    const busy = await call(admin, 'DELETE', '/admin/categories/default');
    expect([busy.statusCode, busy.json().description_code]).toEqual([428, 'category_has_users']);
    const upd = await call(admin, 'PUT', `/admin/categories/${id}`, { maintenance: true });
    expect(upd.statusCode).toBe(200);
    expect(await latest()).toMatchObject({
      action: 'adminCategories.update',
      before: { maintenance: false },
      after: { maintenance: true },
    });
    const gone = await call(admin, 'DELETE', `/admin/categories/${id}`);
    expect(gone.statusCode, gone.body).toBe(200);
    expect((await call(admin, 'GET', `/admin/categories/${id}`)).statusCode).toBe(404);
  });
});

describe('audit log', () => {
  it('lists newest first; a manager reads only their category; entries cannot change', async () => {
    const all = (await call(admin, 'GET', '/admin/audit')).json<Entry[]>();
    expect(all.length).toBeGreaterThan(5);
    const times = all.map((e) => (e as unknown as { at: string }).at);
    expect([...times].sort().reverse()).toEqual(times);
    const mine = (await call(manager, 'GET', '/admin/audit')).json<Entry[]>();
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.category === 'default')).toBe(true);
    const foreign = all.find((e) => e.category !== 'default');
    expect(foreign).toBeDefined();
    expect((await call(manager, 'GET', `/admin/audit/${foreign?.id ?? ''}`)).statusCode).toBe(404);
    expect((await call(admin, 'GET', `/admin/audit/${foreign?.id ?? ''}`)).statusCode).toBe(200);
    const q = t.app.database.query;
    await expect(q("UPDATE audit_log SET actor_name = 'x'")).rejects.toThrow(/append-only/);
    await expect(q('DELETE FROM audit_log')).rejects.toThrow(/append-only/);
    expect((await call(admin, 'GET', '/admin/audit')).json<Entry[]>()).toEqual(all);
  });
});

describe('the last admin', () => {
  it('is never demoted or disabled: the portal keeps an enabled admin', async () => {
    const adminId = (await userRow(t.app, 'admin')).id;
    const managerId = (await userRow(t.app, 'manager')).id;
    // A second admin: the demo manager is promoted.
    const promoted = await call(admin, 'PUT', `/admin/users/${managerId}`, { role: 'admin' });
    expect(promoted.statusCode, promoted.body).toBe(200);
    const other = await login(t.app, 'manager');
    // With two admins one may go: the second demotes the demo admin...
    const demotedFirst = await call(other, 'PUT', `/admin/users/${adminId}`, { role: 'manager' });
    expect(demotedFirst.statusCode, demotedFirst.body).toBe(200);
    // ...but then it cannot disable or demote itself.
    const disabled = await call(other, 'PUT', `/admin/users/${managerId}`, { active: false });
    expect(disabled.statusCode).toBe(428);
    expect(disabled.json<{ description_code: string }>().description_code).toBe('last_admin');
    const demoted = await call(other, 'PUT', `/admin/users/${managerId}`, { role: 'user' });
    expect(demoted.json<{ description_code: string }>().description_code).toBe('last_admin');
    // Nothing changed, and the refusals left no audit entry behind.
    expect((await userRow(t.app, 'manager')).role).toBe('admin');
    expect(await latest(other)).toMatchObject({ action: 'adminUsers.update', target_id: adminId });
    // Both are restored.
    expect(
      (await call(other, 'PUT', `/admin/users/${adminId}`, { role: 'admin' })).statusCode,
    ).toBe(200);
    const back = await login(t.app, 'admin');
    expect(
      (await call(back, 'PUT', `/admin/users/${managerId}`, { role: 'manager' })).statusCode,
    ).toBe(200);
  });
});
