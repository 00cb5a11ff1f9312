/**
 * Administration of the desktops' networks (admins): the plain CRUD of the adminNetworks
 * resource; every committed write brings the host's bridge in step.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import type { CrudActor } from '../../../platform/crud/crud-service.ts';
import { networksCrud } from '../networks.ts';

const actorOf = (request: FastifyRequest): CrudActor => {
  const auth = authOf(request);
  return { id: auth.userId, name: auth.name, role: auth.role, categoryId: auth.categoryId };
};

export default async function adminNetworkRoutes(app: FastifyInstance) {
  const host = {
    define: (...args: Parameters<typeof app.hostNetworks.define>) =>
      app.hostNetworks
        .define(...args)
        .catch((err: unknown) => app.log.warn({ err }, 'desktop networks')),
    remove: (...args: Parameters<typeof app.hostNetworks.remove>) =>
      app.hostNetworks
        .remove(...args)
        .catch((err: unknown) => app.log.warn({ err }, 'desktop networks')),
  };
  crudRoutes(app, 'adminNetworks', networksCrud(app.db, app.directory, host), actorOf);
}
