/**
 * The live portal nodes (admins, read-only): the adminNodes resource, read from the rows the
 * nodes write at their beats (platform/jobs/node-registry.ts). A row is listed while its node
 * holds its node lease: a node that stopped answering leaves the list once its lease expired.
 * Admins' open lists follow the changes live (node-events.ts).
 */
import type { FastifyInstance } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import { crudService } from '../../../platform/crud/crud-service.ts';
import { adminNodeReadToWire, type AdminNodeReadRow } from '../../../platform/db/schema.ts';
import { liveNode } from '../../../platform/jobs/node-registry.ts';
import type { AdminNode } from '../../../../../src/generated/types.ts';
import { actorOf } from '../plugin.ts';
import { tellNodeChanges } from '../node-events.ts';

const readOnly = (): never => {
  throw new Error('adminNodes is read-only');
};

export default async function adminNodeRoutes(app: FastifyInstance) {
  const nodes = crudService<'portalNodes', AdminNode, never, never>(app.db, {
    resource: 'adminNodes',
    storage: 'portalNodes',
    label: 'Node',
    toWire: (row) => adminNodeReadToWire(row as AdminNodeReadRow),
    fromCreate: readOnly,
    fromUpdate: readOnly,
    orderBy: ['name'],
    // Only the live nodes are read: the row of a node whose lease expired waits for the leader
    // to delete it.
    hidden: () => liveNode,
  });
  crudRoutes(app, 'adminNodes', nodes, (request) => actorOf(authOf(request)));
  tellNodeChanges(app, nodes);
}
