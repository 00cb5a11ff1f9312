/**
 * Security headers on every response (threats section 3.10): CSP with same-origin sources, nosniff,
 * referrer policy, frame denial; `Cache-Control: no-store` on API and authentication responses;
 * HSTS when the client reached us over https (directly, or through a trusted proxy that says so).
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../lib/plugin.ts';
import { resourceOf } from '../../../../src/generated/resources.ts';

export const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  // Mantine sets inline style attributes at runtime.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  // 'self' also covers same-origin ws:/wss: (socket.io and the consoles).
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

const isApi = (url: string) => url.startsWith('/api/') || url.startsWith('/authentication/');

/**
 * The direct-viewer page `/vw/<token>`: its URL is a credential,
 * so the page never leaks it through a Referer (no-referrer also covers its own assets and API
 * calls) and no cache keeps it (no-store, over the SPA's no-cache).
 */
const DIRECT_VIEWER_PREFIX = (resourceOf('direct-viewer')?.show ?? '/vw/:jumperurl').split(':')[0];
const isDirectViewerPage = (url: string) =>
  !!DIRECT_VIEWER_PREFIX && url.startsWith(DIRECT_VIEWER_PREFIX);

const plugin: FastifyPluginAsync = async (app) => {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'same-origin');
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-opener-policy', 'same-origin');
    // request.protocol reads X-Forwarded-Proto only when TRUST_PROXY is on.
    if (request.protocol === 'https')
      reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    if (isApi(request.url) && !reply.hasHeader('cache-control'))
      reply.header('cache-control', 'no-store');
    if (isDirectViewerPage(request.url)) {
      reply.header('referrer-policy', 'no-referrer');
      reply.header('cache-control', 'no-store');
    }
    return payload;
  });
};

export default globalPlugin(plugin, 'security-headers');
