/**
 * Direct-viewer calls: the link of a desktop for those who manage it (whether it has one; a new one
 * or none), and the public calls of a link (no login): the desktop with a viewer token for it
 * alone, start/stop/reset, the viewers documentation, and a console ticket for the viewer token.
 * Every answer here is `Cache-Control: no-store` and `Referrer-Policy: no-referrer`: a link is a
 * credential, and so is what it hands out.
 */
import type { FastifyInstance } from 'fastify';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';

/** Where the viewers documentation lives when no other address is configured. */
const VIEWERS_DOCUMENTATION_URL = 'https://isard.gitlab.io/isardvdi-docs/user/viewers/viewers/';

export default async function directViewerRoutes(app: FastifyInstance) {
  const service = app.directViewer;

  // Routes of this plugin only (it is encapsulated): errors included.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('cache-control', 'no-store');
    reply.header('referrer-policy', 'no-referrer');
    return payload;
  });

  route(app, 'direct-viewer.jumperUrl', (request) =>
    service.linkState(authOf(request), request.params.domainId),
  );

  // The answer is the new token as a JSON string, or null once disabled.
  route(app, 'direct-viewer.resetJumperUrl', async (request, reply) =>
    reply
      .type('application/json')
      .send(
        JSON.stringify(
          await service.resetLink(authOf(request), request.params.domainId, request.body.disabled),
        ),
      ),
  );

  route(app, 'direct-viewer.docs', async () => ({
    viewers_documentation_url: VIEWERS_DOCUMENTATION_URL,
  }));

  route(app, 'direct-viewer.show', (request) => service.show(request.ip, request.params.token));

  route(app, 'direct-viewer.action', (request) =>
    service.action(request.ip, request.params.token, request.params.action),
  );

  route(app, 'direct-viewer.viewer', (request) =>
    service.viewer(request.specialToken ?? null, request.params.desktopId),
  );
}
