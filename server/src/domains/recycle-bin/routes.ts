/**
 * Recycle bin calls: list, detail, count, retention, restore, permanent delete and empty. The
 * recycle-bin service does the work; the routes validate and answer.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';

export default async function recycleBinRoutes(app: FastifyInstance) {
  const bin = app.recycleBinService;

  route(app, 'recycle-bins.list', (request) => bin.list(authOf(request)));

  route(app, 'recycle-bins.count', (request) => bin.count(authOf(request)));

  route(app, 'recycle-bins.cutoffTime', async () => ({
    recycle_bin_cuttoff_time: await bin.cutoffHours(),
  }));

  route(app, 'recycle-bins.defaultDelete', () => bin.defaultDelete());

  route(app, 'recycle-bins.show', (request) => bin.detail(authOf(request), request.params.id));

  route(app, 'recycle-bins.restore', (request) => bin.restore(authOf(request), request.params.id));

  route(app, 'recycle-bins.delete', async (request) => {
    await bin.delete(authOf(request), request.params.id);
    return {};
  });

  route(app, 'recycle-bins.empty', async (request) => {
    await bin.empty(authOf(request));
    return {};
  });
}
