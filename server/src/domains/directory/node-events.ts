/**
 * The admins' list of live nodes follows the nodes live (adminNodes' x-live events, admins' room):
 * - a node tells its own arrival (its row inserted) at once, and the deletion of a row by whoever
 *   deleted it (a node closing, the leader removing a dead node's row);
 * - at each of its beats the leader compares the live nodes with what it last told, and tells a
 *   node whose shown fields changed (its leader flag, jobs, leases, version, address, start) and
 *   one that left the list. A beat that changes nothing shown tells nothing: the last beat is not
 *   a shown field.
 * Events carry the whole list record, so one that repeats what the list holds changes nothing.
 */
import type { FastifyInstance } from 'fastify';
import type { CrudService } from '../../platform/crud/crud-service.ts';
import type { AdminNode } from '../../../../src/generated/types.ts';
import { role } from '../../../../src/generated/policy.ts';

/** What the events read the list as: an admin. */
const READER = { id: '', name: 'portal', role: role.admin, categoryId: '' };

/** The fields of a node the list shows, as one comparable text. */
const shownOf = (node: AdminNode): string =>
  JSON.stringify([
    node.started_at,
    node.version,
    node.address,
    node.leader,
    node.jobs,
    node.leases,
  ]);

export function tellNodeChanges(
  app: FastifyInstance,
  nodes: CrudService<AdminNode, never, never>,
): void {
  /** What the leader last told of each live node, by name. */
  let told = new Map<string, string>();
  const publish = (name: 'adminNodes.created' | 'adminNodes.updated', node: AdminNode) =>
    app.events.publish({ name, payload: node, ownerId: '' });

  app.nodeRegistry.onChange(async ({ kind, name }) => {
    if (kind === 'left') {
      told.delete(name);
      app.events.publish({ name: 'adminNodes.deleted', payload: { id: name }, ownerId: '' });
      return;
    }
    const node = (await nodes.list(READER)).find((n) => n.id === name);
    if (!node) return;
    told.set(name, shownOf(node));
    publish('adminNodes.created', node);
  });

  const compare = async () => {
    if (!app.work.isLeader) {
      // A node that leads again tells every live node once: what the admins were told meanwhile
      // came from another leader.
      told = new Map();
      return;
    }
    const live = await nodes.list(READER);
    const now = new Map(live.map((node) => [node.id, shownOf(node)]));
    for (const name of told.keys())
      if (!now.has(name))
        app.events.publish({ name: 'adminNodes.deleted', payload: { id: name }, ownerId: '' });
    for (const node of live) {
      const before = told.get(node.id);
      if (before !== now.get(node.id))
        publish(before === undefined ? 'adminNodes.created' : 'adminNodes.updated', node);
    }
    told = now;
  };
  // A failed comparison is logged; the beat's other work goes on.
  app.work.onBeat(() =>
    compare().catch((err: unknown) => app.log.warn({ err }, 'live nodes not compared')),
  );
}
