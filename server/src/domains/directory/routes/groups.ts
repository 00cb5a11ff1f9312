/**
 * Administration of groups (admins everywhere, managers in their own category): the plain CRUD
 * of the groups resource (list with the users count, show, create, update, delete), answered by
 * the administration service, which writes the audit entries.
 */
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { actorOf } from '../plugin.ts';

export default async function adminGroupRoutes(app: FastifyInstance) {
  crudRoutes(app, 'adminGroups', app.admin.groups, (request) => actorOf(authOf(request)));
}
