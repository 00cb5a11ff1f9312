/**
 * Booking from now and the start gate: the latest end a booking from now may have, the profiles
 * the caller may book from now on, and the gate that lets a desktop needing a booking start only
 * inside one (its own or its deployment's) with a few minutes left.
 */
import type { DesktopRow, ReservableProfileRow } from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { BookingReservableAvailable } from '../../../../src/generated/types.ts';
import { inSet } from '../../../../src/generated/policy.ts';
import { RUNNING_STATES } from '../quotas/index.ts';
import { type EngineDesktop, profilesOf } from '../desktops/index.ts';
import { segmentsOf } from './booking-availability.ts';
import type { BookingCards } from './booking-cards.ts';
import type { BookingDeps } from './booking-deps.ts';
import { precondition, subjectOf, type BookedItem, type BookingItems } from './booking-items.ts';
import {
  BOOKING_MIN_MS,
  START_MIN_LEFT_MS,
  START_NOW_MAX_MS,
  START_NOW_MIN_MS,
  maxBookingDate,
  ruleError,
  stepFloor,
  wireDate,
  type BookingSubject,
} from './booking-rules.ts';
import { bookingSpan, bookingsOf, desktopBookings, planSpan, plansOf } from './booking-store.ts';

export function bookingStarts(
  { app }: Pick<BookingDeps, 'app'>,
  { itemFor, limitsOf, bookableProfile, allowedProfiles }: BookingItems,
  { refreshDesktop }: BookingCards,
) {
  const { db } = app;

  /**
   * The latest end of a booking from `now` for a profile: the free run of units from now (an own
   * booking or a full segment ends it), cut by the rule's length and latest date and by the
   * start-now cap, on a time step.
   */
  const startNowLimit = async (
    subject: BookingSubject,
    profile: ReservableProfileRow,
    item: Pick<BookedItem, 'id' | 'units'> | null,
    now: Date,
  ): Promise<Date> => {
    const limits = await limitsOf(subject, profile);
    if (limits.maxTime === 0)
      throw ruleError('maxDuration', 'Bookings of this profile are not allowed to you', {
        max_time: 0,
      });
    const range = { start: now.getTime(), end: now.getTime() + START_NOW_MAX_MS };
    const plans = (await plansOf(db, profile.id, range)).map(planSpan);
    const taken = (await bookingsOf(db, profile.id, range)).map(bookingSpan);
    const segments = segmentsOf(range, plans, taken, {
      priority: limits.priority,
      ownItem: item?.id,
    });
    if ((segments[0]?.offered ?? 0) === 0)
      throw precondition('No plan offers the profile now', 'current_plan_doesnt_match', {
        profile: profile.id,
      });
    const units = item?.units ?? 1;
    let runEnd = range.start;
    for (const s of segments) {
      if (s.offered - s.kept < units || s.own > 0) break;
      runEnd = s.end;
    }
    const notEnough = () =>
      precondition('There is not enough free time to start now', 'not_enough_time_to_start', {
        profile: profile.id,
      });
    if (runEnd - range.start < START_NOW_MIN_MS) throw notEnough();
    const latest = maxBookingDate(limits, now);
    const bounds = [runEnd, range.end];
    if (limits.maxTime !== null) bounds.push(range.start + limits.maxTime * 60_000);
    if (latest) bounds.push(latest.getTime());
    const limit = stepFloor(Math.min(...bounds));
    if (limit - range.start < BOOKING_MIN_MS) throw notEnough();
    return new Date(limit);
  };

  return {
    /** GET /booking/max_booking_date/{id}: the latest end of a start-now booking of the desktop. */
    async maxBookingDate(
      auth: AuthContext,
      desktopId: string,
    ): Promise<{ max_booking_date: string }> {
      const item = await itemFor(auth, 'desktop', desktopId);
      const profile = await bookableProfile(item);
      return {
        max_booking_date: wireDate(await startNowLimit(subjectOf(auth), profile, item, new Date())),
      };
    },

    /** GET /booking/reservables_available: the profiles the caller may book from now on. */
    async reservablesAvailable(
      auth: AuthContext,
    ): Promise<{ reservables_available: BookingReservableAvailable[] }> {
      const now = new Date();
      const available: BookingReservableAvailable[] = [];
      for (const profile of await allowedProfiles(subjectOf(auth))) {
        const latest = await startNowLimit(subjectOf(auth), profile, null, now).catch(
          (err: unknown) => {
            if (err instanceof ApiError) return null;
            throw err;
          },
        );
        if (latest)
          available.push({
            id: profile.id,
            name: profile.name,
            description: profile.description,
            max_booking_date: wireDate(latest),
          });
      }
      if (available.length === 0)
        throw precondition('No GPU profile can be booked now', 'no_available_profile');
      return { reservables_available: available };
    },

    /**
     * Refuses to start a desktop that needs a booking outside one (its own or its deployment's),
     * or with less than the minimum left of it. Desktops without a GPU profile pass at once.
     */
    async gate(desktop: EngineDesktop): Promise<void> {
      const profiles = profilesOf(desktop.hardware);
      if (profiles.length === 0) return;
      const row = await app.desktops.table.get(desktop.id);
      if (!row) return;
      const now = new Date();
      const rows = await desktopBookings(db, row, profiles, now);
      const current = rows.find((b) => b.startAt.getTime() <= now.getTime());
      if (current) {
        if (current.endAt.getTime() - now.getTime() < START_MIN_LEFT_MS)
          throw precondition(
            'Too little of the booking is left to start',
            'not_enough_time_to_start',
            { end: wireDate(current.endAt) },
          );
        if (row.bookingId !== current.id) await refreshDesktop(row, now);
        return;
      }
      const next = rows[0];
      if (next)
        throw precondition('The desktop is not booked until later', 'desktop_not_booked_until', {
          start: wireDate(next.startAt),
        });
      if (row.tag) throw precondition('The deployment needs a booking', 'needs_deployment_booking');
      throw precondition('The desktop needs a booking to start', 'desktop_not_booked');
    },

    /** The desktops of an item that run now and need a booking of its profile. */
    runningDesktops(item: BookedItem): DesktopRow[] {
      return item.desktops.filter(
        (d) =>
          inSet(RUNNING_STATES, d.state) &&
          item.profileId !== null &&
          profilesOf(d.hardware).includes(item.profileId),
      );
    },
  };
}
