/**
 * Administration of categories: admins list, create, change and delete them; a manager lists and
 * reads only their own. The administration service writes the audit entries.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { actorOf } from '../plugin.ts';
import { refuseEmptyId } from '../../../platform/http/request-guards.ts';

export default async function adminCategoryRoutes(app: FastifyInstance) {
  const categories = app.admin.categories;

  route(app, 'adminCategories.list', (request) => {
    refuseEmptyId(request);
    return categories.list(actorOf(authOf(request)));
  });
  route(app, 'adminCategories.show', (request) =>
    categories.show(actorOf(authOf(request)), request.params.id),
  );
  route(app, 'adminCategories.create', (request) =>
    categories.create(actorOf(authOf(request)), request.body),
  );
  route(app, 'adminCategories.update', async (request) => {
    await categories.update(actorOf(authOf(request)), request.params.id, request.body);
    return {};
  });
  route(app, 'adminCategories.delete', async (request) => {
    await categories.remove(actorOf(authOf(request)), request.params.id);
    return {};
  });
}
