/**
 * The stored side of bookings: reads of plans and bookings of a profile over a time span, the
 * caller's count of bookings that have not ended, and the locks that make every booking change
 * race-free. A change of a profile's units (a booking, an edit, a plan change) runs in one
 * transaction that first locks the profile's row (SELECT ... FOR UPDATE) and, when a user's count
 * of bookings matters, that user (a transaction-scoped advisory lock, always taken before the
 * profile's); it then reads what is booked, decides, and writes before anyone else may read. The
 * same statements run on PostgreSQL and PGlite, and on several server nodes. Within one node, a
 * serialiser (`createSerialiser()`) queues the changes of one profile in memory first, so a burst
 * of requests waits for its turn without holding a pooled connection.
 */
import { and, asc, count, eq, gt, inArray, lt, ne, or, sql, type SQL } from 'drizzle-orm';
import {
  bookings,
  plannerEvents,
  reservableProfiles,
  type BookingRow,
  type PlannerEventRow,
  type ReservableProfileRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { BookingSpan, PlanSpan, Span } from './booking-availability.ts';

export const planSpan = (row: PlannerEventRow): PlanSpan => ({
  start: row.startAt.getTime(),
  end: row.endAt.getTime(),
  units: row.units,
});

export const bookingSpan = (row: BookingRow): BookingSpan => ({
  id: row.id,
  itemId: row.itemId,
  start: row.startAt.getTime(),
  end: row.endAt.getTime(),
  units: row.units,
  priority: row.priority,
  createdAt: row.createdAt.getTime(),
});

type TimeColumn =
  | typeof bookings.startAt
  | typeof bookings.endAt
  | typeof plannerEvents.startAt
  | typeof plannerEvents.endAt;

const overlapping = (start: TimeColumn, end: TimeColumn, span: Span) =>
  and(lt(start, new Date(span.end)), gt(end, new Date(span.start)));

/** The plans offering a profile that overlap the span, by start. */
export function plansOf(on: Executor, profileId: string, span: Span): Promise<PlannerEventRow[]> {
  return on
    .select()
    .from(plannerEvents)
    .where(
      and(
        eq(plannerEvents.subitemId, profileId),
        overlapping(plannerEvents.startAt, plannerEvents.endAt, span),
      ),
    )
    .orderBy(asc(plannerEvents.startAt));
}

/** The bookings of a profile that overlap the span (but `exceptId`), by start. */
export function bookingsOf(
  on: Executor,
  profileId: string,
  span: Span,
  exceptId?: string,
): Promise<BookingRow[]> {
  return on
    .select()
    .from(bookings)
    .where(
      and(
        eq(bookings.profileId, profileId),
        overlapping(bookings.startAt, bookings.endAt, span),
        exceptId ? ne(bookings.id, exceptId) : undefined,
      ),
    )
    .orderBy(asc(bookings.startAt));
}

/** One item's bookings overlapping the span (but `exceptId`), by start. */
export function itemBookings(
  on: Executor,
  item: { type: BookingRow['itemType']; id: string },
  span: Span,
  exceptId?: string,
): Promise<BookingRow[]> {
  return on
    .select()
    .from(bookings)
    .where(
      and(
        eq(bookings.itemType, item.type),
        eq(bookings.itemId, item.id),
        overlapping(bookings.startAt, bookings.endAt, span),
        exceptId ? ne(bookings.id, exceptId) : undefined,
      ),
    )
    .orderBy(asc(bookings.startAt));
}

/**
 * The bookings that concern a desktop and have not ended at `now`: its own and its deployment's,
 * of the profiles it names, by start.
 */
export function desktopBookings(
  on: Executor,
  desktop: { id: string; tag: string | null },
  profiles: readonly string[],
  now: Date,
  limit = 3,
): Promise<BookingRow[]> {
  const own = and(eq(bookings.itemType, 'desktop'), eq(bookings.itemId, desktop.id));
  const item: SQL | undefined = desktop.tag
    ? or(own, and(eq(bookings.itemType, 'deployment'), eq(bookings.itemId, desktop.tag)))
    : own;
  return on
    .select()
    .from(bookings)
    .where(and(item, inArray(bookings.profileId, [...profiles]), gt(bookings.endAt, now)))
    .orderBy(asc(bookings.startAt))
    .limit(limit);
}

/** How many of the user's bookings have not ended at `now` (but `exceptId`). */
export async function openBookings(
  on: Executor,
  userId: string,
  now: Date,
  exceptId?: string,
): Promise<number> {
  const [row] = await on
    .select({ n: count() })
    .from(bookings)
    .where(
      and(
        eq(bookings.userId, userId),
        gt(bookings.endAt, now),
        exceptId ? ne(bookings.id, exceptId) : undefined,
      ),
    );
  return Number(row?.n ?? 0);
}

/** Locks the user's booking count until the transaction ends (taken before any profile lock). */
export async function lockUser(tx: Executor, userId: string): Promise<void> {
  await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtext(${`bookings:user:${userId}`}))`);
}

/** Locks profiles' rows until the transaction ends, in id order; answers those that exist. */
export async function lockProfiles(
  tx: Executor,
  ids: readonly string[],
): Promise<ReservableProfileRow[]> {
  const sorted = [...new Set(ids)].sort();
  const rows: ReservableProfileRow[] = [];
  for (const id of sorted) {
    const [row] = await tx
      .select()
      .from(reservableProfiles)
      .where(eq(reservableProfiles.id, id))
      .for('update');
    if (row) rows.push(row);
  }
  return rows;
}

export type Serialiser = <T>(keys: readonly string[], work: () => Promise<T>) => Promise<T>;

/**
 * A queue per key for one server node: `work` runs after the earlier work of the same keys has
 * finished (keys taken in sorted order, so two calls never wait for each other in a circle).
 */
export function createSerialiser(): Serialiser {
  const queues = new Map<string, Promise<unknown>>();
  const serialised: Serialiser = async <T>(keys: readonly string[], work: () => Promise<T>) => {
    const [first, ...rest] = [...new Set(keys)].sort();
    if (first === undefined) return work();
    const previous = queues.get(first) ?? Promise.resolve();
    const run = previous.catch(() => undefined).then(() => serialised(rest, work));
    const settled = run.catch(() => undefined);
    queues.set(first, settled);
    try {
      return await run;
    } finally {
      if (queues.get(first) === settled) queues.delete(first);
    }
  };
  return serialised;
}
