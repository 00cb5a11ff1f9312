/**
 * The audit log (admins all of it, managers their own category's entries), newest first. There
 * is no call to change or delete an entry.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../lib/route.ts';
import { authOf } from '../../plugins/app/auth.ts';
import { actorOf } from '../../admin/plugin.ts';
import { refuseEmptyId } from '../../lib/request-guards.ts';

export default async function adminAuditRoutes(app: FastifyInstance) {
  route(app, 'audit.list', (request) => {
    refuseEmptyId(request);
    return app.admin.audit.list(actorOf(authOf(request)));
  });
  route(app, 'audit.show', (request) =>
    app.admin.audit.show(actorOf(authOf(request)), request.params.id),
  );
}
