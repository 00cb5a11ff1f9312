/**
 * Decorates `app.deploymentService`. Registered after the desktops and templates plugins: its boot
 * work runs once the desktop engine has started and the templates are reconciled.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createDeploymentService, type DeploymentService } from './deployment-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    deploymentService: DeploymentService;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  app.decorate('deploymentService', createDeploymentService(app));
  app.addHook('onReady', async () => {
    await app.deploymentService.init();
  });
  app.addHook('onClose', async () => {
    app.deploymentService.close();
  });
};

export default globalPlugin(plugin, 'deployments');
