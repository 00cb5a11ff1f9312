/**
 * Administration of users (admins everywhere, managers in their own category): list, show,
 * create, update, set a password, delete, and the CSV export and import. The administration
 * service (server/src/domains/directory) does the work and writes the audit entries.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { actorOf } from '../plugin.ts';
import { refuseEmptyId } from '../../../platform/http/request-guards.ts';

export default async function adminUserRoutes(app: FastifyInstance) {
  const users = app.admin.users;

  route(app, 'adminUsers.list', (request) => {
    refuseEmptyId(request);
    return users.list(actorOf(authOf(request)));
  });
  route(app, 'adminUsers.show', (request) =>
    users.show(actorOf(authOf(request)), request.params.id),
  );
  route(app, 'adminUsers.create', (request) =>
    users.create(actorOf(authOf(request)), request.body),
  );
  route(app, 'adminUsers.update', async (request) => {
    await users.update(actorOf(authOf(request)), request.params.id, request.body);
    return {};
  });
  route(app, 'adminUsers.setPassword', async (request) => {
    await users.setPassword(actorOf(authOf(request)), request.params.id, request.body);
    return {};
  });
  route(app, 'adminUsers.delete', async (request) => {
    await users.remove(actorOf(authOf(request)), request.params.id);
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
