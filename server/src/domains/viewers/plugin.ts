/**
 * Decorates `app.directViewer`: direct-viewer links. Registered after the deployments plugin, whose
 * service says who manages a deployment desktop and whether it is visible.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createDirectViewerService, type DirectViewerService } from './direct-viewer-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    directViewer: DirectViewerService;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const { deploymentService } = app;
  app.decorate(
    'directViewer',
    createDirectViewerService(app, {
      managesDeploymentOf: deploymentService.managesDeploymentOf,
      isVisible: deploymentService.isVisible,
    }),
  );
  app.addHook('onClose', async () => {
    app.directViewer.close();
  });
};

export default globalPlugin(plugin, 'viewers');
