/**
 * Decorates `app.work` (work.ts): the leases and jobs of this process, and `app.slots`
 * (cluster-slots.ts): the limits counted across nodes. Its first beat runs when
 * the app is ready (every plugin has added its job handlers by then, and the leader is known
 * before the first reconcile); before the app closes, its running jobs stop and are given back
 * and its leases released, so another node takes them at once. This node is listed among the
 * live nodes (node-registry.ts) from its first beat until it closes.
 */
import { hostname } from 'node:os';
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import { portalVersion } from '../lib/version.ts';
import { createWork, type Work } from './work.ts';
import { createClusterSlots, type ClusterSlots } from './cluster-slots.ts';
import { registerNode, type NodeRegistry } from './node-registry.ts';

declare module 'fastify' {
  interface FastifyInstance {
    work: Work;
    /** Limited things (consoles, downloads) counted across the nodes. */
    slots: ClusterSlots;
    /** This node's row among the live nodes, and the rows' arrivals and departures. */
    nodeRegistry: NodeRegistry;
  }
}

const ANY_ADDRESS = new Set(['0.0.0.0', '::', '']);

const plugin: FastifyPluginAsync = async (app) => {
  const startedAt = new Date();
  const work = createWork(app.database.query, {
    nodeName: app.config.nodeName,
    leaseMs: app.config.workLeaseMs,
    log: app.log,
  });
  app.decorate('work', work);
  app.decorate('slots', createClusterSlots(app.database, work, app.log));
  const node = registerNode(app.database.query, work, {
    startedAt,
    version: portalVersion,
    log: app.log,
    address() {
      const bound = app.server.address();
      const host = typeof bound === 'object' && bound ? bound.address : app.config.host;
      const port = typeof bound === 'object' && bound ? bound.port : app.config.port;
      return `${ANY_ADDRESS.has(host) ? hostname() : host}:${port}`;
    },
  });
  app.decorate('nodeRegistry', node);
  app.addHook('onReady', async () => work.start());
  app.addHook('preClose', async () => {
    await work.stop();
    await node.remove().catch((err: unknown) => app.log.warn({ err }, 'node row not removed'));
  });
};

export default globalPlugin(plugin, 'work');
