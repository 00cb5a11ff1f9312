/**
 * Disks beside the desktop engine: the storage service (the caller's disks, growing them, the
 * operation queue), the boot check of disk files against the rows, and the recycle-bin purge
 * timer. Decorates `app.storageService` and `app.recycleBinPurge`.
 *
 * Registered before the engine plugin: its ready hook (the disk check, then the purge timer) runs
 * before the engine adopts running machines and reconciles, so the reconciler never sees a desktop
 * on a missing disk. The services reach the engine, the driver and the recycle bin only when
 * called, once everything is registered.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { checkDisks } from './disk-check.ts';
import { createRecycleBinPurge, type RecycleBinPurge } from '../recycle-bin/index.ts';
import { createStorageService, type StorageService } from './storage-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    storageService: StorageService;
    recycleBinPurge: RecycleBinPurge;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const storage = createStorageService(app);
  const purge = createRecycleBinPurge(app);
  app.decorate('storageService', storage);
  app.decorate('recycleBinPurge', purge);

  app.addHook('onReady', async () => {
    // A failed check is logged: the portal still starts, with the files and rows as they are.
    await checkDisks(app).catch((err: unknown) => app.log.error({ err }, 'disk check failed'));
    purge.start();
  });
  app.addHook('onClose', async () => {
    purge.stop();
    await storage.close();
  });
};

export default globalPlugin(plugin, 'storage');
