/**
 * Reading bookings: the profiles the caller may give a desktop, an item's bookings with its
 * availability, the caller's own bookings, and the caller's limits for an item's profile.
 */
import { and, asc, eq, gt, inArray, lt, or } from 'drizzle-orm';
import { bookings, desktops } from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type {
  Booking,
  BookingPriority,
  BookingRangeQuery,
  ReservableAllowedProfile,
} from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import type { BookingAnnouncements } from './booking-announcements.ts';
import { windowsOf } from './booking-availability.ts';
import type { BookingDeps } from './booking-deps.ts';
import { parseDate, subjectOf, type BookingItems, type ItemType } from './booking-items.ts';
import { maxBookingDate, wireDate } from './booking-rules.ts';
import { bookingSpan, bookingsOf, itemBookings, planSpan, plansOf } from './booking-store.ts';

export function bookingReads(
  { app }: Pick<BookingDeps, 'app'>,
  { itemFor, profileById, limitsOf, bookableProfile, allowedProfiles }: BookingItems,
  { toWire }: BookingAnnouncements,
) {
  const { db } = app;

  return {
    /** GET /domains/allowed/reservables: None (No GPU), then the profiles the caller may use. */
    async allowed(auth: AuthContext): Promise<{ vgpus: ReservableAllowedProfile[] }> {
      const editable = hasRoleAtLeast(auth.role, role.admin);
      return {
        vgpus: [
          { id: 'None', name: 'No GPU', description: null, allowed: true, editable },
          ...(await allowedProfiles(subjectOf(auth))).map((p) => ({
            id: p.id,
            name: p.name,
            description: p.description,
            allowed: true,
            editable,
          })),
        ],
      };
    },

    /** GET /bookings/user/{itemId}/{itemType}: the item's bookings, then its availability. */
    async listItem(
      auth: AuthContext,
      type: ItemType,
      id: string,
      query: BookingRangeQuery,
    ): Promise<Booking[]> {
      const item = await itemFor(auth, type, id);
      const range = {
        start: parseDate(query.startDate, 'start').getTime(),
        end: parseDate(query.endDate, 'end').getTime(),
      };
      const what = query.returnType ?? 'all';
      const now = Date.now();
      const profile = item.profileId ? await profileById(item.profileId) : undefined;
      const windows = what !== 'event' && profile?.enabled === true && range.end > range.start;
      // With windows, the profile's bookings are read once: the item's own are among them.
      const [limits, plans, taken] = windows
        ? await Promise.all([
            limitsOf(subjectOf(auth), profile),
            plansOf(db, profile.id, range),
            bookingsOf(db, profile.id, range),
          ])
        : [null, [], null];
      const out: Booking[] = [];
      if (what !== 'availability') {
        const own = taken
          ? taken.filter((r) => r.itemType === item.type && r.itemId === item.id)
          : await itemBookings(db, item, range);
        for (const row of own) out.push(toWire(row, row.endAt.getTime() > now));
      }
      if (limits && taken)
        for (const w of windowsOf(range, plans.map(planSpan), taken.map(bookingSpan), {
          units: item.units,
          priority: limits.priority,
          ownItem: item.id,
        }))
          out.push({
            event_type: w.type,
            start: wireDate(new Date(w.start)),
            end: wireDate(new Date(w.end)),
            units: w.units,
          });
      return out;
    },

    /**
     * GET /bookings/user: the bookings the caller made and those of the caller's desktops and of
     * the deployments the caller has a desktop in, overlapping the range.
     */
    async listMine(auth: AuthContext, query: BookingRangeQuery): Promise<Booking[]> {
      const range = {
        start: parseDate(query.startDate, 'start'),
        end: parseDate(query.endDate, 'end'),
      };
      const mine = await db
        .select({ id: desktops.id, tag: desktops.tag })
        .from(desktops)
        .where(eq(desktops.userId, auth.userId));
      const desktopIds = mine.map((d) => d.id);
      const deploymentIds = [...new Set(mine.flatMap((d) => (d.tag ? [d.tag] : [])))];
      const rows = await db
        .select()
        .from(bookings)
        .where(
          and(
            lt(bookings.startAt, range.end),
            gt(bookings.endAt, range.start),
            or(
              eq(bookings.userId, auth.userId),
              desktopIds.length > 0
                ? and(eq(bookings.itemType, 'desktop'), inArray(bookings.itemId, desktopIds))
                : undefined,
              deploymentIds.length > 0
                ? and(eq(bookings.itemType, 'deployment'), inArray(bookings.itemId, deploymentIds))
                : undefined,
            ),
          ),
        )
        .orderBy(asc(bookings.startAt));
      const now = Date.now();
      const own = new Set(desktopIds);
      return rows.map((row) =>
        toWire(
          row,
          row.endAt.getTime() > now &&
            (row.userId === auth.userId ||
              hasRoleAtLeast(auth.role, role.admin) ||
              (row.itemType === 'desktop' && own.has(row.itemId))),
        ),
      );
    },

    /** GET /bookings/priority/{type}/{id}: the caller's limits for the item's profile. */
    async priority(auth: AuthContext, type: ItemType, id: string): Promise<BookingPriority> {
      const item = await itemFor(auth, type, id);
      const profile = await bookableProfile(item);
      const limits = await limitsOf(subjectOf(auth), profile);
      const latest = maxBookingDate(limits, new Date());
      return {
        priority: { [profile.id]: limits.priority },
        forbid_time: limits.forbidTime,
        max_time: limits.maxTime,
        max_items: limits.maxItems,
        name: item.name,
        max_booking_date: latest ? wireDate(latest) : null,
      };
    },
  };
}
