/**
 * Planning (admins) on PostgreSQL: plans of a reservable item's profiles, each validation code
 * (start not in the past, end after start, at least 5 minutes, no overlap on one item, a known
 * profile of the item), rounding to 5 minutes, extension of an adjacent plan, and the bookings a
 * changed or deleted plan cancels (their bookers are told), with the plan_* events to admins.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { PlannerEvent } from '../../../../src/generated/validators.js';
import { bookings } from '../../platform/db/schema.ts';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser, loginTo } from '../../../test/support/fixtures.ts';
import {
  HOUR,
  MINUTE,
  addPlan,
  addReservable,
  book,
  gpuDesktop,
  iso,
  outcome,
  steps,
} from '../../../test/support/booking-fixtures.ts';

let t: TestApp;
let adminToken: string;
let adminId: string;
const events: ResourceEvent[] = [];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  t.app.events.subscribe((event) => events.push(event));
  adminToken = await login(t.app, 'admin');
  adminId = (await t.app.users.findLocal('admin', 'default'))?.id ?? '';
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

const newItem = async (units = 1) => {
  const itemId = `plan-${randomUUID().slice(0, 8)}`;
  await addReservable(t.app, itemId, [
    { id: `${itemId}-A`, units },
    { id: `${itemId}-B`, units: 1 },
  ]);
  return { itemId, a: `${itemId}-A`, b: `${itemId}-B` };
};

const createPlan = (itemId: string, subitem: string, start: Date | string, end: Date | string) =>
  call('POST', '/admin/reservables_planner', {
    item_type: 'gpus',
    item_id: itemId,
    subitem_id: subitem,
    start: typeof start === 'string' ? start : iso(start),
    end: typeof end === 'string' ? end : iso(end),
  });

const plansOf = async (
  itemId: string,
  from = Date.now() - 24 * HOUR,
  to = Date.now() + 30 * 24 * HOUR,
) =>
  (await call('GET', `/admin/reservables_planner/${itemId}/${iso(from)}/${iso(to)}`)).json<
    {
      id: string;
      subitem_id: string;
      units: number;
      start: string;
      end: string;
      event_type: string;
    }[]
  >();

async function booker(profileId: string) {
  const username = `pl-${randomUUID().slice(0, 8)}`;
  const row = await addUser(t.app, {
    username,
    role: 'user',
    categoryId: 'default',
    groupId: 'default-users',
  });
  const token = await loginTo(t.app, username, 'default');
  return { row, token, desktopId: await gpuDesktop(t.app, row, `Desk ${username}`, profileId) };
}

describe('creating plans', () => {
  it('rounds up to 5 minutes, answers the id, lists it and tells the admins', async () => {
    const step = steps();
    const { itemId, a } = await newItem(2);
    const start = new Date(step(2).getTime() + 2 * MINUTE);
    const end = new Date(step(6).getTime() + 11 * MINUTE);
    events.length = 0;
    const res = await createPlan(itemId, a, start, end);
    expect(res.statusCode).toBe(200);
    const id = res.json<string>();
    expect(typeof id).toBe('string');
    const [plan] = await plansOf(itemId);
    expect(plan).toMatchObject({
      id,
      subitem_id: a,
      units: 2,
      event_type: 'available',
      start: iso(step(2).getTime() + 5 * MINUTE),
      end: iso(step(6).getTime() + 15 * MINUTE),
    });
    expect(PlannerEvent(plan), JSON.stringify(PlannerEvent.errors)).toBe(true);
    const added = events.find((e) => e.name === 'planning.created');
    expect(added).toMatchObject({ ownerId: adminId, alsoAdmins: true, payload: { id } });
    // outside the range asked, the plan is not listed
    expect(await plansOf(itemId, step(10).getTime(), step(12).getTime())).toEqual([]);
  });

  it('refuses each invalid plan with its code', async () => {
    const step = steps();
    const { itemId, a, b } = await newItem();
    const other = await newItem();
    expect((await createPlan(itemId, a, step(4), step(8))).statusCode).toBe(200);
    const cases: [string, () => ReturnType<typeof createPlan>, number, string][] = [
      [
        'start in the past',
        () => createPlan(itemId, b, step(-4), step(10)),
        400,
        'invalid_start_date',
      ],
      [
        'end before start',
        () => createPlan(itemId, b, step(12), step(11)),
        400,
        'invalid_end_date',
      ],
      [
        'end equal to start',
        () => createPlan(itemId, b, step(12), step(12)),
        400,
        'invalid_end_date',
      ],
      [
        'shorter than 5 minutes as sent',
        () => createPlan(itemId, b, step(12), new Date(step(12).getTime() + 3 * MINUTE)),
        400,
        'invalid_end_date',
      ],
      [
        'overlapping a plan of the item',
        () => createPlan(itemId, b, step(6), step(10)),
        409,
        'plan_overlap',
      ],
      [
        'a profile of another item',
        () => createPlan(itemId, other.a, step(12), step(14)),
        400,
        'incorrect_new_plan_body_data',
      ],
      [
        'an unknown item',
        () => createPlan('nope', a, step(12), step(14)),
        400,
        'incorrect_new_plan_body_data',
      ],
    ];
    for (const [what, send, status, code] of cases) {
      const res = await send();
      expect(outcome(res), what).toEqual({ status, code });
      expectErrorShape(res.json(), status === 400 ? 'bad_request' : 'conflict');
    }
    // another item may have a plan at the same time
    expect((await createPlan(other.itemId, other.a, step(4), step(8))).statusCode).toBe(200);
    // not for other roles
    const user = await booker(a);
    expect(
      (
        await call(
          'POST',
          '/admin/reservables_planner',
          {
            item_type: 'gpus',
            item_id: itemId,
            subitem_id: a,
            start: iso(step(20)),
            end: iso(step(21)),
          },
          user.token,
        )
      ).statusCode,
    ).toBe(403);
    expect(
      (
        await call(
          'GET',
          `/admin/reservables_planner/${itemId}/${iso(step(0))}/${iso(step(9))}`,
          undefined,
          user.token,
        )
      ).statusCode,
    ).toBe(403);
  });

  it('extends the adjacent plan of the same profile instead of adding one', async () => {
    const step = steps();
    const { itemId, a, b } = await newItem();
    const first = (await createPlan(itemId, a, step(2), step(4))).json<string>();
    const joined = (await createPlan(itemId, a, step(4), step(6))).json<string>();
    expect(joined).toBe(first);
    // on both sides: the later one joins too
    await createPlan(itemId, a, step(8), step(10));
    expect((await createPlan(itemId, a, step(6), step(8))).json<string>()).toBe(first);
    expect((await plansOf(itemId)).map((p) => [p.id, p.start, p.end])).toEqual([
      [first, iso(step(2)), iso(step(10))],
    ]);
    // another profile right after is a plan of its own
    expect((await createPlan(itemId, b, step(10), step(12))).json<string>()).not.toBe(first);
  });
});

describe('changing and deleting plans', () => {
  it('cancels the bookings a shorter plan no longer holds and tells their bookers', async () => {
    const step = steps();
    const { itemId, a } = await newItem(1);
    const planId = (await createPlan(itemId, a, step(2), step(10))).json<string>();
    const early = await booker(a);
    const late = await booker(a);
    const kept = (
      await book(t.app, early.token, { element_id: early.desktopId, start: step(2), end: step(4) })
    ).json<{ id: string }>();
    const lost = (
      await book(t.app, late.token, { element_id: late.desktopId, start: step(7), end: step(9) })
    ).json<{ id: string }>();
    events.length = 0;
    const res = await call('PUT', `/admin/reservables_planner/${planId}`, {
      start: iso(step(2)),
      end: iso(step(6)),
    });
    expect(res.statusCode).toBe(200);
    expect((await plansOf(itemId))[0]).toMatchObject({ id: planId, end: iso(step(6)) });
    const left = await t.app.db
      .select({ id: bookings.id })
      .from(bookings)
      .where(eq(bookings.profileId, a));
    expect(left.map((r) => r.id)).toEqual([kept.id]);
    expect(
      events.find((e) => e.name === 'messages.received' && e.ownerId === late.row.id)?.payload,
    ).toMatchObject({
      msg_code: 'booking-cancelled',
      params: { reason: 'plan_changed' },
    });
    expect(events.some((e) => e.name === 'bookings.deleted' && e.payload.id === lost.id)).toBe(
      true,
    );
    expect(events.some((e) => e.name === 'planning.updated' && e.payload.id === planId)).toBe(true);
  });

  it('refuses an update that breaks a rule; a plan in force keeps its start', async () => {
    const step = steps();
    const { itemId, a, b } = await newItem(1);
    // a plan in force, written as is (its start is in the past)
    const inForce = await addPlan(t.app, {
      itemId,
      profileId: a,
      units: 1,
      start: step(-2),
      end: step(4),
    });
    const later = (await createPlan(itemId, a, step(8), step(10))).json<string>();
    // the plan in force may end later without moving its start
    expect(
      (
        await call('PUT', `/admin/reservables_planner/${inForce}`, {
          start: iso(step(-2)),
          end: iso(step(6)),
        })
      ).statusCode,
    ).toBe(200);
    expect(
      outcome(
        await call('PUT', `/admin/reservables_planner/${inForce}`, {
          start: iso(step(-1)),
          end: iso(step(6)),
        }),
      ),
    ).toEqual({
      status: 400,
      code: 'invalid_start_date',
    });
    expect(
      outcome(
        await call('PUT', `/admin/reservables_planner/${later}`, {
          start: iso(step(5)),
          end: iso(step(9)),
        }),
      ),
    ).toEqual({
      status: 409,
      code: 'plan_overlap',
    });
    expect(
      outcome(
        await call('PUT', `/admin/reservables_planner/${later}`, {
          start: iso(step(9)),
          end: iso(step(8)),
        }),
      ),
    ).toEqual({
      status: 400,
      code: 'invalid_end_date',
    });
    expect(
      outcome(
        await call('PUT', `/admin/reservables_planner/${later}`, {
          subitem_id: 'nope',
          start: iso(step(8)),
          end: iso(step(10)),
        }),
      ),
    ).toEqual({
      status: 400,
      code: 'incorrect_new_plan_body_data',
    });
    // another profile of the item: the bookings of the old profile go
    const user = await booker(a);
    const made = (
      await book(t.app, user.token, { element_id: user.desktopId, start: step(8), end: step(9) })
    ).json<{ id: string }>();
    expect(
      (
        await call('PUT', `/admin/reservables_planner/${later}`, {
          subitem_id: b,
          start: iso(step(8)),
          end: iso(step(10)),
        })
      ).statusCode,
    ).toBe(200);
    expect(await t.app.db.select().from(bookings).where(eq(bookings.id, made.id))).toEqual([]);
    expect(
      (
        await call('PUT', `/admin/reservables_planner/${randomUUID()}`, {
          start: iso(step(8)),
          end: iso(step(10)),
        })
      ).statusCode,
    ).toBe(404);
  });

  it('deletes a plan with the bookings inside it', async () => {
    const step = steps();
    const { itemId, a } = await newItem(2);
    const planId = (await createPlan(itemId, a, step(2), step(10))).json<string>();
    const user = await booker(a);
    const made = (
      await book(t.app, user.token, { element_id: user.desktopId, start: step(3), end: step(5) })
    ).json<{ id: string }>();
    events.length = 0;
    const res = await call('DELETE', `/admin/reservables_planner/${planId}`);
    expect(res.statusCode).toBe(200);
    expect(await plansOf(itemId)).toEqual([]);
    expect(await t.app.db.select().from(bookings).where(eq(bookings.id, made.id))).toEqual([]);
    expect(events.find((e) => e.name === 'planning.deleted')).toMatchObject({
      payload: { id: planId },
      alsoAdmins: true,
    });
    expect((await call('DELETE', `/admin/reservables_planner/${planId}`)).statusCode).toBe(404);
  });
});
