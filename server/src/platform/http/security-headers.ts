/**
 * Security headers on every response: CSP with same-origin sources, nosniff, referrer policy
 * (none at all on pages whose URL carries a credential), frame denial, opener isolation; `Cache-Control: no-store` on API and authentication responses;
 * HSTS when the client reached us over https (directly, or through a trusted proxy that says so).
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
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
 * Pages whose URL carries a credential: the direct-viewer page `/vw/<token>` and the links of the
 * password-reset and email-verification mails (`?token=`). They never leak it through a Referer
 * (no-referrer also covers their own assets and API calls) and no cache keeps them (no-store,
 * over the SPA's no-cache).
 */
const DIRECT_VIEWER_PREFIX = (resourceOf('direct-viewer')?.show ?? '/vw/:jumperurl').split(':')[0];
const TOKEN_PAGES = ['/reset-password', '/verify-email'];
const carriesCredential = (url: string) => {
  const path = url.split('?')[0] ?? url;
  return (
    (!!DIRECT_VIEWER_PREFIX && path.startsWith(DIRECT_VIEWER_PREFIX)) ||
    TOKEN_PAGES.some((page) => path === page || path.startsWith(`${page}/`))
  );
};

const plugin: FastifyPluginAsync = async (app) => {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('content-security-policy', CSP);
    reply.header('x-content-type-options', 'nosniff');
    // Other sites learn at most our origin, never a path.
    reply.header('referrer-policy', 'strict-origin-when-cross-origin');
    reply.header('x-frame-options', 'DENY');
    reply.header('cross-origin-opener-policy', 'same-origin');
    // request.protocol reads X-Forwarded-Proto only when TRUST_PROXY is on.
    if (request.protocol === 'https')
      reply.header('strict-transport-security', 'max-age=31536000; includeSubDomains');
    if (isApi(request.url) && !reply.hasHeader('cache-control'))
      reply.header('cache-control', 'no-store');
    if (carriesCredential(request.url)) {
      reply.header('referrer-policy', 'no-referrer');
      reply.header('cache-control', 'no-store');
    }
    return payload;
  });
};

export default globalPlugin(plugin, 'security-headers');
