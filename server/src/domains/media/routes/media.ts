/**
 * Media calls: the caller's media, the quota check, create from a URL, retry and abort a
 * download, the desktops using a medium, delete, and a new desktop from a medium. Each route
 * validates through the operation table and hands over to the media service.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';

export default async function mediaRoutes(app: FastifyInstance) {
  const service = app.mediaService;

  route(app, 'media.list', (request) => service.list(authOf(request)));

  route(app, 'media.checkQuota', async (request) => {
    await service.checkQuota(authOf(request));
    return {};
  });

  route(app, 'media.create', async (request) => {
    await service.create(authOf(request), request.body);
    return {};
  });

  route(app, 'media.download', async (request) => {
    await service.retry(authOf(request), request.params.id);
    return {};
  });

  route(app, 'media.abort', async (request) => {
    await service.abort(authOf(request), request.params.id);
    return {};
  });

  route(app, 'media.desktops', (request) => service.desktops(authOf(request), request.params.id));

  route(app, 'media.delete', (request) => service.delete(authOf(request), request.params.id));

  route(app, 'media.createDesktop', (request) =>
    service.createDesktop(authOf(request), request.body),
  );
}
