/**
 * Planning calls (admins): the plans of a reservable item over a range, create, change and delete
 * a plan (the planning service cancels the bookings that no longer fit), and the storage-pool
 * availability the new-item pages ask first.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';

export default async function planningRoutes(app: FastifyInstance) {
  const service = app.planningService;

  route(app, 'planning.list', (request) =>
    service.list(request.params.itemId, request.params.start, request.params.end),
  );

  // The answer is the new (or extended) plan's id as a JSON string (a bare one would go as text).
  route(app, 'planning.create', async (request, reply) =>
    reply
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(await service.create(authOf(request), request.body))),
  );

  route(app, 'planning.update', async (request) => {
    await service.update(authOf(request), request.params.id, request.body);
    return {};
  });

  route(app, 'planning.delete', async (request) => {
    await service.remove(authOf(request), request.params.id);
    return {};
  });

  // One storage pool, served by this server's own hypervisor.
  route(app, 'planning.storagePoolAvailability', async () => true as const);
}
