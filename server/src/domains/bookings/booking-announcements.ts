/**
 * What the booker and whoever hears about the item are told about bookings: bookingitem_* and
 * booking_* events, the desktops' cards refreshed, and a `msg` to the booker of a booking
 * cancelled by somebody else.
 */
import { bookingToWire, type BookingRow } from '../../platform/db/schema.ts';
import { sendMessage } from '../../platform/events/messages.ts';
import type { Booking } from '../../../../src/generated/types.ts';
import type { BookingCards } from './booking-cards.ts';
import type { BookingDeps } from './booking-deps.ts';
import type { BookingItems } from './booking-items.ts';
import { wireDate } from './booking-rules.ts';

export type BookingAnnouncements = ReturnType<typeof bookingAnnouncements>;

export function bookingAnnouncements(
  { app, changed }: Pick<BookingDeps, 'app' | 'changed'>,
  { itemOf }: BookingItems,
  { refreshItem }: BookingCards,
) {
  const toWire = (row: BookingRow, editable: boolean): Booking => ({
    ...bookingToWire(row),
    event_type: 'event',
    editable,
  });

  const audienceOfBooking = async (row: BookingRow): Promise<string[]> => {
    const item = await itemOf(row.itemType, row.itemId);
    return [...new Set([row.userId, ...(item?.audience ?? [])])];
  };

  const publishBooking = async (row: BookingRow, change: 'created' | 'updated') => {
    const payload = toWire(row, row.endAt.getTime() > Date.now());
    for (const ownerId of await audienceOfBooking(row)) {
      if (change === 'created') {
        app.events.publish({ name: 'bookings.created', payload, ownerId });
        app.events.publish({ name: 'bookings.bookingAdded', payload, ownerId });
      } else {
        app.events.publish({ name: 'bookings.updated', payload, ownerId });
        app.events.publish({ name: 'bookings.bookingUpdated', payload, ownerId });
      }
    }
  };

  const publishDeleted = async (row: BookingRow) => {
    const payload = { id: row.id, version: row.version + 1 };
    for (const ownerId of await audienceOfBooking(row)) {
      app.events.publish({ name: 'bookings.deleted', payload, ownerId });
      app.events.publish({ name: 'bookings.bookingDeleted', payload, ownerId });
    }
  };

  /**
   * Announces bookings that were deleted: the socket events, the desktops' cards, and a message to
   * the booker when somebody else cancelled it (`reason` says why).
   */
  const cancelled = async (rows: readonly BookingRow[], reason: string | null) => {
    for (const row of rows) {
      await publishDeleted(row);
      if (reason)
        sendMessage(app, row.userId, {
          type: 'warning',
          msg_code: 'booking-cancelled',
          params: {
            name: row.title,
            date: wireDate(row.startAt),
            reason,
          },
        });
    }
    const items = new Map(rows.map((r) => [`${r.itemType}:${r.itemId}`, r]));
    for (const r of items.values()) await refreshItem(r.itemType, r.itemId);
    if (rows.length > 0) changed();
  };

  return { toWire, publishBooking, publishDeleted, cancelled };
}
