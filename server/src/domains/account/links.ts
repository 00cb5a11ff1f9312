/**
 * Absolute links for mails. The base is PUBLIC_URL; without it, the origin the request came to
 * when it is one of the portal's own (its listening address) or listed in ALLOWED_ORIGINS, else
 * the portal's own address. A Host (or X-Forwarded-Host) header alone never decides where a link
 * points: a forged one would send a password-reset link to another site.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listeningPort, normalizeOrigin, ownOrigins } from '../../platform/lib/origins.ts';

export function linkBase(app: FastifyInstance, request: FastifyRequest): string {
  const config = app.config;
  if (config.publicUrl) return config.publicUrl;
  const port = listeningPort(app.server, config.port);
  const own = ownOrigins(config, port);
  const origin = normalizeOrigin(`${request.protocol}://${request.host}`);
  if (
    origin &&
    (own.includes(origin) || config.allowedOrigins.some((o) => normalizeOrigin(o) === origin))
  )
    return origin;
  return own[0] ?? `http://localhost:${port}`;
}

/** `<base><path>?token=<token>` */
export function tokenLink(base: string, path: string, token: string): string {
  const url = new URL(path, base);
  url.searchParams.set('token', token);
  return url.toString();
}
