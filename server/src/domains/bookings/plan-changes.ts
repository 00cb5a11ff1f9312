/**
 * How a plan change is made: the span checked and rounded up to the planning step, the item's
 * plans kept apart, and every change run holding the item's row and its profiles' rows
 * (booking-store.ts), the bookings that no longer fit cancelled afterwards (the most important and
 * oldest keep their units) and their bookers told.
 */
import type { FastifyInstance } from 'fastify';
import { and, eq, gt, inArray, lt, ne } from 'drizzle-orm';
import { constants, constraints } from '../../../../src/generated/constants.ts';
import {
  bookings,
  plannerEvents,
  plannerEventToWire,
  reservableItems,
  reservableProfiles,
  type BookingRow,
  type PlannerEventRow,
  type ReservableRow,
} from '../../platform/db/schema.ts';
import { ApiError, kindForStatus } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { PlannerEvent } from '../../../../src/generated/types.ts';
import { misfitsAfterChange, type Span } from './booking-availability.ts';
import { bookingSpan, createSerialiser, lockProfiles, planSpan } from './booking-store.ts';
import type { BookingService } from './booking-service.ts';

const MINUTE_MS = 60_000;
const ROUND_MS = constants.planning.roundingMinutes.value * MINUTE_MS;
const MIN_MS = constants.planning.minDurationMinutes.value * MINUTE_MS;

type PlanRule = keyof (typeof constraints)['planning'];

export const planError = (
  rule: PlanRule,
  description: string,
  params?: Record<string, unknown>,
) => {
  const { code, status } = constraints.planning[rule];
  return new ApiError(kindForStatus(status), description, code, params ?? null, { status });
};

export const badBody = (description: string, params?: Record<string, unknown>) =>
  new ApiError('bad_request', description, 'incorrect_new_plan_body_data', params ?? null);

const roundUp = (at: number) => Math.ceil(at / ROUND_MS) * ROUND_MS;

const parseDate = (text: string, field: 'start' | 'end'): Date => {
  const at = new Date(text);
  if (Number.isNaN(at.getTime()))
    throw planError(
      field === 'start' ? 'startNotPast' : 'endAfterStart',
      `The ${field} is not a date`,
    );
  return at;
};

export const toWire = (row: PlannerEventRow): PlannerEvent => ({
  ...plannerEventToWire(row),
  event_type: 'available',
});

export type PlanChanges = ReturnType<typeof planChanges>;

export function planChanges(app: FastifyInstance, bookingService: () => BookingService) {
  const { db } = app;
  const serialised = createSerialiser();

  const itemById = async (id: string, on: Executor = db): Promise<ReservableRow | undefined> =>
    (await on.select().from(reservableItems).where(eq(reservableItems.id, id)).limit(1))[0];

  const lockItem = async (tx: Executor, id: string): Promise<ReservableRow | undefined> =>
    (await tx.select().from(reservableItems).where(eq(reservableItems.id, id)).for('update'))[0];

  const enabledProfile = async (itemId: string, profileId: string, on: Executor = db) =>
    (
      await on
        .select()
        .from(reservableProfiles)
        .where(
          and(
            eq(reservableProfiles.id, profileId),
            eq(reservableProfiles.itemId, itemId),
            eq(reservableProfiles.enabled, true),
          ),
        )
        .limit(1)
    )[0];

  const publish = (
    name: 'planning.created' | 'planning.updated',
    row: PlannerEventRow,
    auth: AuthContext,
  ) => app.events.publish({ name, payload: toWire(row), ownerId: auth.userId, alsoAdmins: true });

  /** Refuses a span that overlaps another plan of the item (but `exceptId`). */
  const assertItemFree = async (tx: Executor, itemId: string, span: Span, exceptId?: string) => {
    const [other] = await tx
      .select({ id: plannerEvents.id })
      .from(plannerEvents)
      .where(
        and(
          eq(plannerEvents.itemId, itemId),
          lt(plannerEvents.startAt, new Date(span.end)),
          gt(plannerEvents.endAt, new Date(span.start)),
          exceptId ? ne(plannerEvents.id, exceptId) : undefined,
        ),
      )
      .limit(1);
    if (other)
      throw planError(
        exceptId ? 'updateSameCardNoOverlap' : 'sameCardNoOverlap',
        'Another plan of the item overlaps',
        { id: other.id },
      );
  };

  /**
   * The bookings of a profile that no longer fit its plans over `window` (those that have not
   * ended), deleted; answers them.
   */
  const dropMisfits = async (
    tx: Executor,
    profileId: string,
    window: Span,
    now: Date,
  ): Promise<BookingRow[]> => {
    const inWindow = await tx
      .select()
      .from(bookings)
      .where(
        and(
          eq(bookings.profileId, profileId),
          lt(bookings.startAt, new Date(window.end)),
          gt(bookings.endAt, new Date(Math.max(window.start, now.getTime()))),
        ),
      );
    if (inWindow.length === 0) return [];
    const hull = {
      start: Math.min(...inWindow.map((b) => b.startAt.getTime())),
      end: Math.max(...inWindow.map((b) => b.endAt.getTime())),
    };
    const around = await tx
      .select()
      .from(bookings)
      .where(
        and(
          eq(bookings.profileId, profileId),
          lt(bookings.startAt, new Date(hull.end)),
          gt(bookings.endAt, new Date(hull.start)),
        ),
      );
    const plans = await tx
      .select()
      .from(plannerEvents)
      .where(
        and(
          eq(plannerEvents.subitemId, profileId),
          lt(plannerEvents.startAt, new Date(hull.end)),
          gt(plannerEvents.endAt, new Date(hull.start)),
        ),
      );
    const changed = new Set(inWindow.map((b) => b.id));
    const misfits = misfitsAfterChange(
      plans.map(planSpan),
      inWindow.map(bookingSpan),
      around.filter((b) => !changed.has(b.id)).map(bookingSpan),
    );
    if (misfits.length === 0) return [];
    return tx
      .delete(bookings)
      .where(
        inArray(
          bookings.id,
          misfits.map((m) => m.id),
        ),
      )
      .returning();
  };

  /** Runs a plan change holding the item and its profiles; cancels the misfits afterwards. */
  const change = async <T>(
    itemId: string,
    profileIds: readonly string[],
    work: (tx: Executor) => Promise<{ result: T; windows: { profileId: string; span: Span }[] }>,
  ): Promise<T> => {
    const now = new Date();
    const { result, dropped } = await serialised([`item:${itemId}`, ...profileIds], () =>
      db.transaction(async (tx) => {
        if (!(await lockItem(tx, itemId)))
          throw new ApiError('not_found', 'Not found', 'not_found');
        await lockProfiles(tx, profileIds);
        const done = await work(tx);
        const removed: BookingRow[] = [];
        for (const w of done.windows)
          removed.push(...(await dropMisfits(tx, w.profileId, w.span, now)));
        return { result: done.result, dropped: removed };
      }),
    );
    await bookingService().cancelled(dropped, 'plan_changed');
    return result;
  };

  const planFor = async (id: string): Promise<PlannerEventRow> => {
    const [row] = await db.select().from(plannerEvents).where(eq(plannerEvents.id, id)).limit(1);
    if (!row) throw new ApiError('not_found', 'Plan not found', 'not_found');
    return row;
  };

  /**
   * The span sent, checked as sent (the end after the start, at least 5 minutes), then rounded up
   * to 5 minutes.
   */
  const spanOf = (body: { start: string; end: string }, update: boolean) => {
    const start = parseDate(body.start, 'start');
    const end = parseDate(body.end, 'end');
    if (end.getTime() <= start.getTime())
      throw planError(
        update ? 'updateEndAfterStart' : 'endAfterStart',
        'The end must be after the start',
      );
    if (end.getTime() - start.getTime() < MIN_MS)
      throw planError(
        update ? 'updateMinDuration' : 'minDuration',
        'A plan lasts at least 5 minutes',
        { min_minutes: MIN_MS / MINUTE_MS },
      );
    return { start: new Date(roundUp(start.getTime())), end: new Date(roundUp(end.getTime())) };
  };

  return { itemById, enabledProfile, publish, assertItemFree, change, planFor, spanOf };
}
