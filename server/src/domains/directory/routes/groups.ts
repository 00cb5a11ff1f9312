/**
 * Administration of groups (admins everywhere, managers in their own category): list with the
 * users count, show, create, update, delete. The administration service writes the audit entries.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { actorOf } from '../plugin.ts';
import { refuseEmptyId } from '../../../platform/http/request-guards.ts';

export default async function adminGroupRoutes(app: FastifyInstance) {
  const groups = app.admin.groups;

  route(app, 'adminGroups.list', (request) => {
    refuseEmptyId(request);
    return groups.list(actorOf(authOf(request)));
  });
  route(app, 'adminGroups.show', (request) =>
    groups.show(actorOf(authOf(request)), request.params.id),
  );
  route(app, 'adminGroups.create', (request) =>
    groups.create(actorOf(authOf(request)), request.body),
  );
  route(app, 'adminGroups.update', async (request) => {
    await groups.update(actorOf(authOf(request)), request.params.id, request.body);
    return {};
  });
  route(app, 'adminGroups.delete', async (request) => {
    await groups.remove(actorOf(authOf(request)), request.params.id);
    return {};
  });
}
