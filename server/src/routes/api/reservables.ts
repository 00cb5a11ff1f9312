/**
 * Reservable items: their kinds, the items of a kind and an item's enabled profiles (admins), and
 * the profiles the caller may give a desktop (any logged-in role).
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../lib/api-error.ts';
import { route } from '../../lib/route.ts';
import { authOf } from '../../plugins/app/auth.ts';

export default async function reservableRoutes(app: FastifyInstance) {
  const planning = app.planningService;

  route(app, 'reservables.types', async (request) => {
    // The router ignores a trailing slash: `/admin/reservables/` is the items call with an empty
    // kind, which names no kind.
    if (request.url.split('?')[0]?.endsWith('/'))
      throw new ApiError('not_found', 'Unknown reservable kind', 'not_found', { itemType: '' });
    return planning.types();
  });

  route(app, 'reservables.items', (request) => planning.items(request.params.itemType));

  route(app, 'reservables.enabled', (request) =>
    planning.enabled(request.params.itemType, request.params.itemId),
  );

  route(app, 'reservables.allowed', (request) => app.bookingService.allowed(authOf(request)));
}
