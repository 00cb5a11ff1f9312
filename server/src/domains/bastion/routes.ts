/** The bastion operations of schema/entities/bastion.schema.json, handed to the bastion service. */
import type { FastifyInstance } from 'fastify';
import { route } from '../../platform/http/route.ts';
import { authOf } from '../../platform/auth/auth.ts';

export default async function bastionRoutes(app: FastifyInstance) {
  const service = app.bastion;

  route(app, 'bastion.show', (request) => service.show(authOf(request), request.params.id));

  route(app, 'bastion.update', async (request) => {
    await service.update(authOf(request), request.params.id, request.body);
    return {};
  });

  route(app, 'bastion.list', (request) => service.list(authOf(request)));

  route(app, 'bastion.authorizedKeys', async (request) => {
    await service.setAuthorizedKeys(
      authOf(request),
      request.params.desktop_id,
      request.body.authorized_keys,
    );
    return {};
  });

  route(app, 'bastion.domain', async (request) => {
    await service.setDomain(
      authOf(request),
      request.params.desktop_id,
      request.body.domain ?? null,
    );
    return {};
  });
}
