/**
 * Booking calls: an item's bookings and availability, the caller's bookings, the caller's limits
 * for an item, create, edit and delete a booking, and the start-now support (the latest end of a
 * booking from now, the profiles bookable from now). The booking service does the work.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';

export default async function bookingRoutes(app: FastifyInstance) {
  const service = app.bookingService;

  route(app, 'bookings.listItem', (request) =>
    service.listItem(
      authOf(request),
      request.params.itemType,
      request.params.itemId,
      request.query,
    ),
  );

  route(app, 'bookings.list', (request) => service.listMine(authOf(request), request.query));

  route(app, 'bookings.priority', (request) =>
    service.priority(authOf(request), request.params.type, request.params.id),
  );

  route(app, 'bookings.create', (request) => service.create(authOf(request), request.body));

  route(app, 'bookings.update', (request) =>
    service.update(authOf(request), request.params.id, request.body),
  );

  route(app, 'bookings.delete', async (request) => {
    await service.remove(authOf(request), request.params.id);
    return {};
  });

  route(app, 'bookings.maxBookingDate', (request) =>
    service.maxBookingDate(authOf(request), request.params.id),
  );

  route(app, 'bookings.reservablesAvailable', (request) =>
    service.reservablesAvailable(authOf(request)),
  );
}
