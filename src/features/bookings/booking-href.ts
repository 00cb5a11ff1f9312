/** Where a booking's item calendar is (kept apart from the calendar screens, which load lazily). */
import type { Booking } from '@/generated/types';
import { routePath } from '@/resources/actions/available-actions';

/** The calendar of a booking's item (`/booking/<type>/<id>`), or null without an item. */
export function bookingItemHref(booking: Pick<Booking, 'item_type' | 'item_id'>): string | null {
  const path = routePath('bookings', 'show');
  if (!path || !booking.item_type || !booking.item_id) return null;
  return path
    .replace(':type', encodeURIComponent(booking.item_type))
    .replace(':id', encodeURIComponent(booking.item_id));
}
