/**
 * The administration of reservable items, profiles and booking priority rules: admins only (every
 * generated operation refuses the other roles), a new item and profile are offered to the users
 * they are open to and can be planned at once, a new rule group applies to the next booking, what
 * is in use is not deleted (428 reservable_in_use), units never drop below what bookings take at
 * once (428 units_in_use), ids and names are unique (409), and every write leaves an audit entry.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { operations } from '../../../../src/generated/api.ts';
import { auditLog } from '../../platform/db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addTemplate, addUser, loginTo } from '../../../test/support/fixtures.ts';
import { demoHardware } from '../../seed/index.ts';
import {
  addPlan,
  book,
  gpuDesktop,
  gpuDeployment,
  outcome,
  steps,
} from '../../../test/support/booking-fixtures.ts';

let t: TestApp;
let adminToken: string;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  adminToken = await login(t.app, 'admin');
});
afterAll(async () => t.close());

const call = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
  token = adminToken,
) =>
  injectWithToken(t.app, token, {
    method,
    url: `/api/v3${url}`,
    ...(payload ? { payload } : {}),
  });

const ADMIN_RESOURCES = ['adminReservables', 'adminReservableProfiles', 'adminBookingPriorities'];

const uid = () => randomUUID().slice(0, 8);

/** A new item with one profile open to `roles`, through the API; answers their ids. */
async function newItemAndProfile(units = 2, roles: string[] = ['user']) {
  const name = `Card ${uid()}`;
  const item = await call('POST', '/admin/reservable-items', { name, brand: 'Test', model: 'T4' });
  expect(item.statusCode, item.body).toBe(200);
  const itemId = item.json<{ id: string }>().id;
  const profileId = `adm-${uid()}-2Q`;
  const profile = await call('POST', '/admin/reservable-profiles', {
    id: profileId,
    item_id: itemId,
    name: `Profile ${profileId}`,
    profile: '2Q',
    units,
    allowed_roles: roles,
  });
  expect(profile.statusCode, profile.body).toBe(200);
  return { itemId, profileId, name };
}

const plan = (itemId: string, profileId: string, start: Date, end: Date) =>
  call('POST', '/admin/reservables_planner', {
    item_type: 'gpus',
    item_id: itemId,
    subitem_id: profileId,
    start: start.toISOString(),
    end: end.toISOString(),
  });

async function newUser(role: 'user' | 'advanced' = 'user') {
  const username = `ar-${uid()}`;
  const row = await addUser(t.app, {
    username,
    role,
    categoryId: 'default',
    groupId: role === 'user' ? 'default-users' : 'default-advanced',
  });
  return { row, token: await loginTo(t.app, username, 'default') };
}

const auditOf = (targetId: string) =>
  t.app.db.select().from(auditLog).where(eq(auditLog.targetId, targetId));

describe('access', () => {
  const ops = Object.values(operations).filter((op) => ADMIN_RESOURCES.includes(op.resource));

  it('covers every operation of the three resources and none is planned', () => {
    expect(ops.length).toBe(16);
    expect(ops.filter((op) => op.planned)).toEqual([]);
    for (const op of ops) expect(op.roles).toEqual(['admin']);
  });

  it.each(['user', 'advanced', 'manager'])('answers 403 to %s on every operation', async (role) => {
    const token = await login(t.app, role);
    for (const op of ops) {
      const res = await injectWithToken(t.app, token, {
        method: op.method,
        url: `/api/v3${op.path.replace('{id}', 'demo-gpu')}`,
        ...(op.body === 'json' ? { payload: {} } : {}),
      });
      expect({ op: op.key, status: res.statusCode }).toEqual({ op: op.key, status: 403 });
    }
  });

  it('lists the seeded item, profiles and rules to an admin', async () => {
    const items = (await call('GET', '/admin/reservable-items')).json<
      { id: string; profiles: number }[]
    >();
    expect(items.find((i) => i.id === 'demo-gpu')?.profiles).toBe(2);
    const profile = (await call('GET', '/admin/reservable-profiles/DEMO-GPU-2Q')).json();
    expect(profile).toMatchObject({
      id: 'DEMO-GPU-2Q',
      item_id: 'demo-gpu',
      item_name: 'Demo GPU',
      units: 2,
      priority_id: 'default',
      allowed_roles: ['admin', 'manager', 'advanced', 'user'],
    });
    const groups = (await call('GET', '/admin/booking-priority-groups')).json();
    expect(groups).toEqual([{ id: 'default', name: 'default' }]);
    expect((await call('GET', '/admin/reservable-items/nope')).statusCode).toBe(404);
    // an empty id (a trailing slash) is not the list
    expect((await call('GET', '/admin/reservable-items/')).statusCode).toBe(404);
  });
});

describe('a new item and profile', () => {
  it('is offered to the users it is open to and can be planned and booked at once', async () => {
    const { itemId, profileId } = await newItemAndProfile(2, ['user']);
    const user = await newUser('user');
    const advanced = await newUser('advanced');
    const allowedTo = async (token: string) =>
      (await call('GET', '/domains/allowed/reservables', undefined, token))
        .json<{ vgpus: { id: string }[] }>()
        .vgpus.map((v) => v.id);
    expect(await allowedTo(user.token)).toContain(profileId);
    expect(await allowedTo(advanced.token)).not.toContain(profileId);

    const step = steps();
    const made = await plan(itemId, profileId, step(1), step(48));
    expect(made.statusCode, made.body).toBe(200);
    // The planner starts plans in the future; one in force now (written as is) makes the profile
    // bookable from now, which is what the start-now list offers.
    await addPlan(t.app, {
      itemId,
      profileId,
      units: 2,
      start: new Date(Date.now() - 3_600_000),
      end: step(1),
    });
    const available = (
      await call('GET', '/booking/reservables_available', undefined, user.token)
    ).json<{ reservables_available: { id: string }[] }>();
    expect(available.reservables_available.map((r) => r.id)).toContain(profileId);

    const desktopId = await gpuDesktop(t.app, user.row, `Desk ${uid()}`, profileId);
    expect(
      outcome(
        await book(t.app, user.token, { element_id: desktopId, start: step(2), end: step(4) }),
      ),
    ).toEqual({
      status: 200,
      code: null,
    });
  });

  it('refuses duplicates (409) and bad bodies (400)', async () => {
    const { itemId, profileId, name } = await newItemAndProfile();
    const sameName = await call('POST', '/admin/reservable-items', { name: name.toUpperCase() });
    expect(outcome(sameName)).toEqual({ status: 409, code: 'reservable_exists' });
    const renamed = await call('PUT', `/admin/reservable-items/${itemId}`, { name: 'Demo GPU' });
    expect(outcome(renamed)).toEqual({ status: 409, code: 'reservable_exists' });
    const profileAgain = await call('POST', '/admin/reservable-profiles', {
      id: profileId,
      item_id: itemId,
      name: 'x',
      profile: '1Q',
      units: 1,
    });
    expect(outcome(profileAgain)).toEqual({ status: 409, code: 'reservable_exists' });
    const zero = await call('PUT', `/admin/reservable-profiles/${profileId}`, { units: 0 });
    expect(outcome(zero)).toEqual({ status: 400, code: 'bad_request' });
    expect(zero.json<{ errors: unknown }>().errors).toEqual({ '/units': 'minimum' });
    const noItem = await call('POST', '/admin/reservable-profiles', {
      id: `${profileId}-x`,
      item_id: 'no-such-item',
      name: 'x',
      profile: '1Q',
      units: 1,
    });
    expect(outcome(noItem)).toEqual({ status: 404, code: 'not_found' });
    const nobody = await call('PUT', `/admin/reservable-profiles/${profileId}`, {
      allowed: { users: ['no-such-user'] },
    });
    expect(outcome(nobody)).toEqual({ status: 404, code: 'not_found' });
    expect(nobody.json<{ errors: unknown }>().errors).toEqual({ '/allowed/users/0': 'not_found' });
    const unknownGroup = await call('PUT', `/admin/reservable-profiles/${profileId}`, {
      priority_id: 'no-such-group',
    });
    expect(outcome(unknownGroup)).toEqual({ status: 404, code: 'booking_priority_not_found' });
    const rule = await call('POST', '/admin/booking-priorities', {
      rule_group: 'default',
      name: 'Bad',
      max_time: 1,
    });
    expect(outcome(rule)).toEqual({ status: 400, code: 'bad_request' });
    expect(rule.json<{ errors: unknown }>().errors).toEqual({ '/max_time': 'minimum' });
  });

  it('applies a new rule group to the next booking at once', async () => {
    const { itemId, profileId } = await newItemAndProfile(2, ['user']);
    const group = `short-${uid()}`;
    const rule = await call('POST', '/admin/booking-priorities', {
      rule_group: group,
      name: 'One hour at most',
      priority: 5,
      max_time: 60,
      allowed_roles: ['user'],
    });
    expect(rule.statusCode, rule.body).toBe(200);
    const ruleId = rule.json<{ id: string }>().id;
    expect((await call('GET', `/admin/booking-priorities/${ruleId}`)).json()).toMatchObject({
      rule_group: group,
      max_time: 60,
      allowed_roles: ['user'],
      allowed: { roles: ['user'], categories: false, groups: false, users: false },
    });
    const moved = await call('PUT', `/admin/reservable-profiles/${profileId}`, {
      priority_id: group,
    });
    expect(moved.statusCode, moved.body).toBe(200);
    const step = steps();
    expect((await plan(itemId, profileId, step(1), step(48))).statusCode).toBe(200);
    const user = await newUser('user');
    const desktopId = await gpuDesktop(t.app, user.row, `Desk ${uid()}`, profileId);
    const long = await book(t.app, user.token, {
      element_id: desktopId,
      start: step(2),
      end: step(5),
    });
    expect(outcome(long)).toEqual({ status: 428, code: 'max_time_reached' });
    const raised = await call('PUT', `/admin/booking-priorities/${ruleId}`, { max_time: 120 });
    expect(raised.statusCode, raised.body).toBe(200);
    const fits = await book(t.app, user.token, {
      element_id: desktopId,
      start: step(2),
      end: step(5),
    });
    expect(outcome(fits).status).toBe(200);
  });
});

describe('deletes and units in use', () => {
  it('keeps an item while it has profiles, and a profile while a plan, a desktop, a template or a deployment uses it', async () => {
    const { itemId, profileId } = await newItemAndProfile();
    expect(outcome(await call('DELETE', `/admin/reservable-items/${itemId}`))).toEqual({
      status: 428,
      code: 'reservable_in_use',
    });

    const step = steps();
    const planned = await plan(itemId, profileId, step(1), step(4));
    const planId = planned.json<string>();
    const withPlan = await call('DELETE', `/admin/reservable-profiles/${profileId}`);
    expect(outcome(withPlan)).toEqual({ status: 428, code: 'reservable_in_use' });
    expect(withPlan.json<{ params: Record<string, number> }>().params).toEqual({ plans: 1 });
    expect((await call('DELETE', `/admin/reservables_planner/${planId}`)).statusCode).toBe(200);

    const owner = await newUser('user');
    const desktopId = await gpuDesktop(t.app, owner.row, `Desk ${uid()}`, profileId);
    const withDesktop = await call('DELETE', `/admin/reservable-profiles/${profileId}`);
    expect(withDesktop.json<{ params: Record<string, number> }>().params).toEqual({ desktops: 1 });
    const advanced = await newUser('advanced');
    await gpuDeployment(t.app, advanced.row, [owner.row], profileId);
    await addTemplate(t.app, advanced.row, {
      id: `tpl-${uid()}`,
      hardware: { ...demoHardware(), reservables: { vgpus: [profileId] } },
    });
    const withAll = await call('DELETE', `/admin/reservable-profiles/${profileId}`);
    expect(outcome(withAll)).toEqual({ status: 428, code: 'reservable_in_use' });
    expect(withAll.json<{ params: Record<string, number> }>().params).toEqual({
      // the owner's desktop and the deployment's desktop for them
      desktops: 2,
      templates: 1,
      deployments: 1,
    });
    expect(desktopId).toBeTruthy();
  });

  it('deletes an unused profile, then the item, and the audit log keeps every write', async () => {
    const { itemId, profileId, name } = await newItemAndProfile();
    const renamed = await call('PUT', `/admin/reservable-items/${itemId}`, {
      name: `Renamed ${itemId}`,
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect((await call('DELETE', `/admin/reservable-profiles/${profileId}`)).statusCode).toBe(200);
    expect((await call('DELETE', `/admin/reservable-items/${itemId}`)).statusCode).toBe(200);
    expect((await call('GET', `/admin/reservable-items/${itemId}`)).statusCode).toBe(404);

    const itemAudit = await auditOf(itemId);
    expect(itemAudit.map((a) => a.action).sort()).toEqual([
      'adminReservables.create',
      'adminReservables.delete',
      'adminReservables.update',
    ]);
    const update = itemAudit.find((a) => a.action === 'adminReservables.update');
    expect(update).toMatchObject({
      actorName: expect.any(String),
      actorRole: 'admin',
      targetType: 'reservable_item',
      targetName: `Renamed ${itemId}`,
      before: expect.objectContaining({ name }),
      after: expect.objectContaining({ name: `Renamed ${itemId}` }),
    });
    const profileAudit = await auditOf(profileId);
    expect(profileAudit.map((a) => a.action).sort()).toEqual([
      'adminReservableProfiles.create',
      'adminReservableProfiles.delete',
    ]);
  });

  it('keeps the units the bookings that have not ended take at once', async () => {
    const { itemId, profileId } = await newItemAndProfile(3, ['user']);
    const step = steps();
    expect((await plan(itemId, profileId, step(1), step(48))).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) {
      const user = await newUser('user');
      const desktopId = await gpuDesktop(t.app, user.row, `Desk ${uid()}`, profileId);
      const made = await book(t.app, user.token, {
        element_id: desktopId,
        start: step(2),
        end: step(4),
      });
      expect(outcome(made).status, made.body).toBe(200);
    }
    const down = await call('PUT', `/admin/reservable-profiles/${profileId}`, { units: 1 });
    expect(outcome(down)).toEqual({ status: 428, code: 'units_in_use' });
    expect(down.json<{ params: unknown }>().params).toEqual({ units: 2 });
    const before = (await auditOf(profileId)).length;
    expect(
      (await call('PUT', `/admin/reservable-profiles/${profileId}`, { units: 2 })).statusCode,
    ).toBe(200);
    expect((await call('GET', `/admin/reservable-profiles/${profileId}`)).json()).toMatchObject({
      units: 2,
    });
    expect((await auditOf(profileId)).length).toBe(before + 1);
    const withBookings = await call('DELETE', `/admin/reservable-profiles/${profileId}`);
    expect(withBookings.json<{ params: Record<string, number> }>().params).toMatchObject({
      bookings: 2,
      desktops: 2,
    });
  });
});

describe('an update that changes nothing stored', () => {
  it('answers 200 to an empty item update and keeps the item as it was', async () => {
    const { itemId, name } = await newItemAndProfile();
    const before = (await call('GET', `/admin/reservable-items/${itemId}`)).json();
    const res = await call('PUT', `/admin/reservable-items/${itemId}`, {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({});
    expect((await call('GET', `/admin/reservable-items/${itemId}`)).json()).toEqual(before);
    expect(before).toMatchObject({ id: itemId, name, profiles: 1 });
    // a field the body does not know is refused before anything is written
    const unknown = await call('PUT', `/admin/reservable-items/${itemId}`, { colour: 'red' });
    expect(unknown.statusCode).toBe(400);
  });

  it('answers 200 to an empty profile or rule update and keeps them as they were', async () => {
    const { profileId } = await newItemAndProfile();
    const rule = await call('POST', '/admin/booking-priorities', {
      rule_group: `g-${uid()}`,
      name: `Rule ${uid()}`,
    });
    expect(rule.statusCode, rule.body).toBe(200);
    const ruleId = rule.json<{ id: string }>().id;
    for (const url of [
      `/admin/reservable-profiles/${profileId}`,
      `/admin/booking-priorities/${ruleId}`,
    ]) {
      const before = (await call('GET', url)).json();
      const res = await call('PUT', url, {});
      expect({ url, status: res.statusCode }).toEqual({ url, status: 200 });
      expect((await call('GET', url)).json()).toEqual(before);
    }
  });
});
