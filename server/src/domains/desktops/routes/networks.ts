/**
 * Administration of the desktops' networks (admins): the plain CRUD of the adminNetworks
 * resource; every committed write brings this host's bridge in step before the answer, and the
 * other nodes' hosts through the cluster bus.
 */
import type { FastifyInstance } from 'fastify';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { networksCrud } from '../networks.ts';
import { actorOf } from './hypervisors.ts';
import type { NetworkDef } from '../../../platform/hypervisor/network-defs.ts';

export default async function adminNetworkRoutes(app: FastifyInstance) {
  const others = (before: NetworkDef | null, after: NetworkDef | null) =>
    app.cluster.publish({ kind: 'network.changed', node: app.cluster.nodeName, before, after });
  const host = {
    define: (def: NetworkDef, before?: NetworkDef) =>
      app.hostNetworks
        .define(def, before)
        .catch((err: unknown) => app.log.warn({ err }, 'desktop networks'))
        .finally(() => others(before ?? null, def)),
    remove: (def: NetworkDef) =>
      app.hostNetworks
        .remove(def)
        .catch((err: unknown) => app.log.warn({ err }, 'desktop networks'))
        .finally(() => others(def, null)),
  };
  crudRoutes(app, 'adminNetworks', networksCrud(app.db, app.directory, host), actorOf);
}
