/**
 * Wires the media service into the app (`app.mediaService`): at ready time it settles the
 * downloads a previous run left behind, before any new one can start; on the leader node it
 * settles every half lease those of a node that died; at close it stops the running downloads
 * (they end failed) before the database goes away.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createMediaService, type MediaService } from './media-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    mediaService: MediaService;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const service = createMediaService(app);
  let timer: NodeJS.Timeout | undefined;
  let settling: Promise<void> | undefined;
  app.decorate('mediaService', service);
  app.addHook('onReady', async () => {
    // A failed settle is logged: the portal still starts, and the next boot tries again.
    await service.settle().catch((err: unknown) => app.log.error({ err }, 'media settle failed'));
    timer = setInterval(() => {
      if (settling || !app.work.isLeader) return;
      settling = service
        .settle({ graceMs: app.work.leaseMs })
        .catch((err: unknown) => app.log.warn({ err }, 'media settle failed'))
        .finally(() => {
          settling = undefined;
        });
    }, app.work.leaseMs / 2);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    clearInterval(timer);
    await settling;
    await service.close();
  });
};

export default globalPlugin(plugin, 'media');
