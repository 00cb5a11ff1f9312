/**
 * Bookings of reservable profiles: a desktop whose reservables name a GPU profile (or a deployment
 * of such desktops) is booked for a time span and takes units of the profile inside the plans that
 * offer it (one unit per desktop).
 *
 * - Create and edit check the dates against the caller's priority rule (booking-rules.ts), then,
 *   in one transaction holding the booker's and the profile's locks (booking-store.ts): the number
 *   of bookings the booker holds, no overlap with the item's other bookings, and the units left
 *   over the whole span (booking-availability.ts). A booking over an overridable window cancels
 *   the lower-priority bookings whose units it takes. Parallel requests never book a unit twice.
 * - Start-now: the latest end a booking from now may have; `now: true` books from the server's now.
 * - The desktop rows carry what their cards show (`booking_id` of the booking in force, the next
 *   booking's start and end, the scheduled shutdown at its end), refreshed on every change here and
 *   by the scheduler when bookings begin and end (booking-scheduler.ts).
 * - The start gate: a desktop that needs a booking starts only inside one (its own or its
 *   deployment's) with a few minutes left; a desktop without a GPU profile costs no query.
 *
 * Socket events: bookingitem_* and booking_* to the booker and whoever hears about the item, the
 * desktops' own desktop_update, and a `msg` to the booker of a booking cancelled by somebody else.
 */
import type { FastifyInstance } from 'fastify';
import { profilesOf } from '../desktops/index.ts';
import { bookingAnnouncements } from './booking-announcements.ts';
import { bookingCards } from './booking-cards.ts';
import type { BookingDeps } from './booking-deps.ts';
import { bookingItems } from './booking-items.ts';
import { bookingReads } from './booking-reads.ts';
import { bookingStarts } from './booking-starts.ts';
import { createSerialiser } from './booking-store.ts';
import { bookingWrites } from './booking-writes.ts';

export { profileAllowed, type BookedItem, type ItemType } from './booking-items.ts';

export interface BookingServiceOptions {
  /** asks the scheduler to look again (a booking begins or ends at another time now) */
  onChange?: () => void;
}

export type BookingService = ReturnType<typeof createBookingService>;

export function createBookingService(app: FastifyInstance, options: BookingServiceOptions = {}) {
  const deps: BookingDeps = {
    app,
    serialised: createSerialiser(),
    changed: () => options.onChange?.(),
  };
  const items = bookingItems(deps);
  const cards = bookingCards(deps, items);
  const announcements = bookingAnnouncements(deps, items, cards);

  return {
    profilesOf,
    itemOf: items.itemOf,
    refreshItem: cards.refreshItem,
    refreshDesktop: cards.refreshDesktop,
    cancelled: announcements.cancelled,
    allowedProfiles: items.allowedProfiles,
    profilesFor: items.profilesFor,
    ...bookingReads(deps, items, announcements),
    ...bookingWrites(deps, items, cards, announcements),
    ...bookingStarts(deps, items, cards),
    deploymentBookings: cards.deploymentBookings,
    coveredAt: cards.coveredAt,
  };
}
