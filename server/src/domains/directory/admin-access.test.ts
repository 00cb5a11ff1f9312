/**
 * Who reaches the administration area: every operation of adminUsers, adminGroups,
 * adminCategories and audit (from the generated operation table) refuses `user` and `advanced`
 * with 403; a manager acts only in their own category (writes elsewhere 403, reads elsewhere
 * 404, lists leave the rest out), never on or as an admin; lists carry no secret.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type Operation } from '../../../../src/generated/api.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { userRow } from '../../../test/support/fixtures.ts';

const RESOURCES = ['adminUsers', 'adminGroups', 'adminCategories', 'audit'];
const adminOps = (Object.values(operations) as Operation[]).filter((op) =>
  RESOURCES.includes(op.resource),
);

let t: TestApp;
const tokens: Record<string, string> = {};

const call = (token: string, method: string, url: string, payload?: unknown) =>
  injectWithToken(t.app, token, {
    method: method as 'GET',
    url: `/api/v3${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  for (const name of ['admin', 'manager', 'advanced', 'user'])
    tokens[name] = await login(t.app, name);
  const res = await loginRequest(t.app, 'manager2', undefined, 'school2');
  expect(res.statusCode, res.body).toBe(200);
  tokens.manager2 = res.body;
});

afterAll(async () => {
  await t.close();
});

describe('role x route matrix', () => {
  it('covers every operation of the four resources, none planned', () => {
    // the four resources' CRUD, the CSV import and export, the audit, and resetting a user's
    // second factors
    expect(adminOps.length).toBe(21);
    expect(adminOps.filter((op) => op.planned)).toEqual([]);
  });

  for (const role of ['user', 'advanced'])
    for (const op of adminOps)
      it(`${role} gets 403 on ${op.key}`, async () => {
        const url = op.path.replace(/\{(\w+)\}/g, 'default-users');
        const res = await call(
          tokens[role] ?? '',
          op.method,
          url,
          op.body === 'json' ? {} : undefined,
        );
        expect(res.statusCode, res.body).toBe(403);
        expectErrorShape(res.json(), 'forbidden');
      });

  for (const op of adminOps.filter((o) => o.resource === 'adminCategories' && o.method !== 'GET'))
    it(`manager gets 403 on ${op.key}`, async () => {
      const url = op.path.replace(/\{(\w+)\}/g, 'default');
      const res = await call(tokens.manager ?? '', op.method, url, { name: 'x' });
      expect(res.statusCode, res.body).toBe(403);
    });

  it('admin and manager reach every list', async () => {
    for (const who of ['admin', 'manager'])
      for (const op of adminOps.filter((o) => o.name === 'list'))
        expect((await call(tokens[who] ?? '', 'GET', op.path)).statusCode).toBe(200);
  });
});

describe('manager scope', () => {
  it('lists only the own category', async () => {
    const users = (await call(tokens.manager2 ?? '', 'GET', '/admin/users')).json<
      { username: string; category: string }[]
    >();
    expect(users.map((u) => u.username)).toEqual(['manager2']);
    const groups = (await call(tokens.manager2 ?? '', 'GET', '/admin/groups')).json<
      { category: string }[]
    >();
    expect(groups.length).toBeGreaterThan(0);
    expect(groups.every((g) => g.category === 'school2')).toBe(true);
    const cats = (await call(tokens.manager2 ?? '', 'GET', '/admin/categories')).json<
      { id: string }[]
    >();
    expect(cats.map((c) => c.id)).toEqual(['school2']);
    const all = (await call(tokens.admin ?? '', 'GET', '/admin/users')).json<unknown[]>();
    expect(all.length).toBeGreaterThan(40);
  });

  it('refuses writes in another category (403) and hides its records (404)', async () => {
    const user = await userRow(t.app, 'user');
    const m2 = tokens.manager2 ?? '';
    expect((await call(m2, 'GET', `/admin/users/${user.id}`)).statusCode).toBe(404);
    expect((await call(m2, 'GET', '/admin/groups/default-users')).statusCode).toBe(404);
    expect((await call(m2, 'GET', '/admin/categories/default')).statusCode).toBe(404);
    for (const [method, url, payload] of [
      ['PUT', `/admin/users/${user.id}`, { name: 'Hacked' }],
      ['POST', `/admin/users/${user.id}/password`, { password: 'Another-pass-1' }],
      ['DELETE', `/admin/users/${user.id}`, undefined],
      ['PUT', '/admin/groups/default-users', { name: 'Hacked' }],
      ['DELETE', '/admin/groups/default-users', undefined],
    ] as const) {
      const res = await call(m2, method, url, payload);
      expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(403);
      expect(res.json().description_code).toBe('forbidden');
    }
    expect((await userRow(t.app, 'user')).name).toBe(user.name);
  });

  it('never creates, edits or makes an admin', async () => {
    const m = tokens.manager ?? '';
    const admin = await userRow(t.app, 'admin');
    const make = await call(m, 'POST', '/admin/users', {
      username: 'sneaky',
      name: 'Sneaky',
      role: 'admin',
      group: 'default-users',
      password: 'Sneaky-pass-1',
    });
    expect(make.statusCode, make.body).toBe(403);
    const user = await userRow(t.app, 'user');
    expect((await call(m, 'PUT', `/admin/users/${user.id}`, { role: 'admin' })).statusCode).toBe(
      403,
    );
    expect((await call(m, 'PUT', `/admin/users/${admin.id}`, { name: 'x' })).statusCode).toBe(403);
    expect(
      (await call(m, 'POST', `/admin/users/${admin.id}/password`, { password: 'Another-pass-1' }))
        .statusCode,
    ).toBe(403);
    expect((await call(m, 'DELETE', `/admin/users/${admin.id}`)).statusCode).toBe(403);
    expect(await t.app.users.findLocal('sneaky', 'default')).toBeUndefined();
    expect((await userRow(t.app, 'user')).role).toBe('user');
  });

  it('never shows an admin account to a manager: list, show, CSV export and the user search', async () => {
    const m = tokens.manager ?? '';
    const admin = await userRow(t.app, 'admin');
    const manager = await userRow(t.app, 'manager');
    // the seeded admin is in the manager's own category: only the role hides it
    expect(admin.categoryId).toBe(manager.categoryId);
    const list = await call(m, 'GET', '/admin/users');
    expect(list.statusCode, list.body).toBe(200);
    const listed = list.json<{ id: string; role: string }[]>();
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.map((u) => u.role)).not.toContain('admin');
    expect(listed.map((u) => u.id)).not.toContain(admin.id);
    const show = await call(m, 'GET', `/admin/users/${admin.id}`);
    expect(show.statusCode, show.body).toBe(404);
    expectErrorShape(show.json(), 'not_found');
    const csv = await call(m, 'GET', '/admin/users/csv');
    expect(csv.statusCode).toBe(200);
    expect(csv.body).not.toMatch(/^admin,/m);
    const search = (token: string) =>
      call(token, 'POST', '/admin/allowed/term/users', { term: 'adm' });
    const found = await search(m);
    expect(found.statusCode, found.body).toBe(200);
    expect(found.json<{ id: string }[]>().map((u) => u.id)).not.toContain(admin.id);
    // an admin still finds and reads the admin account
    expect((await search(tokens.admin ?? '')).json<{ id: string }[]>().map((u) => u.id)).toContain(
      admin.id,
    );
    expect((await call(tokens.admin ?? '', 'GET', `/admin/users/${admin.id}`)).statusCode).toBe(
      200,
    );
  });

  it("puts a manager's new user and group in the manager's category whatever is sent", async () => {
    const m2 = tokens.manager2 ?? '';
    const group = await call(m2, 'POST', '/admin/groups', { name: 'Pupils', category: 'default' });
    expect(group.statusCode, group.body).toBe(200);
    const groupId = group.json<{ id: string }>().id;
    const shown = await call(m2, 'GET', `/admin/groups/${groupId}`);
    expect(shown.json()).toMatchObject({ category: 'school2', users: 0 });
    const res = await call(m2, 'POST', '/admin/users', {
      username: 'pupil1',
      name: 'Pupil One',
      role: 'user',
      category: 'default',
      group: groupId,
      password: 'Pupil-pass-1',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await t.app.users.findLocal('pupil1', 'school2'))?.groupId).toBe(groupId);
    // a group of another category is refused
    const other = await call(m2, 'POST', '/admin/users', {
      username: 'pupil2',
      name: 'Pupil Two',
      role: 'user',
      group: 'default-users',
      password: 'Pupil-pass-1',
    });
    expect(other.statusCode).toBe(400);
    expect(other.json().description_code).toBe('group_not_in_category');
  });

  it('lists carry only allow-listed fields, never a secret', async () => {
    const user = await userRow(t.app, 'user');
    await t.app.users.update(user.id, {
      apiKeyHash: 'secret-api-key-hash-value',
      wgPrivateKey: 'secret-wg-private-key',
      passwordResetJti: 'secret-reset-jti',
    });
    const list = await call(tokens.admin ?? '', 'GET', '/admin/users');
    const one = await call(tokens.admin ?? '', 'GET', `/admin/users/${user.id}`);
    const csv = await call(tokens.admin ?? '', 'GET', '/admin/users/csv');
    for (const body of [list.body, one.body, csv.body]) {
      expect(body).not.toMatch(/argon2|secret-|password_hash|password_history|api_key|wg_/);
      expect(body).not.toContain(user.passwordHash ?? 'no-hash');
    }
    expect(Object.keys(one.json()).sort()).toEqual(
      [
        'id',
        'username',
        'name',
        'email',
        'role',
        'category',
        'category_name',
        'group',
        'group_name',
        'secondary_groups',
        'provider',
        'active',
        'email_verified',
        'password_reset_required',
        // whether a second factor is set (a boolean, never the factor's secret)
        'second_factor',
        'quota',
        'accessed',
        'created_at',
      ].sort(),
    );
  });
});
