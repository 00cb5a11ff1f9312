/**
 * Sharing calls: who an item is shared with, saving its sharing, and the search for users, groups,
 * categories, roles and items to share with. The allowed service does the work (and the checks of
 * who may see and change what); the routes validate and answer.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';

export default async function allowedRoutes(app: FastifyInstance) {
  const service = app.allowedService;

  route(app, 'allowed.table', (request) =>
    service.table(authOf(request), request.params.table, request.body),
  );

  route(app, 'allowed.update', async (request) => {
    await service.update(authOf(request), request.params.table, request.body);
    return {};
  });

  route(app, 'allowed.term', (request) =>
    service.term(authOf(request), request.params.table, request.body),
  );
}
