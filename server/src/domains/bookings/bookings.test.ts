/**
 * Bookings on PostgreSQL: the demo seed, the reservables calls, every booking rule with its code,
 * the overlap rules per event type (available, overridable, unavailable, the item's own bookings),
 * edits and deletes, the item and summary lists, start-now, deployment bookings, the start gate,
 * and what the desktops' cards show. Each test makes its own item, profiles, plans and users.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { Booking, Desktop, DesktopInfo } from '../../../../src/generated/validators.js';
import { bookings } from '../../platform/db/schema.ts';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import { DEMO_GPU_ID, DEMO_PROFILE_2Q, GPU_DESKTOP_NAME } from '../../seed/bookings.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser, loginTo, userRow } from '../../../test/support/fixtures.ts';
import {
  HOUR,
  MINUTE,
  addPlan,
  addReservable,
  addRule,
  book,
  editBooking,
  gpuDeployment,
  gpuDesktop,
  iso,
  outcome,
  range,
  steps,
} from '../../../test/support/booking-fixtures.ts';

let t: TestApp;
let adminToken: string;
const events: ResourceEvent[] = [];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  t.app.events.subscribe((event) => events.push(event));
  adminToken = await login(t.app, 'admin');
});
afterAll(async () => t.close());

const get = (token: string, url: string) =>
  injectWithToken(t.app, token, { method: 'GET', url: `/api/v3${url}` });

/** A fresh item with one profile of `units` units, planned from an hour ago for three days. */
async function freshProfile(units: number, options: { priorityId?: string } = {}) {
  const itemId = `item-${randomUUID().slice(0, 8)}`;
  const profileId = `${itemId}-P`;
  await addReservable(t.app, itemId, [{ id: profileId, units, ...options }]);
  const planId = await addPlan(t.app, {
    itemId,
    profileId,
    units,
    start: new Date(Date.now() - HOUR),
    end: new Date(Date.now() + 72 * HOUR),
  });
  return { itemId, profileId, planId };
}

/** A new user of role `role` with a desktop naming the profile. */
async function bookerOf(profileId: string | null, role: 'user' | 'advanced' | 'admin' = 'user') {
  const username = `bk-${randomUUID().slice(0, 8)}`;
  const row = await addUser(t.app, {
    username,
    role,
    categoryId: 'default',
    groupId: role === 'admin' ? 'default-admins' : 'default-users',
  });
  const token = await loginTo(t.app, username, 'default');
  const desktopId = await gpuDesktop(t.app, row, `Desk ${username}`, profileId);
  return { row, token, desktopId };
}

const desktopOf = async (token: string, id: string) => {
  const list = (await get(token, '/user/desktops')).json<Record<string, unknown>[]>();
  return list.find((d) => d.id === id);
};

describe('the demo', () => {
  it('seeds a Demo GPU with two profiles, a 30-day plan and a GPU workstation for advanced', async () => {
    const items = (await get(adminToken, '/admin/reservables/gpus')).json<
      { id: string; name: string; profiles_enabled: string[]; plans: { active: boolean } }[]
    >();
    const demo = items.find((i) => i.id === DEMO_GPU_ID);
    expect(demo?.name).toBe('Demo GPU');
    expect(demo?.profiles_enabled.sort()).toEqual(['DEMO-GPU-2Q', 'DEMO-GPU-4Q']);
    expect(demo?.plans.active).toBe(true);
    const profiles = (await get(adminToken, `/admin/reservables/enabled/gpus/${DEMO_GPU_ID}`)).json<
      { id: string; profile: string; units: number }[]
    >();
    expect(profiles.map((p) => [p.profile, p.units])).toEqual([
      ['2Q', 2],
      ['4Q', 1],
    ]);
    const plans = (
      await get(
        adminToken,
        `/admin/reservables_planner/${DEMO_GPU_ID}/${iso(Date.now())}/${iso(Date.now() + 40 * 24 * HOUR)}`,
      )
    ).json<{ subitem_id: string; start: string; end: string }[]>();
    expect(plans).toHaveLength(1);
    const days =
      (Date.parse(plans[0]?.end ?? '') - Date.parse(plans[0]?.start ?? '')) / (24 * HOUR);
    expect(days).toBe(30);

    const advanced = await login(t.app, 'advanced');
    const list = (await get(advanced, '/user/desktops')).json<Record<string, unknown>[]>();
    const gpu = list.find((d) => d.name === GPU_DESKTOP_NAME);
    // Its GPU profile says it needs a booking; it has none in force and none to come, so the
    // list leaves the booking fields out.
    expect(gpu).toMatchObject({ reservables: { vgpus: [DEMO_PROFILE_2Q] } });
    for (const field of ['booking_id', 'next_booking_start', 'next_booking_end'])
      expect(gpu).not.toHaveProperty(field);
    for (const d of list) expect(Desktop(d), JSON.stringify(Desktop.errors)).toBe(true);
    // user's demo desktops stay the three the other suites count, none needing a booking
    const mine = (await get(await login(t.app, 'user'), '/user/desktops')).json<
      { reservables?: unknown }[]
    >();
    expect(mine).toHaveLength(3);
    expect(mine.every((d) => d.reservables === undefined)).toBe(true);
    const priority = (await get(advanced, `/bookings/priority/desktop/${String(gpu?.id)}`)).json();
    expect(priority).toMatchObject({ forbid_time: 0, max_time: 240, max_items: 5 });
  });
});

describe('reservables', () => {
  it('lists kinds, items and profiles to admins only, and the allowed profiles to everyone', async () => {
    expect((await get(adminToken, '/admin/reservables')).json()).toEqual(['gpus']);
    const { itemId, profileId } = await freshProfile(1);
    await addReservable(t.app, `${itemId}-closed`, [
      { id: `${itemId}-ADMINS`, units: 1, allowed: { roles: ['admin'] } },
    ]);
    const enabled = (await get(adminToken, `/admin/reservables/enabled/gpus/${itemId}`)).json();
    expect(enabled).toEqual([
      {
        id: profileId,
        name: `Profile ${profileId}`,
        description: null,
        profile: profileId,
        units: 1,
      },
    ]);
    const unknown = await get(adminToken, '/admin/reservables/enabled/gpus/nope');
    expect(unknown.statusCode).toBe(404);

    const user = await bookerOf(null);
    for (const url of [
      '/admin/reservables',
      '/admin/reservables/gpus',
      `/admin/reservables/enabled/gpus/${itemId}`,
    ])
      expect((await get(user.token, url)).statusCode).toBe(403);
    const allowed = (await get(user.token, '/domains/allowed/reservables')).json<{
      vgpus: { id: string }[];
    }>();
    const ids = allowed.vgpus.map((v) => v.id);
    expect(ids[0]).toBe('None');
    expect(ids).toContain(profileId);
    expect(ids).not.toContain(`${itemId}-ADMINS`);
    const adminIds = (await get(adminToken, '/domains/allowed/reservables'))
      .json<{ vgpus: { id: string }[] }>()
      .vgpus.map((v) => v.id);
    expect(adminIds).toContain(`${itemId}-ADMINS`);
    const hardware = (await get(user.token, '/user/hardware/allowed')).json<{
      reservables: { vgpus: { id: string }[] };
    }>();
    expect(hardware.reservables.vgpus.map((v) => v.id)).toContain(profileId);

    // A desktop may be given an allowed profile, not another one.
    const put = (vgpus: string[]) =>
      injectWithToken(t.app, user.token, {
        method: 'PUT',
        url: `/api/v3/domain/reservables/${user.desktopId}`,
        payload: { reservables: { vgpus } },
      });
    expect((await put([`${itemId}-ADMINS`])).statusCode).toBe(403);
    expect((await put([profileId])).statusCode).toBe(200);
    // It needs a booking now: the list names its GPU profile.
    expect(await desktopOf(user.token, user.desktopId)).toMatchObject({
      reservables: { vgpus: [profileId] },
    });
  });
});

describe('booking rules', () => {
  it('refuses each broken date rule with its code and status', async () => {
    const step = steps();
    const { profileId } = await freshProfile(2);
    const { token, desktopId } = await bookerOf(profileId);
    const at = (n: number) => step(n);
    const cases: [string, { start: Date | string; end: Date | string }, number, string][] = [
      ['end before start', { start: at(4), end: at(2) }, 400, 'booking_invalid_end'],
      ['end equal to start', { start: at(4), end: at(4) }, 400, 'booking_invalid_end'],
      [
        'shorter than 5 minutes',
        { start: at(4), end: new Date(at(4).getTime() + 3 * MINUTE) },
        400,
        'booking_invalid_end',
      ],
      [
        'off the 30-minute steps',
        { start: new Date(at(4).getTime() + 10 * MINUTE), end: at(6) },
        400,
        'booking_invalid_dates',
      ],
      ['start in the past', { start: at(-2), end: at(2) }, 400, 'booking_invalid_start'],
      ['longer than max_time (240 min)', { start: at(2), end: at(11) }, 428, 'max_time_reached'],
      [
        'ending after max_booking_date (30 days)',
        { start: step(1, Date.now() + 31 * 24 * HOUR), end: step(2, Date.now() + 31 * 24 * HOUR) },
        428,
        'booking_max_date_exceeded',
      ],
      ['not a date', { start: '2026-13-45T10:00Z', end: at(2) }, 400, 'booking_invalid_dates'],
    ];
    for (const [what, dates, status, code] of cases) {
      const res = await book(t.app, token, { element_id: desktopId, ...dates });
      expect(outcome(res), what).toEqual({ status, code });
      expectErrorShape(res.json(), status === 400 ? 'bad_request' : 'precondition_required');
    }
    const ok = await book(t.app, token, { element_id: desktopId, start: at(2), end: at(10) });
    expect(outcome(ok)).toEqual({ status: 200, code: null });
    expect(Booking(ok.json()), JSON.stringify(Booking.errors)).toBe(true);
    expect(
      (await t.app.db.select().from(bookings).where(eq(bookings.itemId, desktopId))).length,
    ).toBe(1);
  });

  it('refuses a start inside the advance notice of the booker rule', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const booker = await bookerOf(profileId);
    await addRule(t.app, {
      allowed: { users: [booker.row.id] },
      priority: 2,
      forbidTime: 120,
      maxTime: 600,
    });
    const soon = await book(t.app, booker.token, {
      element_id: booker.desktopId,
      start: step(2),
      end: step(3),
    });
    expect(outcome(soon)).toEqual({ status: 400, code: 'booking_invalid_start' });
    expect(soon.json().params).toMatchObject({ forbid_time: 120 });
    const later = await book(t.app, booker.token, {
      element_id: booker.desktopId,
      start: step(6),
      end: step(7),
    });
    expect(outcome(later)).toEqual({ status: 200, code: null });
    const priority = (
      await get(booker.token, `/bookings/priority/desktop/${booker.desktopId}`)
    ).json();
    expect(priority).toMatchObject({ forbid_time: 120, max_time: 600 });
  });

  it('counts the bookings that have not ended against max_items', async () => {
    const step = steps();
    const { profileId } = await freshProfile(3);
    const booker = await bookerOf(profileId);
    await addRule(t.app, {
      allowed: { users: [booker.row.id] },
      priority: 2,
      maxItems: 2,
      maxTime: 600,
    });
    const slot = (n: number) =>
      book(t.app, booker.token, { element_id: booker.desktopId, start: step(n), end: step(n + 1) });
    expect((await slot(2)).statusCode).toBe(200);
    expect((await slot(4)).statusCode).toBe(200);
    const third = await slot(6);
    expect(outcome(third)).toEqual({ status: 428, code: 'booking_max_items_exceeded' });
    expect(third.json().params).toEqual({ max_items: 2 });
  });

  it('refuses a desktop without a profile, somebody else’s desktop and an unknown one', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const plain = await bookerOf(null);
    const res = await book(t.app, plain.token, {
      element_id: plain.desktopId,
      start: step(2),
      end: step(3),
    });
    expect(outcome(res)).toEqual({ status: 428, code: 'no_reservables' });
    const owner = await bookerOf(profileId);
    const theirs = await book(t.app, plain.token, {
      element_id: owner.desktopId,
      start: step(2),
      end: step(3),
    });
    expect(theirs.statusCode).toBe(403);
    const unknown = await book(t.app, plain.token, {
      element_id: randomUUID(),
      start: step(2),
      end: step(3),
    });
    expect(unknown.statusCode).toBe(404);
    expect(
      (
        await get(
          plain.token,
          `/bookings/user/${owner.desktopId}/desktop?${range(Date.now(), step(8))}`,
        )
      ).statusCode,
    ).toBe(403);
  });
});

describe('overlap rules per event type', () => {
  it('books available windows, refuses unavailable ones, the item’s own bookings and times outside the plans', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const a = await bookerOf(profileId);
    const b = await bookerOf(profileId);
    expect(
      (await book(t.app, a.token, { element_id: a.desktopId, start: step(2), end: step(4) }))
        .statusCode,
    ).toBe(200);

    // b sees the unit taken by a as unavailable, the rest as available
    const windows = (
      await get(b.token, `/bookings/user/${b.desktopId}/desktop?${range(step(0), step(8))}`)
    ).json<{ event_type: string; start: string; end: string; units: number }[]>();
    expect(windows.map((w) => [w.event_type, w.start, w.end, w.units])).toEqual([
      ['available', iso(step(0)), iso(step(2)), 1],
      ['unavailable', iso(step(2)), iso(step(4)), 0],
      ['available', iso(step(4)), iso(step(8)), 1],
    ]);
    for (const w of windows) expect(Booking(w)).toBe(true);

    const over = await book(t.app, b.token, {
      element_id: b.desktopId,
      start: step(3),
      end: step(5),
    });
    expect(outcome(over)).toEqual({ status: 409, code: 'booking_overlap' });
    const beside = await book(t.app, b.token, {
      element_id: b.desktopId,
      start: step(4),
      end: step(6),
    });
    expect(outcome(beside)).toEqual({ status: 200, code: null });
    const own = await book(t.app, a.token, {
      element_id: a.desktopId,
      start: step(3),
      end: step(4),
    });
    expect(outcome(own)).toEqual({ status: 409, code: 'booking_overlap' });
    const outside = await book(t.app, a.token, {
      element_id: a.desktopId,
      start: step(2, Date.now() + 80 * HOUR),
      end: step(3, Date.now() + 80 * HOUR),
    });
    expect(outcome(outside)).toEqual({ status: 409, code: 'does_not_fit_date' });
  });

  it('lets a higher priority book over an overridable window and cancels the lower booking', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const low = await bookerOf(profileId);
    const high = await bookerOf(profileId, 'admin');
    const first = await book(t.app, low.token, {
      element_id: low.desktopId,
      start: step(2),
      end: step(4),
    });
    expect(first.statusCode).toBe(200);
    const lowId = first.json<{ id: string }>().id;

    const seen = (
      await get(high.token, `/bookings/user/${high.desktopId}/desktop?${range(step(2), step(4))}`)
    ).json<{ event_type: string }[]>();
    expect(seen.map((w) => w.event_type)).toEqual(['overridable']);
    const lowSees = (
      await get(low.token, `/bookings/user/${low.desktopId}/desktop?${range(step(2), step(4))}`)
    ).json<{ event_type: string; id?: string }[]>();
    expect(lowSees.map((w) => [w.event_type, w.id])).toEqual([['event', lowId]]);

    events.length = 0;
    const over = await book(t.app, high.token, {
      element_id: high.desktopId,
      start: step(3),
      end: step(5),
    });
    expect(outcome(over)).toEqual({ status: 200, code: null });
    expect(await t.app.db.select().from(bookings).where(eq(bookings.id, lowId))).toEqual([]);
    const told = events.filter((e) => e.ownerId === low.row.id).map((e) => e.name);
    expect(told).toEqual(
      expect.arrayContaining(['bookings.deleted', 'bookings.bookingDeleted', 'messages.received']),
    );
    const message = events.find((e) => e.name === 'messages.received' && e.ownerId === low.row.id);
    expect(message?.payload).toMatchObject({
      msg_code: 'booking-cancelled',
      params: { reason: 'overridden' },
    });
    // the low priority can not take it back
    const back = await book(t.app, low.token, {
      element_id: low.desktopId,
      start: step(3),
      end: step(4),
    });
    expect(outcome(back)).toEqual({ status: 409, code: 'booking_overlap' });
  });
});

describe('edit, delete and lists', () => {
  it('moves a booking, refuses an edit that breaks a rule, deletes it, and the card follows', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const a = await bookerOf(profileId);
    const other = await bookerOf(profileId);
    const made = (
      await book(t.app, a.token, {
        element_id: a.desktopId,
        start: step(4),
        end: step(6),
        title: 'Render',
      })
    ).json<{ id: string; version: number }>();
    const booked = await desktopOf(a.token, a.desktopId);
    expect(booked).toMatchObject({
      next_booking_start: iso(step(4)),
      next_booking_end: iso(step(6)),
    });
    // none in force yet: the list leaves booking_id out
    expect(booked).not.toHaveProperty('booking_id');
    expect(
      (
        await book(t.app, other.token, {
          element_id: other.desktopId,
          start: step(8),
          end: step(9),
        })
      ).statusCode,
    ).toBe(200);

    const moved = await editBooking(t.app, a.token, made.id, {
      start: iso(step(2)),
      end: iso(step(3)),
      title: 'Moved',
    });
    expect(outcome(moved)).toEqual({ status: 200, code: null });
    expect(moved.json()).toMatchObject({
      id: made.id,
      title: 'Moved',
      start: iso(step(2)),
      end: iso(step(3)),
    });
    expect(moved.json<{ version: number }>().version).toBeGreaterThan(made.version);
    expect(await desktopOf(a.token, a.desktopId)).toMatchObject({
      next_booking_start: iso(step(2)),
    });
    expect(
      outcome(
        await editBooking(t.app, a.token, made.id, { start: iso(step(7)), end: iso(step(9)) }),
      ),
    ).toEqual({
      status: 409,
      code: 'booking_overlap',
    });
    expect(
      outcome(
        await editBooking(t.app, a.token, made.id, { start: iso(step(2)), end: iso(step(20)) }),
      ),
    ).toEqual({
      status: 428,
      code: 'max_time_reached',
    });
    expect(
      outcome(
        await editBooking(t.app, other.token, made.id, { start: iso(step(2)), end: iso(step(3)) }),
      ),
    ).toEqual({
      status: 403,
      code: 'forbidden',
    });
    // the form may repeat the booking and its desktop, not name others
    const named = await editBooking(t.app, a.token, made.id, {
      event_id: made.id,
      element_id: a.desktopId,
      element_type: 'desktop',
      start: iso(step(2)),
      end: iso(step(3)),
    });
    expect(outcome(named)).toEqual({ status: 200, code: null });
    const elsewhere = await editBooking(t.app, a.token, made.id, {
      element_id: other.desktopId,
      start: iso(step(2)),
      end: iso(step(3)),
    });
    expect(outcome(elsewhere)).toEqual({ status: 400, code: 'bad_request' });

    const mine = (await get(a.token, `/bookings/user?${range(step(0), step(10))}`)).json<
      { id: string; editable: boolean }[]
    >();
    expect(mine.map((b) => [b.id, b.editable])).toEqual([[made.id, true]]);

    const del = await injectWithToken(t.app, a.token, {
      method: 'DELETE',
      url: `/api/v3/booking/event/${made.id}`,
    });
    expect(del.statusCode).toBe(200);
    // no booking left: the list leaves the booking fields out
    const unbooked = await desktopOf(a.token, a.desktopId);
    for (const field of ['next_booking_start', 'next_booking_end', 'booking_id'])
      expect(unbooked).not.toHaveProperty(field);
    const again = await injectWithToken(t.app, a.token, {
      method: 'DELETE',
      url: `/api/v3/booking/event/${made.id}`,
    });
    expect(again.statusCode).toBe(404);
  });

  it('edits a booking in progress: its end moves, its start stays', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const a = await bookerOf(profileId);
    const made = await book(t.app, a.token, {
      element_id: a.desktopId,
      start: step(0),
      end: step(2),
      now: true,
    });
    expect(made.statusCode).toBe(200);
    const { id, start, title } = made.json<{ id: string; start: string; title: string }>();
    // a booking from now names its desktop
    expect(title).toBe((await desktopOf(a.token, a.desktopId))?.name);
    const longer = await editBooking(t.app, a.token, id, { start, end: iso(step(3)) });
    expect(outcome(longer)).toEqual({ status: 200, code: null });
    expect(longer.json()).toMatchObject({ start, end: iso(step(3)) });
    expect(await desktopOf(a.token, a.desktopId)).toMatchObject({
      booking_id: id,
      next_booking_end: iso(step(3)),
    });
    expect(
      outcome(await editBooking(t.app, a.token, id, { start: iso(step(0)), end: iso(step(3)) })),
    ).toEqual({ status: 400, code: 'booking_invalid_start' });
    expect(outcome(await editBooking(t.app, a.token, id, { start, end: iso(step(0)) }))).toEqual({
      status: 400,
      code: 'booking_invalid_end',
    });
  });

  it('cancels the bookings of a desktop whose profile changes or that is deleted', async () => {
    const step = steps();
    const { profileId } = await freshProfile(2);
    const second = `${profileId}-2`;
    await addReservable(t.app, `${profileId}-item`, [{ id: second, units: 1 }]);
    const a = await bookerOf(profileId);
    expect(
      (await book(t.app, a.token, { element_id: a.desktopId, start: step(2), end: step(3) }))
        .statusCode,
    ).toBe(200);
    const change = await injectWithToken(t.app, a.token, {
      method: 'PUT',
      url: `/api/v3/domain/reservables/${a.desktopId}`,
      payload: { reservables: { vgpus: [second] } },
    });
    expect(change.statusCode).toBe(200);
    expect(await t.app.db.select().from(bookings).where(eq(bookings.itemId, a.desktopId))).toEqual(
      [],
    );

    const b = await bookerOf(profileId);
    expect(
      (await book(t.app, b.token, { element_id: b.desktopId, start: step(2), end: step(3) }))
        .statusCode,
    ).toBe(200);
    const del = await injectWithToken(t.app, b.token, {
      method: 'DELETE',
      url: `/api/v3/desktop/${b.desktopId}/permanent`,
    });
    expect(del.statusCode).toBe(200);
    await expect
      .poll(
        async () =>
          (await t.app.db.select().from(bookings).where(eq(bookings.itemId, b.desktopId))).length,
      )
      .toBe(0);
  });
});

describe('start-now and the start gate', () => {
  it('answers the latest end from now and books from the server’s now; the card shows it at once', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const a = await bookerOf(profileId);
    const latest = await get(a.token, `/booking/max_booking_date/${a.desktopId}`);
    expect(latest.statusCode).toBe(200);
    const max = Date.parse(latest.json<{ max_booking_date: string }>().max_booking_date);
    expect(max % (30 * MINUTE)).toBe(0);
    expect(max).toBeLessThanOrEqual(Date.now() + 240 * MINUTE);
    expect(max).toBeGreaterThan(Date.now() + 200 * MINUTE);

    const available = (await get(a.token, '/booking/reservables_available')).json<{
      reservables_available: { id: string; max_booking_date: string }[];
    }>();
    expect(available.reservables_available.find((r) => r.id === profileId)?.max_booking_date).toBe(
      iso(max),
    );

    const made = await book(t.app, a.token, {
      element_id: a.desktopId,
      start: step(-10),
      end: new Date(max),
      now: true,
    });
    expect(outcome(made)).toEqual({ status: 200, code: null });
    const started = Date.parse(made.json<{ start: string }>().start);
    expect(Math.abs(started - Date.now())).toBeLessThan(10_000);
    const card = await desktopOf(a.token, a.desktopId);
    expect(card).toMatchObject({
      booking_id: made.json<{ id: string }>().id,
      next_booking_end: iso(max),
      scheduled: { shutdown: iso(max) },
    });
    expect(Desktop(card)).toBe(true);
    const info = await get(a.token, `/domain/info/${a.desktopId}`);
    expect(info.json()).toMatchObject({
      needs_booking: true,
      booking_id: made.json<{ id: string }>().id,
      next_booking_end: iso(max),
    });
    expect(DesktopInfo(info.json()), JSON.stringify(DesktopInfo.errors)).toBe(true);

    // the unit is taken now: another desktop can not start now
    const b = await bookerOf(profileId);
    expect(outcome(await get(b.token, `/booking/max_booking_date/${b.desktopId}`))).toEqual({
      status: 428,
      code: 'not_enough_time_to_start',
    });
  });

  it('refuses start-now without a plan now and for a deployment', async () => {
    const step = steps();
    const itemId = `item-${randomUUID().slice(0, 8)}`;
    await addReservable(t.app, itemId, [{ id: `${itemId}-P`, units: 1 }]);
    await addPlan(t.app, {
      itemId,
      profileId: `${itemId}-P`,
      units: 1,
      start: step(4),
      end: step(20),
    });
    const a = await bookerOf(`${itemId}-P`);
    expect(outcome(await get(a.token, `/booking/max_booking_date/${a.desktopId}`))).toEqual({
      status: 428,
      code: 'current_plan_doesnt_match',
    });
    const owner = await bookerOf(null, 'advanced');
    const deployment = await gpuDeployment(t.app, owner.row, [owner.row], `${itemId}-P`);
    const res = await book(t.app, owner.token, {
      element_id: deployment.id,
      element_type: 'deployment',
      start: step(4),
      end: step(5),
      now: true,
    });
    expect(outcome(res)).toEqual({ status: 400, code: 'booking_now_desktop_only' });
  });

  it('gates the start: not booked, booked later, and no gate for a desktop without a profile', async () => {
    const step = steps();
    const { profileId } = await freshProfile(1);
    const a = await bookerOf(profileId);
    const start = (token: string, id: string) => get(token, `/desktop/start/${id}`);
    const none = await start(a.token, a.desktopId);
    expect(outcome(none)).toEqual({ status: 428, code: 'desktop_not_booked' });
    expect(
      (await book(t.app, a.token, { element_id: a.desktopId, start: step(4), end: step(5) }))
        .statusCode,
    ).toBe(200);
    const later = await start(a.token, a.desktopId);
    expect(outcome(later)).toEqual({ status: 428, code: 'desktop_not_booked_until' });
    expect(later.json().params).toEqual({ start: iso(step(4)) });
    // a desktop without a profile goes straight to the engine (this one has no disk)
    const plain = await bookerOf(null);
    expect(outcome(await start(plain.token, plain.desktopId))).toEqual({
      status: 428,
      code: 'desktop_storage_not_ready',
    });
    // a booking with less than 5 minutes left is not enough to start
    const shortProfile = (await freshProfile(1)).profileId;
    const short = await bookerOf(shortProfile);
    await t.app.db.insert(bookings).values({
      id: randomUUID(),
      itemId: short.desktopId,
      itemType: 'desktop',
      startAt: new Date(Date.now() - 20 * MINUTE),
      endAt: new Date(Date.now() + 3 * MINUTE),
      userId: short.row.id,
      profileId: shortProfile,
      priority: 1,
      phase: 'active',
    });
    const late = await start(short.token, short.desktopId);
    expect(outcome(late)).toEqual({ status: 428, code: 'not_enough_time_to_start' });
    // inside a booking the gate lets it through to the engine
    expect(
      (
        await book(t.app, a.token, {
          element_id: a.desktopId,
          start: step(0),
          end: step(3),
          now: true,
        })
      ).statusCode,
    ).toBe(200);
    expect(outcome(await start(a.token, a.desktopId))).toEqual({
      status: 428,
      code: 'desktop_storage_not_ready',
    });
  });

  it('books a deployment for all its desktops, one unit each, and gates them by it', async () => {
    const step = steps();
    const { profileId } = await freshProfile(2);
    const owner = await bookerOf(null, 'advanced');
    const student = await bookerOf(null);
    const deployment = await gpuDeployment(t.app, owner.row, [owner.row, student.row], profileId);
    const studentDesktop = deployment.desktops[1] ?? '';
    expect(outcome(await get(student.token, `/desktop/start/${studentDesktop}`))).toEqual({
      status: 428,
      code: 'needs_deployment_booking',
    });
    const made = await book(t.app, owner.token, {
      element_id: deployment.id,
      element_type: 'deployment',
      start: step(2),
      end: step(4),
    });
    expect(outcome(made)).toEqual({ status: 200, code: null });
    expect(made.json()).toMatchObject({ item_type: 'deployment', units: 2 });
    expect(await desktopOf(student.token, studentDesktop)).toMatchObject({
      next_booking_start: iso(step(2)),
    });
    // the deployment's own answers carry the booking too
    const listed = (await get(owner.token, '/deployments')).json<Record<string, unknown>[]>();
    expect(listed.find((d) => d.id === deployment.id)).toMatchObject({
      needs_booking: true,
      booking_id: false,
      next_booking_start: iso(step(2)),
      next_booking_end: iso(step(4)),
    });
    expect(outcome(await get(student.token, `/desktop/start/${studentDesktop}`))).toEqual({
      status: 428,
      code: 'desktop_not_booked_until',
    });
    // both units are taken: a desktop of the profile finds the window unavailable
    const other = await bookerOf(profileId);
    expect(
      outcome(
        await book(t.app, other.token, {
          element_id: other.desktopId,
          start: step(3),
          end: step(4),
        }),
      ),
    ).toEqual({
      status: 409,
      code: 'booking_overlap',
    });
    const summary = (await get(student.token, `/bookings/user?${range(step(0), step(6))}`)).json<
      { item_id: string; editable: boolean }[]
    >();
    expect(summary).toEqual([expect.objectContaining({ item_id: deployment.id, editable: false })]);
  });

  it('refuses a temporary desktop of a template that names a profile', async () => {
    const { profileId } = await freshProfile(1);
    const admin = await userRow(t.app, 'admin');
    const { templates } = await import('../../platform/db/schema.ts');
    const { demoGuestProperties, demoHardware } = await import('../../seed/index.ts');
    const id = `tpl-${randomUUID().slice(0, 8)}`;
    await t.app.db.insert(templates).values({
      id,
      name: 'GPU template',
      userId: admin.id,
      categoryId: admin.categoryId,
      groupId: admin.groupId,
      hardware: { ...demoHardware(), reservables: { vgpus: [profileId] } },
      guestProperties: demoGuestProperties(),
      allowed: { roles: [], categories: false, groups: false, users: false },
    });
    const user = await bookerOf(null);
    const res = await injectWithToken(t.app, user.token, {
      method: 'POST',
      url: '/api/v3/nonpersistent',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `template=${id}`,
    });
    expect(outcome(res)).toEqual({ status: 428, code: 'temporal_new_reservable' });
  });
});
