/**
 * Decorates `app.work` (work.ts): the leases and jobs of this process, and `app.slots`
 * (cluster-slots.ts): the limits counted across nodes. Its first beat runs when
 * the app is ready (every plugin has added its job handlers by then, and the leader is known
 * before the first reconcile); before the app closes, its running jobs stop and are given back
 * and its leases released, so another node takes them at once.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import { createWork, type Work } from './work.ts';
import { createClusterSlots, type ClusterSlots } from './cluster-slots.ts';

declare module 'fastify' {
  interface FastifyInstance {
    work: Work;
    /** Limited things (consoles, downloads) counted across the nodes. */
    slots: ClusterSlots;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const work = createWork(app.database.query, {
    nodeName: app.config.nodeName,
    leaseMs: app.config.workLeaseMs,
    log: app.log,
  });
  app.decorate('work', work);
  app.decorate('slots', createClusterSlots(app.database, work, app.log));
  app.addHook('onReady', async () => work.start());
  app.addHook('preClose', async () => work.stop());
};

export default globalPlugin(plugin, 'work');
