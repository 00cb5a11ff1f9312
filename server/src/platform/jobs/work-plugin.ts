/**
 * Decorates `app.work` (work.ts): the leases and jobs of this process. Its first beat runs when
 * the app is ready (every plugin has added its job handlers by then, and the leader is known
 * before the first reconcile); before the app closes, its running jobs stop and are given back
 * and its leases released, so another node takes them at once.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import { createWork, type Work } from './work.ts';

declare module 'fastify' {
  interface FastifyInstance {
    work: Work;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const work = createWork(app.database.query, {
    nodeName: app.config.nodeName,
    leaseMs: app.config.workLeaseMs,
    log: app.log,
  });
  app.decorate('work', work);
  app.addHook('onReady', async () => work.start());
  app.addHook('preClose', async () => work.stop());
};

export default globalPlugin(plugin, 'work');
