/**
 * One error shape everywhere: ApiError as it is, fastify's own errors (validation, body limit,
 * malformed JSON, media type) mapped to their kind, a database that cannot be reached -> 503
 * service_unavailable (a statement over its time limit or a full bulkhead too, without taking the
 * database for down; all with Retry-After), a full disk -> 507 insufficient_storage, anything unexpected -> 500 internal_server without stack or SQL (logged
 * without the statement's parameters). Unknown routes -> 404 JSON (the SPA fallback is tried first
 * for pages).
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorObject } from 'ajv';
import { ApiError, errorBody, kindForStatus } from './api-error.ts';
import { globalPlugin } from '../lib/plugin.ts';
import { retryAfterHeaders } from './rate-limit.ts';
import { isStorageFull, storageFullError } from '../lib/storage-errors.ts';
import { isDatabaseSlow, isDatabaseUnavailable, safeError } from '../lib/db-errors.ts';

/** ajv errors -> { '/path': keyword } and the first x-error code, if any. */
export function fieldErrors(errors: ErrorObject[]): {
  map: Record<string, string>;
  code: string | undefined;
} {
  const map: Record<string, string> = {};
  let code: string | undefined;
  for (const e of errors) {
    const p = e.params as { missingProperty?: string; additionalProperty?: string };
    const extra = p.missingProperty ?? p.additionalProperty;
    const path = extra !== undefined ? `${e.instancePath}/${extra}` : e.instancePath || '/';
    map[path] ??= e.keyword;
    const xError = (e.parentSchema as Record<string, unknown> | undefined)?.['x-error'] as
      Record<string, string> | undefined;
    code ??= xError?.[e.keyword];
  }
  return { map, code };
}

export type SpaFallback = (request: FastifyRequest, reply: FastifyReply) => boolean;

declare module 'fastify' {
  interface FastifyInstance {
    spaFallback: SpaFallback | null;
    /** Whether the last database error said the database is unreachable (cleared by a ping). */
    databaseDown: () => boolean;
  }
}

/** The Retry-After of a 503 for a database that is down, too slow or too busy. */
const DATABASE_RETRY_SECONDS = 2;

/** How often a lost database is pinged until it answers again. */
const RECOVERY_PING_MS = 500;

/** Paths that answer for themselves while the database is down (the SPA must still load). */
const needsDatabase = (url: string) =>
  (url.startsWith('/api/') || url.startsWith('/authentication/')) &&
  !url.startsWith('/api/v3/health');

const plugin: FastifyPluginAsync = async (app) => {
  app.decorate('spaFallback', null);

  // Once a request or a pooled connection finds the database unreachable, every API request
  // answers 503 at once (no answer from a cache, no pile-up of 3 s connection timeouts) until a
  // ping succeeds again.
  let down = false;
  let pinger: NodeJS.Timeout | undefined;
  const markDown = (err: unknown) => {
    if (down) return;
    down = true;
    app.log.warn({ err: safeError(err) }, 'database unavailable');
    pinger = setInterval(() => {
      app.database.ping().then(
        () => {
          down = false;
          clearInterval(pinger);
          pinger = undefined;
          app.log.info('database available again');
        },
        () => undefined,
      );
    }, RECOVERY_PING_MS);
    pinger.unref();
  };
  app.decorate('databaseDown', () => down);
  // A connection the server cut (shutdown, crash) says so before any request has to find out.
  app.database.onConnectionLost((err) => {
    if (isDatabaseUnavailable(err)) markDown(err);
  });
  app.addHook('onClose', async () => clearInterval(pinger));
  app.addHook('onRequest', async (request, reply) => {
    if (!down || !needsDatabase(request.url)) return;
    return reply
      .code(503)
      .headers(retryAfterHeaders({ seconds: DATABASE_RETRY_SECONDS }))
      .type('application/json')
      .send(errorBody('service_unavailable', 'The database is unavailable', 'service_unavailable'));
  });

  app.setErrorHandler((err: FastifyError | ApiError, request, reply) => {
    if (err instanceof ApiError) {
      if (err.headers) void reply.headers(err.headers);
      if (err.statusCode === 429 && !reply.hasHeader('retry-after'))
        void reply.headers(retryAfterHeaders());
      return reply.code(err.statusCode).type('application/json').send(err.toBody());
    }
    if (err.validation) {
      const { map, code } = fieldErrors(err.validation as ErrorObject[]);
      const where = err.validationContext ?? 'request';
      const first = err.validation[0];
      const description = `${where}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`;
      return reply
        .code(400)
        .type('application/json')
        .send(errorBody('bad_request', description, code ?? 'bad_request', null, map));
    }
    const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
    if (status >= 400 && status < 500) {
      const kind = kindForStatus(status);
      if (status === 429 && !reply.hasHeader('retry-after'))
        void reply.headers(retryAfterHeaders());
      const description =
        err.code === 'FST_ERR_CTP_BODY_TOO_LARGE'
          ? 'Request body is too large'
          : err.code?.startsWith('FST_ERR_CTP_INVALID_JSON') || err instanceof SyntaxError
            ? 'Malformed JSON body'
            : err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
              ? 'Unsupported content type'
              : err.message;
      return reply.code(status).type('application/json').send(errorBody(kind, description));
    }
    if (isStorageFull(err)) {
      request.log.warn({ err: safeError(err) }, 'storage full');
      return reply.code(507).type('application/json').send(storageFullError().toBody());
    }
    if (isDatabaseSlow(err)) {
      request.log.warn({ err: safeError(err) }, 'database too slow');
      return reply
        .code(503)
        .headers(retryAfterHeaders({ seconds: DATABASE_RETRY_SECONDS }))
        .type('application/json')
        .send(
          errorBody(
            'service_unavailable',
            'The database is too slow to answer now',
            'database_busy',
          ),
        );
    }
    if (isDatabaseUnavailable(err)) {
      markDown(err);
      return reply
        .code(503)
        .headers(retryAfterHeaders({ seconds: DATABASE_RETRY_SECONDS }))
        .type('application/json')
        .send(
          errorBody('service_unavailable', 'The database is unavailable', 'service_unavailable'),
        );
    }
    request.log.error({ err: safeError(err) }, 'unexpected error');
    return reply
      .code(500)
      .type('application/json')
      .send(errorBody('internal_server', 'Internal server error', 'internal_server'));
  });

  app.setNotFoundHandler((request, reply) => {
    if (app.spaFallback?.(request, reply)) return reply;
    return reply
      .code(404)
      .type('application/json')
      .send(
        errorBody(
          'not_found',
          `Route ${request.method} ${request.url.split('?')[0] ?? ''} not found`,
          'not_found',
        ),
      );
  });
};

export default globalPlugin(plugin, 'errors');
