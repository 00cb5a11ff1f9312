/**
 * Query-options factories of the bookings screens (keys live here). The booking lists sit under
 * the resource's list prefix with the list-cache shape (`{ data, total }`), so the live provider
 * writes the booking socket events straight into them; the caller's other reads have their own
 * keys.
 */
import { queryOptions } from '@tanstack/react-query';
import type { Booking, BookingItemType } from '@/generated/types';
import { toWireDate } from '@/lib/dates';
import { request } from '@/providers/http-client';
import { listKeyPrefix } from '@/providers/live-provider';

export interface BookingRange {
  start: Date;
  end: Date;
}

export interface BookingListCache {
  data: Booking[];
  total: number;
}

function asCache(list: Booking[] | null): BookingListCache {
  const data = list ?? [];
  return { data, total: data.length };
}

function wireRange(range: BookingRange) {
  return { startDate: toWireDate(range.start), endDate: toWireDate(range.end) };
}

export const bookingQueries = {
  /** The item's bookings and the plan's availability windows in the range. */
  item: (type: BookingItemType, id: string, range: BookingRange) =>
    queryOptions({
      queryKey: [
        ...listKeyPrefix('bookings'),
        'item',
        type,
        id,
        range.start.valueOf(),
        range.end.valueOf(),
      ],
      queryFn: async () =>
        asCache(
          await request('bookings.listItem', {
            params: { itemId: id, itemType: type },
            query: { ...wireRange(range), returnType: 'all' },
          }),
        ),
      placeholderData: (previous) => previous,
    }),
  /** All of the caller's bookings in the range (the summary). */
  mine: (range: BookingRange) =>
    queryOptions({
      queryKey: [...listKeyPrefix('bookings'), 'mine', range.start.valueOf(), range.end.valueOf()],
      queryFn: async () => asCache(await request('bookings.list', { query: wireRange(range) })),
      placeholderData: (previous) => previous,
    }),
  /** The caller's booking limits for the item (and its name). */
  priority: (type: BookingItemType, id: string) =>
    queryOptions({
      queryKey: ['bookings.priority', type, id],
      queryFn: () => request('bookings.priority', { params: { type, id } }),
    }),
};
