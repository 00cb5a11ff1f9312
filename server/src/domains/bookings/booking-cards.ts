/**
 * What desktop and deployment cards show about their bookings: the booking in force, the next
 * one's (or that one's) start and end, and for a desktop the scheduled shutdown at its end.
 */
import { and, asc, eq, gt, inArray } from 'drizzle-orm';
import { bookings, type DesktopRow } from '../../platform/db/schema.ts';
import type { DesktopHardware } from '../../../../src/generated/types.ts';
import type { DeploymentBookingState } from '../deployments/index.ts';
import { profilesOf } from '../desktops/index.ts';
import type { BookingDeps } from './booking-deps.ts';
import type { BookingItems, ItemType } from './booking-items.ts';
import { wireDate } from './booking-rules.ts';
import { desktopBookings } from './booking-store.ts';

export type BookingCards = ReturnType<typeof bookingCards>;

export function bookingCards({ app }: Pick<BookingDeps, 'app'>, { itemOf }: BookingItems) {
  const { db } = app;

  /**
   * Writes what a desktop's card shows about its bookings at `now`: the booking in force, the
   * next one's (or that one's) start and end, the scheduled shutdown at its end. Only changes are
   * written (each write is a desktop_update).
   */
  const refreshDesktop = async (row: DesktopRow, now = new Date()): Promise<void> => {
    const profiles = profilesOf(row.hardware);
    const rows = profiles.length > 0 ? await desktopBookings(db, row, profiles, now) : [];
    const current = rows.find((b) => b.startAt.getTime() <= now.getTime());
    const next = current ?? rows[0];
    const shutdown: string | false = current ? wireDate(current.endAt) : false;
    const scheduled = row.scheduled as { shutdown?: unknown };
    const patch = {
      bookingId: current?.id ?? null,
      nextBookingStart: next?.startAt ?? null,
      nextBookingEnd: next?.endAt ?? null,
      ...(profiles.length > 0 || scheduled.shutdown !== false
        ? { scheduled: { ...row.scheduled, shutdown } }
        : {}),
    };
    const same =
      (row.bookingId ?? null) === patch.bookingId &&
      (row.nextBookingStart?.getTime() ?? null) === (patch.nextBookingStart?.getTime() ?? null) &&
      (row.nextBookingEnd?.getTime() ?? null) === (patch.nextBookingEnd?.getTime() ?? null) &&
      (patch.scheduled === undefined || scheduled.shutdown === shutdown);
    if (!same) await app.desktops.update(row.id, patch);
  };

  const refreshItem = async (type: ItemType, id: string, now = new Date()): Promise<void> => {
    const item = await itemOf(type, id);
    for (const d of item?.desktops ?? []) await refreshDesktop(d, now);
  };

  return {
    refreshDesktop,
    refreshItem,

    /**
     * What deployment cards show about their bookings at `now`: whether the deployment needs one
     * (its desktops' hardware names a GPU profile), the booking in force and the next one's (or
     * that one's) start and end.
     */
    async deploymentBookings(
      rows: readonly { id: string; createDict: { hardware?: DesktopHardware } }[],
      now = new Date(),
    ): Promise<Map<string, DeploymentBookingState>> {
      const ids = rows.map((r) => r.id);
      const found =
        ids.length === 0
          ? []
          : await db
              .select()
              .from(bookings)
              .where(
                and(
                  eq(bookings.itemType, 'deployment'),
                  inArray(bookings.itemId, ids),
                  gt(bookings.endAt, now),
                ),
              )
              .orderBy(asc(bookings.startAt));
      const states = new Map<string, DeploymentBookingState>();
      for (const row of rows) {
        const own = found.filter((b) => b.itemId === row.id);
        const current = own.find((b) => b.startAt.getTime() <= now.getTime());
        const next = current ?? own[0];
        states.set(row.id, {
          needs_booking: profilesOf(row.createDict.hardware).length > 0,
          booking_id: current?.id ?? false,
          next_booking_start: next ? wireDate(next.startAt) : null,
          next_booking_end: next ? wireDate(next.endAt) : null,
        });
      }
      return states;
    },

    /** Whether a booking (its own or its deployment's) covers the desktop at the instant. */
    async coveredAt(desktop: DesktopRow, at: Date): Promise<boolean> {
      const rows = await desktopBookings(db, desktop, profilesOf(desktop.hardware), at, 1);
      return rows.some((b) => b.startAt.getTime() <= at.getTime());
    },
  };
}
