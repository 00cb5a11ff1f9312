/** Desktop routes of the foundation: the caller's list (hot path, see scripts/bench/api.ts). */
import type { FastifyInstance } from 'fastify';
import { route } from '../../lib/route.ts';
import { authOf } from '../../plugins/app/auth.ts';

export default async function desktopRoutes(app: FastifyInstance) {
  // Served as a cached JSON string built from toWire() (the Desktop schema shape, checked by the
  // tests with the generated validator): no per-request query or serialisation on the hot path.
  route(
    app,
    'desktops.list',
    async (request, reply) =>
      reply
        .type('application/json; charset=utf-8')
        .send(await app.desktops.listJsonForUser(authOf(request).userId)),
    { response: false },
  );
}
