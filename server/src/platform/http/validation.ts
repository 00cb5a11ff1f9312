/**
 * Request validation from the same schemas as the SPA: every schema in src/generated/schemas.ts is
 * added to fastify (for $ref by $id and OpenAPI); validators and response serialisers come from
 * ./compilers.ts (our x-* keywords known, strict mode on, compiled once per schema).
 * Bodies are not coerced; querystring, params and headers are (they arrive as strings).
 * Also the body parsers (JSON with a depth limit and no prototype keys, urlencoded and multipart
 * forms) and the guard that refuses a NUL or a lone surrogate anywhere in the path parameters, the
 * query or the body with 400 before validation.
 */
import type { FastifyPluginAsync } from 'fastify';
import { serializerFor, validatorFor } from './compilers.ts';
import { globalPlugin } from '../lib/plugin.ts';
import { absoluteSchemas as schemaList } from './schema-refs.ts';
import { parseMultipart } from './multipart.ts';
import { ApiError } from './api-error.ts';
import { badCharacterError, badStringPath, parseJsonBody } from './request-guards.ts';

export function formToObject(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

const plugin: FastifyPluginAsync = async (app) => {
  for (const schema of schemaList) app.addSchema(schema);

  app.setValidatorCompiler(({ schema, httpPart }) => validatorFor(schema, httpPart));
  app.setSerializerCompiler(({ schema }) => serializerFor(schema));

  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as ApiError, undefined);
    }
  });

  // Runs for every route before schema validation (and so before any handler).
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [
      ['params', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const) {
      const path = badStringPath(value);
      if (path !== null) throw badCharacterError(part, path);
    }
  });

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_req, body, done) => {
      done(null, formToObject(new URLSearchParams(body as string)));
    },
  );
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (req, body, done) => {
    try {
      done(null, parseMultipart(body as Buffer, req.headers['content-type'] ?? ''));
    } catch (err) {
      done(new ApiError('bad_request', (err as Error).message, 'bad_request'), undefined);
    }
  });
};

export default globalPlugin(plugin, 'validation');
