/**
 * A booking ending stops its desktop, against real QEMU (TCG) and PostgreSQL: start-now books a
 * GPU desktop from now, the desktop starts inside the booking, its user gets the scheduled-shutdown
 * notices (15 and 5 minutes before the end), and at the end the desktop is stopped and its card
 * unbooked. A booking that carries on right at the end keeps the desktop running. The scheduler
 * runs for given instants (`runOnce(now)`), not by waiting for the clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { bookings } from '../../platform/db/schema.ts';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import { trackPid } from '../../platform/hypervisor/test-support.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import {
  HOUR,
  MINUTE,
  addPlan,
  addReservable,
  book,
  iso,
  outcome,
  steps,
} from '../../../test/support/booking-fixtures.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const until = untilWithin(30_000);

let t: TestApp;
let token: string;
let desktopId: string;
const events: ResourceEvent[] = [];
const PROFILE = 'SCHED-1U';

beforeAll(async () => {
  // A short shutdown grace: the idle guest has no ACPI, so the stop is forced after it.
  t = await buildTestApp(await createTestDatabase(), {
    prepareImages: true,
    shutdownGraceMs: 2_000,
  });
  await t.app.engine.reconcile();
  t.app.events.subscribe((event) => events.push(event));
  await addReservable(t.app, 'sched-item', [{ id: PROFILE, units: 1 }]);
  await addPlan(t.app, {
    itemId: 'sched-item',
    profileId: PROFILE,
    units: 1,
    start: new Date(Date.now() - HOUR),
    end: new Date(Date.now() + 24 * HOUR),
  });
  token = await login(t.app, 'user');
  const res = await injectWithToken(t.app, token, {
    method: 'POST',
    url: '/api/v3/persistent_desktop',
    payload: {
      template_id: 'demo-template',
      name: 'Booked GPU desktop',
      hardware: { memory: 0.5, vcpus: 1, reservables: { vgpus: [PROFILE] } },
    },
  });
  expect(res.statusCode, res.body).toBe(200);
  desktopId = res.json<{ id: string }>().id;
  await until(
    async () => (await t.app.desktops.byId(desktopId))?.state,
    (s) => s === 'stopped',
  );
});
afterAll(async () => {
  await t.app.engine.destroy(desktopId, { deleteDisk: true }).catch(() => undefined);
  await t.close();
});

const stateOf = async () => (await t.app.desktops.byId(desktopId))?.state;
const start = () =>
  injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/desktop/start/${desktopId}` });
const card = async () =>
  (await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user/desktops' }))
    .json<Record<string, unknown>[]>()
    .find((d) => d.id === desktopId);
const startAndWait = async () => {
  const res = await start();
  expect(outcome(res)).toEqual({ status: 200, code: null });
  await until(stateOf, (s) => s === 'started');
  const pid = ((await t.app.desktops.byId(desktopId))?.runtime as { pid?: number }).pid;
  if (pid) trackPid(pid);
};
const notices = () =>
  events
    .filter((e) => e.name === 'messages.received')
    .map((e) => e.payload as { type: string; msg_code: string; params: Record<string, unknown> });

describe('a booking ending stops the desktop', () => {
  it('books from now, starts, warns before the end and stops at the end', async () => {
    expect(outcome(await start())).toEqual({ status: 428, code: 'desktop_not_booked' });
    const latest = await injectWithToken(t.app, token, {
      method: 'GET',
      url: `/api/v3/booking/max_booking_date/${desktopId}`,
    });
    const end = new Date(latest.json<{ max_booking_date: string }>().max_booking_date);
    const made = await book(t.app, token, {
      element_id: desktopId,
      start: new Date(),
      end,
      now: true,
    });
    expect(outcome(made)).toEqual({ status: 200, code: null });
    const bookingId = made.json<{ id: string }>().id;
    await startAndWait();
    expect(await card()).toMatchObject({
      state: 'started',
      booking_id: bookingId,
      next_booking_end: iso(end),
      scheduled: { shutdown: iso(end) },
    });

    const del = await injectWithToken(t.app, token, {
      method: 'DELETE',
      url: `/api/v3/booking/event/${bookingId}`,
    });
    expect(outcome(del)).toEqual({ status: 428, code: 'booking_delete_desktop_running' });

    events.length = 0;
    const early = await t.app.bookingScheduler.runOnce(new Date(end.getTime() - 20 * MINUTE));
    expect(early.noticed).toEqual([]);
    const first = await t.app.bookingScheduler.runOnce(
      new Date(end.getTime() - 15 * MINUTE + 1000),
    );
    expect(first.noticed).toEqual([{ id: bookingId, minutes: 15 }]);
    const second = await t.app.bookingScheduler.runOnce(
      new Date(end.getTime() - 5 * MINUTE + 1000),
    );
    expect(second.noticed).toEqual([{ id: bookingId, minutes: 5 }]);
    expect(
      notices().map((n) => [
        n.type,
        n.msg_code,
        n.params.date,
        n.params.desktop_id,
        n.params.minutes,
      ]),
    ).toEqual([
      ['warning', 'desktop-time-limit', iso(end), desktopId, 15],
      ['danger', 'desktop-time-limit', iso(end), desktopId, 5],
    ]);
    // a notice goes once
    expect(
      (await t.app.bookingScheduler.runOnce(new Date(end.getTime() - 4 * MINUTE))).noticed,
    ).toEqual([]);
    expect(await stateOf()).toBe('started');

    const last = await t.app.bookingScheduler.runOnce(new Date(end.getTime() + 1000));
    expect(last).toMatchObject({ ended: [bookingId], stopped: [desktopId] });
    await until(stateOf, (s) => s === 'stopped');
    const [row] = await t.app.db.select().from(bookings).where(eq(bookings.id, bookingId));
    expect(row?.phase).toBe('ended');
  });

  it('keeps the desktop running into a booking that starts where the last one ends', async () => {
    const step = steps();
    // the last test's booking still spans the real clock: the stopped desktop lets it go
    for (const row of await t.app.db
      .select()
      .from(bookings)
      .where(eq(bookings.itemId, desktopId))) {
      const del = await injectWithToken(t.app, token, {
        method: 'DELETE',
        url: `/api/v3/booking/event/${row.id}`,
      });
      expect(del.statusCode).toBe(200);
    }
    // the card follows the real clock: the first booking is in force now, the next one follows it
    const firstEnd = step(2);
    const made = await book(t.app, token, {
      element_id: desktopId,
      start: new Date(),
      end: firstEnd,
      now: true,
    });
    expect(outcome(made)).toEqual({ status: 200, code: null });
    const next = await book(t.app, token, { element_id: desktopId, start: firstEnd, end: step(3) });
    expect(outcome(next)).toEqual({ status: 200, code: null });
    const nextId = next.json<{ id: string }>().id;
    await startAndWait();

    events.length = 0;
    const warned = await t.app.bookingScheduler.runOnce(
      new Date(firstEnd.getTime() - 5 * MINUTE + 1000),
    );
    expect(warned.noticed.map((n) => n.id)).toEqual([made.json<{ id: string }>().id]);
    expect(notices()).toEqual([]);

    const handover = await t.app.bookingScheduler.runOnce(new Date(firstEnd.getTime() + 1000));
    expect(handover).toMatchObject({
      began: [nextId],
      ended: [made.json<{ id: string }>().id],
      stopped: [],
    });
    expect(await stateOf()).toBe('started');

    const over = await t.app.bookingScheduler.runOnce(new Date(step(3).getTime() + 1000));
    expect(over.stopped).toEqual([desktopId]);
    await until(stateOf, (s) => s === 'stopped');
  });
});
