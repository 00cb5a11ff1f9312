/**
 * Administration of the desktops' networks (admins): the plain CRUD of the adminNetworks
 * resource; every committed write brings the host's bridge in step.
 */
import type { FastifyInstance } from 'fastify';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { networksCrud } from '../networks.ts';
import { actorOf } from './hypervisors.ts';

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
