/**
 * The audit log (admins all of it, managers their own category's entries), newest first. There
 * is no call to change or delete an entry.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { actorOf } from '../plugin.ts';
import { refuseEmptyId } from '../../../platform/http/request-guards.ts';

export default async function adminAuditRoutes(app: FastifyInstance) {
  route(app, 'audit.list', (request) => {
    refuseEmptyId(request);
    return app.admin.audit.list(actorOf(authOf(request)));
  });
  route(app, 'audit.show', (request) =>
    app.admin.audit.show(actorOf(authOf(request)), request.params.id),
  );
}
