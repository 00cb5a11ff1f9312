/**
 * Routes come from the generated operation table (src/generated/api.ts): method, path, base,
 * body kind, request/query/response schema refs and access. A handler is all a route file adds.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { operations, type Operation } from '../../../src/generated/api.ts';
import { isArrayType, refOf } from './schema-refs.ts';

export type OperationKey = keyof typeof operations;

export const API_BASE = '/api/v3';
export const AUTH_BASE = '/authentication';

export interface RouteExtra {
  /** special token types accepted besides login tokens */
  tokenTypes?: readonly string[];
  /** GET /maintenance and the like keep answering during maintenance */
  skipMaintenance?: boolean;
  /** response schema override per status ({ 200: {...} }); false = no response serialisation */
  response?: Record<number, unknown> | false;
  /** body limit in bytes for this route (default: the app's 1 MiB) */
  bodyLimit?: number;
}

export function operation(key: OperationKey): Operation {
  return operations[key] as Operation;
}

export function urlOf(op: Pick<Operation, 'base' | 'path'>): string {
  return (op.base === 'auth' ? AUTH_BASE : API_BASE) + op.path.replace(/\{(\w+)\}/g, ':$1');
}

export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
}

/** Response schema of an operation: list operations return arrays of the entity. */
export function responseSchemaOf(op: Operation): Record<string, unknown> | undefined {
  if (!op.response) return undefined;
  const ref = { $ref: refOf(op.response) };
  return op.name === 'list' && !isArrayType(op.response) ? { type: 'array', items: ref } : ref;
}

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** Registers the operation `key` with its generated method/path/schemas/access. */
export function route(
  app: FastifyInstance,
  key: OperationKey,
  handler: Handler,
  extra: RouteExtra = {},
): void {
  const op = operation(key);
  const roles = app.access.rolesFor(op);
  const params = pathParams(op.path);
  const schema: Record<string, unknown> = {};
  if (op.body !== 'none' && op.request) schema.body = { $ref: refOf(op.request) };
  if (op.query) schema.querystring = { $ref: refOf(op.query) };
  if (params.length > 0) {
    schema.params = {
      type: 'object',
      additionalProperties: false,
      required: params,
      properties: Object.fromEntries(
        params.map((p) => [p, { type: 'string', minLength: 1, maxLength: 128 }]),
      ),
    };
  }
  const response = responseSchemaOf(op);
  if (extra.response !== false) {
    if (extra.response) schema.response = extra.response;
    else if (response) schema.response = { 200: response };
  }
  const tokenTypes = [...op.tokenTypes, ...(extra.tokenTypes ?? [])];
  const options: RouteOptions = {
    method: op.method,
    url: urlOf(op),
    schema,
    config: { operation: op.key },
    handler,
    ...(extra.bodyLimit ? { bodyLimit: extra.bodyLimit } : {}),
  };
  if (op.body === 'form') {
    // An absent form body is an empty form (the schema still enforces its required fields).
    options.preValidation = async (request) => {
      if (request.body === undefined || request.body === null) request.body = {};
    };
  }
  if (roles !== null) {
    options.onRequest = async (request) =>
      app.authenticate(request, {
        roles,
        tokenTypes,
        skipMaintenance: extra.skipMaintenance ?? false,
      });
  }
  app.route(options);
}
