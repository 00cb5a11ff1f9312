/**
 * Decorates `app.templateService`. Registered after the desktops plugin: its boot reconcile runs once
 * the desktop engine has started.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { createTemplateService, type TemplateService } from './template-service.ts';

declare module 'fastify' {
  interface FastifyInstance {
    templateService: TemplateService;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  app.decorate('templateService', createTemplateService(app));
  app.addHook('onReady', async () => {
    await app.templateService.reconcile();
  });
  app.addHook('onClose', async () => {
    app.templateService.close();
  });
};

export default globalPlugin(plugin, 'templates');
