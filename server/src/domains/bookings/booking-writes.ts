/**
 * Writing bookings: create and edit (the dates checked against the caller's priority rule, then
 * placed in one transaction holding the booker's and the profile's locks, evicting the
 * lower-priority bookings an overridable window takes the units of), delete, and the bookings that
 * go when a desktop's profile changes or an item is gone.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, gt, inArray, sql } from 'drizzle-orm';
import {
  bookingFromCreate,
  bookingFromUpdate,
  bookings,
  type BookingRow,
} from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { Booking, BookingCreate, BookingUpdate } from '../../../../src/generated/types.ts';
import { desktopStates, hasRoleAtLeast, inSet, role } from '../../../../src/generated/policy.ts';
import type { BookingAnnouncements } from './booking-announcements.ts';
import {
  evictionsFor,
  fitOf,
  segmentsOf,
  type BookingSpan,
  type Span,
} from './booking-availability.ts';
import type { BookingCards } from './booking-cards.ts';
import type { BookingDeps } from './booking-deps.ts';
import {
  parseDate,
  precondition,
  subjectOf,
  type BookedItem,
  type BookingItems,
  type ItemType,
} from './booking-items.ts';
import { checkDates, ruleError } from './booking-rules.ts';
import {
  bookingSpan,
  bookingsOf,
  itemBookings,
  lockProfiles,
  lockUser,
  openBookings,
  planSpan,
  plansOf,
} from './booking-store.ts';

export function bookingWrites(
  { app, serialised, changed }: BookingDeps,
  { itemOf, itemFor, profileById, limitsOf, bookableProfile, subjectById }: BookingItems,
  { refreshItem }: BookingCards,
  { toWire, publishBooking, publishDeleted, cancelled }: BookingAnnouncements,
) {
  const { db } = app;

  const deleteRows = async (on: Executor, ids: readonly string[]): Promise<BookingRow[]> =>
    ids.length === 0
      ? []
      : on
          .delete(bookings)
          .where(inArray(bookings.id, [...ids]))
          .returning();

  /**
   * Where a booking of `item` over `span` may go, inside the transaction that holds the profile:
   * not over another of the item's bookings, inside the plans, with the units left (answers the
   * lower-priority bookings it takes the units of).
   */
  const place = async (
    tx: Executor,
    item: BookedItem,
    profileId: string,
    span: Span,
    priority: number,
    exceptId?: string,
  ): Promise<BookingSpan[]> => {
    const update = exceptId !== undefined;
    const mine = await itemBookings(tx, item, span, exceptId);
    if (mine.length > 0)
      throw ruleError(update ? 'updateNoOverlap' : 'noOverlap', 'It overlaps another booking', {
        id: mine[0]?.id,
      });
    const plans = (await plansOf(tx, profileId, span)).map(planSpan);
    const taken = (await bookingsOf(tx, profileId, span, exceptId)).map(bookingSpan);
    const fit = fitOf(segmentsOf(span, plans, taken, { priority }), item.units);
    if (fit === 'outside')
      throw ruleError(
        update ? 'updateFitsPlans' : 'fitsPlans',
        'The booking does not fit the available time',
      );
    if (fit === 'full')
      throw ruleError(update ? 'updateNoOverlap' : 'noOverlap', 'No unit is left at that time', {
        units: item.units,
      });
    return fit === 'override' ? evictionsFor(span, plans, taken, item.units, priority) : [];
  };

  const bookingFor = async (auth: AuthContext, id: string) => {
    const row = (await db.select().from(bookings).where(eq(bookings.id, id)).limit(1))[0];
    if (!row) throw new ApiError('not_found', 'Booking not found', 'not_found');
    if (row.userId !== auth.userId && !hasRoleAtLeast(auth.role, role.admin))
      await itemFor(auth, row.itemType, row.itemId);
    return row;
  };

  return {
    /** POST /booking/event. */
    async create(auth: AuthContext, body: BookingCreate): Promise<Booking> {
      const now = new Date();
      const item = await itemFor(auth, body.element_type, body.element_id);
      const profile = await bookableProfile(item);
      const startsNow = body.now === true;
      if (startsNow && item.type === 'deployment')
        throw new ApiError(
          'bad_request',
          'Only a desktop can be booked from now',
          'booking_now_desktop_only',
        );
      const start = startsNow ? now : parseDate(body.start, 'start');
      const end = parseDate(body.end, 'end');
      const limits = await limitsOf(subjectOf(auth), profile);
      checkDates({ start, end }, limits, {
        now,
        startsNow,
        startUnchanged: false,
        update: false,
      });
      const span = { start: start.getTime(), end: end.getTime() };
      const { row, evicted } = await serialised([profile.id], () =>
        db.transaction(async (tx) => {
          await lockUser(tx, auth.userId);
          await lockProfiles(tx, [profile.id]);
          if (
            limits.maxItems !== null &&
            (await openBookings(tx, auth.userId, now)) >= limits.maxItems
          )
            throw ruleError('maxItems', 'The maximum number of bookings has been reached', {
              max_items: limits.maxItems,
            });
          const evict = await place(tx, item, profile.id, span, limits.priority);
          const removed = await deleteRows(
            tx,
            evict.map((e) => e.id),
          );
          const [inserted] = await tx
            .insert(bookings)
            .values({
              // every stored field of the body, by the generated mapper; then what differs
              ...bookingFromCreate(body),
              id: randomUUID(),
              itemId: item.id,
              itemType: item.type,
              title: body.title?.trim() || item.name,
              startAt: start,
              endAt: end,
              units: item.units,
              userId: auth.userId,
              reservables: { vgpus: [profile.id] },
              profileId: profile.id,
              priority: limits.priority,
              phase: start.getTime() <= now.getTime() ? 'active' : 'scheduled',
            })
            .returning();
          if (!inserted) throw new Error('booking insert returned no row');
          return { row: inserted, evicted: removed };
        }),
      );
      await cancelled(evicted, 'overridden');
      await publishBooking(row, 'created');
      await refreshItem(item.type, item.id);
      changed();
      return toWire(row, true);
    },

    /** PUT /booking/event/{id}: new dates (a booking in progress keeps its start) and title. */
    async update(auth: AuthContext, id: string, body: BookingUpdate): Promise<Booking> {
      const now = new Date();
      const current = await bookingFor(auth, id);
      // The form may repeat what it edits; it must be this booking and its item.
      const named = {
        event_id: current.id,
        element_id: current.itemId,
        element_type: current.itemType,
      };
      for (const [field, value] of Object.entries(named))
        if (
          body[field as keyof typeof named] !== undefined &&
          body[field as keyof typeof named] !== value
        )
          throw new ApiError('bad_request', `The form names another ${field}`, 'bad_request', {
            field,
          });
      if (current.endAt.getTime() <= now.getTime())
        throw precondition('The booking has ended', 'booking_not_editable', { id });
      const item = await itemOf(current.itemType, current.itemId);
      if (!item) throw new ApiError('not_found', 'Not found', 'not_found');
      const profile = await profileById(current.profileId);
      if (!profile) throw new ApiError('not_found', 'Not found', 'not_found');
      const start = parseDate(body.start, 'start');
      const end = parseDate(body.end, 'end');
      const booker =
        current.userId === auth.userId ? subjectOf(auth) : await subjectById(current.userId);
      const limits = await limitsOf(booker, profile);
      checkDates({ start, end }, limits, {
        now,
        startsNow: false,
        startUnchanged: start.getTime() === current.startAt.getTime(),
        update: true,
      });
      const span = { start: start.getTime(), end: end.getTime() };
      const { row, evicted } = await serialised([profile.id], () =>
        db.transaction(async (tx) => {
          await lockUser(tx, current.userId);
          await lockProfiles(tx, [profile.id]);
          const evict = await place(tx, item, profile.id, span, current.priority, current.id);
          const removed = await deleteRows(
            tx,
            evict.map((e) => e.id),
          );
          const [updated] = await tx
            .update(bookings)
            .set({
              // every stored field of the body, by the generated mapper; then what differs
              ...bookingFromUpdate(body),
              startAt: start,
              endAt: end,
              ...(body.title !== undefined ? { title: body.title.trim() || item.name } : {}),
              phase: start.getTime() <= now.getTime() ? 'active' : 'scheduled',
              ...(end.getTime() !== current.endAt.getTime() ? { notices: 0 } : {}),
              version: sql`${bookings.version} + 1`,
            })
            .where(eq(bookings.id, current.id))
            .returning();
          if (!updated) throw new ApiError('not_found', 'Booking not found', 'not_found');
          return { row: updated, evicted: removed };
        }),
      );
      await cancelled(evicted, 'overridden');
      await publishBooking(row, 'updated');
      await refreshItem(row.itemType, row.itemId);
      changed();
      return toWire(row, true);
    },

    /** DELETE /booking/event/{id}: a booking in progress needs its desktops stopped. */
    async remove(auth: AuthContext, id: string): Promise<void> {
      const row = await bookingFor(auth, id);
      const now = Date.now();
      if (row.startAt.getTime() <= now && row.endAt.getTime() > now) {
        const item = await itemOf(row.itemType, row.itemId);
        if (item?.desktops.some((d) => !inSet(desktopStates.startable, d.state)))
          throw precondition(
            'The booking can not be deleted while its desktop runs',
            'booking_delete_desktop_running',
            { id },
          );
      }
      const removed = await deleteRows(db, [row.id]);
      await cancelled(removed, null);
    },

    /** A desktop's profile changed: its bookings that have not ended no longer apply. */
    async profileChanged(desktopId: string): Promise<void> {
      const removed = await db
        .delete(bookings)
        .where(
          and(
            eq(bookings.itemType, 'desktop'),
            eq(bookings.itemId, desktopId),
            gt(bookings.endAt, new Date()),
          ),
        )
        .returning();
      await cancelled(removed, null);
      await refreshItem('desktop', desktopId);
    },

    /** The item is gone: its bookings go too. */
    async itemGone(type: ItemType, id: string): Promise<void> {
      if (await itemOf(type, id)) return;
      const removed = await db
        .delete(bookings)
        .where(and(eq(bookings.itemType, type), eq(bookings.itemId, id)))
        .returning();
      for (const row of removed) await publishDeleted(row);
      if (removed.length > 0) changed();
    },
  };
}
