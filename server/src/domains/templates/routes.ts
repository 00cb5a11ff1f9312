/**
 * Template calls: the caller's own templates and those they may use, the quota check, create from
 * a desktop, duplicate, edit (and enable or disable), the tree of derivatives, delete to the
 * recycle bin and convert back into a desktop. The template service does the work; the routes
 * validate and answer.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';

/** Base64 card images (≤ 3 MiB decoded) ride in the JSON body of an update. */
const IMAGE_BODY_LIMIT = 5 * 1024 * 1024;

export default async function templateRoutes(app: FastifyInstance) {
  const service = app.templateService;

  route(app, 'templates.list', (request) => service.list(authOf(request)));

  route(app, 'templates.allowed', (request) =>
    service.usable(authOf(request), request.params.kind),
  );

  route(app, 'templates.checkQuota', async (request) => {
    await service.checkQuota(authOf(request));
    return {};
  });

  route(app, 'templates.create', (request) => service.create(authOf(request), request.body));

  route(app, 'templates.duplicate', (request) =>
    service.duplicate(authOf(request), request.params.template_id, request.body),
  );

  route(app, 'templates.update', (request) => service.update(authOf(request), request.body), {
    bodyLimit: IMAGE_BODY_LIMIT,
  });

  route(app, 'templates.tree', (request) => service.tree(authOf(request), request.params.id));

  // The answer is the deleted template's id as a JSON string.
  route(app, 'templates.delete', async (request, reply) =>
    reply
      .type('application/json')
      .send(JSON.stringify(await service.delete(authOf(request), request.params.id))),
  );

  route(app, 'templates.toDesktop', (request) => service.toDesktop(authOf(request), request.body));
}
