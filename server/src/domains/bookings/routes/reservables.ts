/**
 * Reservable items: their kinds, the items of a kind and an item's enabled profiles (admins), and
 * the profiles the caller may give a desktop (any logged-in role).
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { refuseEmptyId } from '../../../platform/http/request-guards.ts';

export default async function reservableRoutes(app: FastifyInstance) {
  const planning = app.planningService;

  route(app, 'reservables.types', async (request) => {
    // `/admin/reservables/` is the items call with an empty kind, which names no kind.
    refuseEmptyId(request);
    return planning.types();
  });

  route(app, 'reservables.items', (request) => planning.items(request.params.itemType));

  route(app, 'reservables.enabled', (request) =>
    planning.enabled(request.params.itemType, request.params.itemId),
  );

  route(app, 'reservables.allowed', (request) => app.bookingService.allowed(authOf(request)));
}
