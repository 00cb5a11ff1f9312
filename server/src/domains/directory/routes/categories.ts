/**
 * Administration of categories: admins list, create, change and delete them; a manager lists and
 * reads only their own. The plain CRUD of the categories resource, answered by the administration
 * service, which writes the audit entries.
 */
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { actorOf } from '../plugin.ts';

export default async function adminCategoryRoutes(app: FastifyInstance) {
  crudRoutes(app, 'adminCategories', app.admin.categories, (request) => actorOf(authOf(request)));
}
