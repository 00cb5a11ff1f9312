/**
 * The built SPA from dist/ (@fastify/static) with a history fallback: any non-API GET that accepts
 * HTML and matches no file gets dist/index.html. Not registered when dist/ has not been built.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import fastifyStatic from '@fastify/static';
import { globalPlugin } from '../../lib/plugin.ts';

const plugin: FastifyPluginAsync = async (app) => {
  const root = app.config.distDir;
  if (!existsSync(join(root, 'index.html'))) {
    app.log.info({ root }, 'no built SPA found; serving the API only');
    return;
  }
  await app.register(fastifyStatic, {
    root,
    prefix: '/',
    wildcard: true,
    index: false,
    setHeaders: (res, path) => {
      // hashed assets are immutable; everything else revalidates
      res.header(
        'cache-control',
        path.includes(`${join(root, 'assets')}`)
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      );
    },
  });
  app.spaFallback = (request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    if (path.startsWith('/api/') || path.startsWith('/authentication/')) return false;
    if (!(request.headers.accept ?? '').includes('text/html')) return false;
    void reply.code(200).header('cache-control', 'no-cache').sendFile('index.html');
    return true;
  };
};

export default globalPlugin(plugin, 'static-spa');
