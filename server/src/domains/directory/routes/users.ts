/**
 * Administration of users (admins everywhere, managers in their own category): the plain CRUD
 * of the users resource (list, show, create, update, delete), and setting a password, resetting
 * the second factors, the CSV export and import. The administration service does the work and writes the audit entries.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { actorOf } from '../plugin.ts';

export default async function adminUserRoutes(app: FastifyInstance) {
  const users = app.admin.users;

  crudRoutes(app, 'adminUsers', users, (request) => actorOf(authOf(request)));
  route(app, 'adminUsers.setPassword', async (request) => {
    await users.setPassword(actorOf(authOf(request)), request.params.id, request.body);
    return {};
  });
  route(app, 'adminUsers.resetSecondFactors', async (request) => {
    await users.resetSecondFactors(actorOf(authOf(request)), request.params.id);
    return {};
  });
  route(app, 'adminUsers.exportCsv', async (request, reply) =>
    reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', 'attachment; filename="users.csv"')
      .send(await users.exportCsv(actorOf(authOf(request)))),
  );
  // A CSV of a few thousand users is larger than the default body limit.
  route(
    app,
    'adminUsers.importCsv',
    (request) => users.importCsv(actorOf(authOf(request)), request.body),
    { bodyLimit: 6 * 1024 * 1024 },
  );
}
