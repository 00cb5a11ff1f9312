/**
 * What happens when bookings begin and end, without anybody asking:
 *
 * - a booking that begins makes its desktops booked (their cards show it in force);
 * - before a booking ends, the users of its running desktops get the scheduled-shutdown notice (a
 *   `desktop-time-limit` message, `constants.bookings.endNoticeMinutes` before the end: a warning,
 *   then danger), unless another booking carries on at the end;
 * - a booking that ends leaves its desktops unbooked and stops those still running (a graceful
 *   stop, forced after the engine's shutdown grace), unless another booking covers them.
 *
 * Each step claims its bookings with one conditional UPDATE (phase scheduled -> active -> ended,
 * notices sent), so with several server nodes every step happens once. The timer wakes at the
 * next begin, notice or end (at most a minute apart, so clocks or other nodes' changes are seen);
 * changes made here wake it at once. `runOnce(now)` runs the steps for a given instant (tests).
 */
import type { FastifyInstance } from 'fastify';
import { and, eq, gt, lt, lte, ne, sql } from 'drizzle-orm';
import { bookings, type BookingRow } from '../../platform/db/schema.ts';
import { constants } from '../../../../src/generated/constants.ts';
import { sendMessage } from '../../platform/events/messages.ts';
import type { BookingService } from './booking-service.ts';
import { wireDate } from './booking-rules.ts';

const MINUTE_MS = 60_000;
/** Minutes before the end at which the notices go, latest first: [15, 5]. */
const NOTICES = [...constants.bookings.endNoticeMinutes.value].sort((a, b) => b - a);
const NOTICE_TYPES = ['warning', 'danger'] as const;
/** The timer never sleeps longer than this. */
export const MAX_SLEEP_MS = 60_000;

export interface SchedulerRun {
  /** bookings that began */
  began: string[];
  /** bookings whose notice went (id and minutes before the end) */
  noticed: { id: string; minutes: number }[];
  /** bookings that ended */
  ended: string[];
  /** desktops stopped because their booking ended */
  stopped: string[];
}

export interface BookingScheduler {
  start(): void;
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
  /** Looks again now (a booking was made, changed or cancelled). */
  poke(): void;
  /** The steps for the instant `now`; waits for a run in progress first. */
  runOnce(now?: Date): Promise<SchedulerRun>;
  /** Milliseconds from `now` to the next begin, notice or end (0 when overdue), null for none. */
  nextDue(now: Date): Promise<number | null>;
}

/** How many notices are due for a booking ending at `end` (those whose time has come). */
const noticesDue = (end: Date, now: Date): number =>
  NOTICES.filter((minutes) => end.getTime() - minutes * MINUTE_MS <= now.getTime()).length;

export function createBookingScheduler(
  app: FastifyInstance,
  service: () => BookingService,
): BookingScheduler {
  const { db } = app;
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let current: Promise<SchedulerRun> | undefined;

  const began = async (now: Date): Promise<BookingRow[]> =>
    db
      .update(bookings)
      .set({ phase: 'active' })
      .where(and(eq(bookings.phase, 'scheduled'), lte(bookings.startAt, now)))
      .returning();

  const notice = async (row: BookingRow, due: number, now: Date) => {
    const minutes = NOTICES[due - 1] ?? 0;
    const item = await service().itemOf(row.itemType, row.itemId);
    if (!item) return;
    for (const desktop of service().runningDesktops(item)) {
      if (await service().coveredAt(desktop, row.endAt)) continue;
      sendMessage(app, desktop.userId, {
        type: NOTICE_TYPES[Math.min(due - 1, NOTICE_TYPES.length - 1)] ?? 'warning',
        msg_code: 'desktop-time-limit',
        params: {
          date: wireDate(row.endAt),
          name: desktop.name,
          desktop_id: desktop.id,
          minutes,
          time_remaining: Math.max(0, Math.round((row.endAt.getTime() - now.getTime()) / 1000)),
          extend_enabled: false,
        },
      });
    }
  };

  const noticed = async (now: Date): Promise<{ row: BookingRow; due: number }[]> => {
    const first = NOTICES[0];
    if (first === undefined) return [];
    const candidates = await db
      .select()
      .from(bookings)
      .where(
        and(
          ne(bookings.phase, 'ended'),
          gt(bookings.endAt, now),
          lte(bookings.endAt, new Date(now.getTime() + first * MINUTE_MS)),
          lt(bookings.notices, NOTICES.length),
        ),
      );
    const claimed: { row: BookingRow; due: number }[] = [];
    for (const row of candidates) {
      const due = noticesDue(row.endAt, now);
      if (due <= row.notices) continue;
      const [won] = await db
        .update(bookings)
        .set({ notices: due })
        .where(and(eq(bookings.id, row.id), lt(bookings.notices, due)))
        .returning();
      if (won) claimed.push({ row: won, due });
    }
    return claimed;
  };

  const ended = async (now: Date): Promise<BookingRow[]> =>
    db
      .update(bookings)
      .set({ phase: 'ended' })
      .where(and(ne(bookings.phase, 'ended'), lte(bookings.endAt, now)))
      .returning();

  /** Stops the item's running desktops that no other booking covers now; answers their ids. */
  const stopAfter = async (row: BookingRow, now: Date): Promise<string[]> => {
    const item = await service().itemOf(row.itemType, row.itemId);
    if (!item) return [];
    const stopped: string[] = [];
    for (const desktop of service().runningDesktops(item)) {
      if (await service().coveredAt(desktop, now)) continue;
      try {
        await app.engine.stop(desktop.id);
        stopped.push(desktop.id);
      } catch (err) {
        app.log.warn(
          { err, desktop: desktop.id },
          'stopping a desktop at the end of its booking failed',
        );
      }
    }
    return stopped;
  };

  const steps = async (now: Date): Promise<SchedulerRun> => {
    const run: SchedulerRun = { began: [], noticed: [], ended: [], stopped: [] };
    for (const row of await began(now)) {
      run.began.push(row.id);
      await service().refreshItem(row.itemType, row.itemId, now);
    }
    for (const { row, due } of await noticed(now)) {
      run.noticed.push({ id: row.id, minutes: NOTICES[due - 1] ?? 0 });
      await notice(row, due, now);
    }
    for (const row of await ended(now)) {
      run.ended.push(row.id);
      await service().refreshItem(row.itemType, row.itemId, now);
      run.stopped.push(...(await stopAfter(row, now)));
    }
    return run;
  };

  /** When the next step is due: a begin, a notice or an end. */
  const nextDue = async (now: Date): Promise<number | null> => {
    const offsets = NOTICES.map(
      (minutes, i) =>
        sql`min(CASE WHEN ${bookings.notices} <= ${i} THEN ${bookings.endAt} - make_interval(mins => ${minutes}) END)`,
    );
    const [row] = await db
      .select({
        next: sql<Date | string | null>`least(
          min(CASE WHEN ${bookings.phase} = 'scheduled' THEN ${bookings.startAt} END),
          min(${bookings.endAt}),
          ${sql.join(offsets, sql`, `)}
        )`,
      })
      .from(bookings)
      .where(ne(bookings.phase, 'ended'));
    const next = row?.next;
    if (next === null || next === undefined) return null;
    const at = new Date(next).getTime();
    return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
  };

  const runOnce = async (now?: Date): Promise<SchedulerRun> => {
    while (current) await current.catch(() => undefined);
    const run = steps(now ?? new Date());
    current = run;
    try {
      return await run;
    } finally {
      current = undefined;
    }
  };

  const arm = (delayMs: number) => {
    if (!running) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(tick, Math.min(Math.max(delayMs, 0), MAX_SLEEP_MS));
    timer.unref();
  };

  function tick() {
    timer = undefined;
    runOnce()
      .then(() => nextDue(new Date()))
      .then(
        (delay) => arm(delay ?? MAX_SLEEP_MS),
        (err: unknown) => {
          app.log.warn({ err }, 'booking scheduler run failed');
          arm(MAX_SLEEP_MS);
        },
      );
  }

  return {
    start() {
      running = true;
      arm(0);
    },
    async stop() {
      running = false;
      if (timer) clearTimeout(timer);
      timer = undefined;
      while (current) await current.catch(() => undefined);
    },
    poke() {
      if (running && !current) arm(0);
    },
    runOnce,
    nextDue,
  };
}
