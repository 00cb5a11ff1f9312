/** Decorates `app.recycleBinService`: the recycle bin of deleted desktops, templates and deployments. */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createRecycleBinService, type RecycleBinService } from './recycle-bin-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    recycleBinService: RecycleBinService;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  app.decorate('recycleBinService', createRecycleBinService(app));
};

export default globalPlugin(plugin, 'recycle-bin');
