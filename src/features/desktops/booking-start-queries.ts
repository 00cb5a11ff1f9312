/** Query-options factories of the start-now and cannot-start-now modals (keys live here). */
import { queryOptions } from '@tanstack/react-query';
import { request } from '@/providers/http-client';

export const bookingStartQueries = {
  /** The profiles available now, each with the furthest end a booking of it may have. */
  reservablesAvailable: () =>
    queryOptions({
      queryKey: ['bookings.reservablesAvailable'],
      queryFn: () => request('bookings.reservablesAvailable'),
      staleTime: 0,
      retry: false,
    }),
  /** The furthest end a booking of the desktop's own profile may have. */
  maxBookingDate: (id: string) =>
    queryOptions({
      queryKey: ['bookings.maxBookingDate', id],
      queryFn: () => request('bookings.maxBookingDate', { params: { id } }),
      staleTime: 0,
      retry: false,
    }),
};
