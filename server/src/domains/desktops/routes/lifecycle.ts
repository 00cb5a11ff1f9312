/**
 * Desktop calls: start/stop/reset/retry, create from a template (persistent and temporary), edit,
 * info, delete to the recycle bin or permanently, recreate disk, allowed hardware, quota check,
 * card images, thumbnails, the viewers and (admins) the move to another hypervisor host. Each route validates through the operation table and
 * hands over to the desktop service or the engine.
 */
import type { FastifyInstance } from 'fastify';
import { operation, route } from '../../../platform/http/route.ts';
import { COMPRESS_THRESHOLD, negotiateEncoding } from '../../../platform/http/compress.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { assertActionOffered } from '../desktop-rules.ts';
import { constants } from '../../../../../src/generated/constants.ts';
import { MEDIA_INSTALLS } from '../media-installs.ts';
import { moveDesktop } from '../desktop-move.ts';

/** Base64 card images (≤ 3 MiB decoded) ride in the JSON body of create and update. */
const IMAGE_BODY_LIMIT = 5 * 1024 * 1024;

export default async function desktopLifecycleRoutes(app: FastifyInstance) {
  const service = app.desktopService;

  route(app, 'desktops.action', async (request) => {
    const auth = authOf(request);
    const desktop = await service.desktopFor(auth, request.params.id);
    // The generated state-action table (x-actions) is the contract: an action not offered in the
    // desktop's current state is refused, whatever the client shows.
    switch (request.params.action) {
      case 'start':
        assertActionOffered(desktop, ['start', 'create'], 'start');
        await service.checkStartQuota(auth, desktop);
        return { status: await app.engine.start(desktop.id) };
      case 'stop':
        assertActionOffered(desktop, ['stop', 'forceStop'], 'stop');
        return { status: await app.engine.stop(desktop.id) };
      case 'reset':
        assertActionOffered(desktop, ['reset'], 'reset');
        return { status: await app.engine.reset(desktop.id) };
      case 'updating':
        assertActionOffered(desktop, ['updating'], 'update');
        return { status: await app.engine.retry(desktop.id) };
    }
  });

  route(
    app,
    'desktops.create',
    (request) => service.createPersistent(authOf(request), request.body),
    {
      bodyLimit: IMAGE_BODY_LIMIT,
    },
  );

  route(app, 'desktops.createNonpersistent', (request) =>
    service.createTemporary(authOf(request), request.body.template),
  );

  route(app, 'desktops.deleteNonpersistent', async (request) => {
    await service.deleteTemporary(authOf(request), request.params.id);
    return {};
  });

  route(app, 'desktops.delete', async (request) => {
    await service.delete(authOf(request), request.params.id, false);
    return {};
  });

  route(app, 'desktops.deletePermanent', async (request) => {
    await service.delete(authOf(request), request.params.id, true);
    return {};
  });

  route(
    app,
    'desktops.update',
    (request) => service.update(authOf(request), request.params.id, request.body),
    {
      bodyLimit: IMAGE_BODY_LIMIT,
    },
  );

  route(app, 'desktops.cardImage', async (request, reply) => {
    const { data, mime } = await service.cardImage(request.params.file);
    return reply
      .header('Cache-Control', 'private, max-age=86400')
      .header('X-Content-Type-Options', 'nosniff')
      .type(mime)
      .send(data);
  });

  route(app, 'desktops.updateReservables', async (request) => {
    await service.updateReservables(
      authOf(request),
      request.params.id,
      request.body.reservables.vgpus ?? [],
    );
    return {};
  });

  route(app, 'desktops.show', (request) => service.info(authOf(request), request.params.id));

  route(app, 'desktops.hardwareAllowed', (request) => service.hardwareAllowed(authOf(request)));

  route(app, 'desktops.thumbnail', async (request, reply) => {
    const png = await service.thumbnail(authOf(request), request.params.id);
    return reply.header('Cache-Control', 'no-store').type('image/png').send(png);
  });

  route(app, 'desktops.images', async () =>
    Array.from({ length: constants.desktops.stockCards.value }, (_, i) => ({
      id: String(i + 1),
      type: 'stock' as const,
      url: '',
    })),
  );

  route(app, 'desktops.mediaInstalls', async () =>
    MEDIA_INSTALLS.map((install) => ({ ...install })),
  );

  route(app, 'desktops.checkQuota', async (request) => {
    await service.checkCreateQuota(authOf(request));
    return {};
  });

  route(app, 'desktops.recreateDisk', async (request) => {
    await service.recreateDisk(authOf(request), request.params.id);
    return { task_id: crypto.randomUUID() };
  });

  route(app, 'desktops.move', async (request) => {
    await moveDesktop(app, request.params.id, request.body.host);
    return {};
  });

  route(app, 'desktops.abortOperations', async (request) => {
    await app.storageService.abort(authOf(request), request.params.id);
    return {};
  });

  route(app, 'desktops.viewer', async (request, reply) => {
    const answer = await service.viewer(authOf(request), request.params.id, request.params.viewer);
    reply.header('Cache-Control', 'no-store');
    return answer;
  });

  const listResource = operation('desktops.list').resource;
  route(
    app,
    'desktops.list',
    async (request, reply) => {
      // Served from the user's cached list (built from toWire(), the Desktop schema shape, checked
      // by the tests with the generated validator): no per-request query, serialisation or
      // compression on the hot path.
      const auth = authOf(request);
      reply.type('application/json; charset=utf-8');
      // The first desktops only (a page's first screen): small, read apart from the whole list.
      const { limit } = request.query;
      if (limit !== undefined)
        return reply.send(JSON.stringify(await app.desktops.listForUser(auth.userId, limit)));
      const answer = await app.desktops.listAnswerForUser(auth.userId);
      // Fields hidden from the caller's role leave the JSON text in the route's onSend hook.
      if (app.access.hiddenFields(listResource, auth.role).length > 0)
        return reply.send(answer.json);
      if (answer.body.length < COMPRESS_THRESHOLD) return reply.send(answer.body);
      reply.header('vary', 'accept-encoding');
      const encoding =
        request.headers['x-no-compression'] === undefined
          ? negotiateEncoding(request.headers['accept-encoding'])
          : null;
      if (!encoding) return reply.send(answer.body);
      // Already compressed: the compression plugin leaves an answer with a Content-Encoding alone.
      reply.header('content-encoding', encoding);
      return reply.send(await answer.encoded(encoding));
    },
    { response: false },
  );
}
