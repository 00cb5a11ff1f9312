/**
 * Storage calls: the caller's ready disks and growing one. The storage service does the work
 * (cancelling an operation is the desktops' `abortOperations`, served with the desktop calls).
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';

export default async function storageRoutes(app: FastifyInstance) {
  const storage = app.storageService;

  route(app, 'storage.list', (request) => storage.list(authOf(request)));

  route(app, 'storage.increase', (request) => storage.increase(authOf(request), request.params));
}
