/**
 * Routes come from the generated operation table (src/generated/api.ts): method, path, base,
 * body kind, request/query/response schema refs and access. A handler is all a route file adds.
 */
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RouteHandlerMethod,
  RouteOptions,
} from 'fastify';
import { operations, type Operation } from '../../../../src/generated/api.ts';
import type { OperationKey, OperationTypes } from '../../../../src/generated/operation-types.ts';
import { fields, type FieldMeta } from '../../../../src/generated/fields.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { ApiError } from './api-error.ts';
import { refOf } from './schema-refs.ts';
import { stripFields } from './access.ts';

export type { OperationKey };

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

/** Response schema of an operation (an array of the entity for list operations that name one item). */
export function responseSchemaOf(op: Operation): Record<string, unknown> | undefined {
  if (!op.response) return undefined;
  const ref = { $ref: refOf(op.response) };
  return op.responseList ? { type: 'array', items: ref } : ref;
}

/** The request of operation K, typed by its generated params, query and body. */
export type OperationRequest<K extends OperationKey> = FastifyRequest<{
  Params: OperationTypes[K]['params'];
  Querystring: OperationTypes[K]['query'] extends undefined ? unknown : OperationTypes[K]['query'];
  Body: OperationTypes[K]['body'];
}>;

/** A handler answers the operation's response type, or sends its own reply (files, images). */
export type OperationHandler<K extends OperationKey> = (
  request: OperationRequest<K>,
  reply: FastifyReply,
) => Promise<OperationTypes[K]['response'] | FastifyReply>;

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

const JSON_TYPES: readonly string[] = ['application/json'];
const FORM_TYPES: readonly string[] = ['application/x-www-form-urlencoded', 'multipart/form-data'];

/** The media type of a Content-Type header (`text/plain; charset=x` -> `text/plain`), or null. */
function mediaTypeOf(header: string | undefined): string | null {
  const type = header?.split(';')[0]?.trim().toLowerCase();
  return type ? type : null;
}

/** The fields of a body type that only some roles may set (generated from property x-roles). */
export function writeGuardedFields(
  type: string | null,
): { path: string; roles: readonly Role[] }[] {
  const list = type ? (fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] : undefined;
  return (list ?? []).flatMap((meta) =>
    meta.roles?.write ? [{ path: meta.path, roles: meta.roles.write }] : [],
  );
}

function valueAt(body: unknown, path: string): unknown {
  let node = body;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

interface OperationRegistry {
  /** registered with a real handler through route() */
  handled: Set<OperationKey>;
  /** planned operations answering 501 */
  planned: Set<OperationKey>;
}

/** What route() and plannedOperations() registered, per app (keyed by its HTTP server). */
const registries = new WeakMap<object, OperationRegistry>();

function registryOf(app: FastifyInstance): OperationRegistry {
  let registry = registries.get(app.server);
  if (!registry) {
    registry = { handled: new Set(), planned: new Set() };
    registries.set(app.server, registry);
  }
  return registry;
}

/** The operations this app registered: with a real handler, and planned (answering 501). */
export function registeredOperations(app: FastifyInstance): {
  handled: ReadonlySet<OperationKey>;
  planned: ReadonlySet<OperationKey>;
} {
  return registryOf(app);
}

function routeOptions(
  app: FastifyInstance,
  op: Operation,
  handler: Handler,
  extra: RouteExtra,
): RouteOptions {
  const roles = app.access.rolesFor(op);
  const params = pathParams(op.path);
  const schema: Record<string, unknown> = {};
  if (op.body !== 'none' && op.request) schema.body = { $ref: refOf(op.request) };
  if (op.query) schema.querystring = { $ref: refOf(op.query) };
  // The operation's own parameter schema: the handler's params are typed and validated by it.
  if (op.params) schema.params = { $ref: refOf(op.params) };
  else if (params.length > 0)
    throw new Error(`${op.key}: path parameters ${params.join(', ')} have no params schema`);
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
  // A body arrives in the operation's own media type: JSON for json operations, urlencoded or
  // multipart for form operations; anything else is 415 before it is validated.
  // An operation without a body has nothing to check here (and no hook on its hot path).
  const accepted = op.body === 'json' ? JSON_TYPES : op.body === 'form' ? FORM_TYPES : null;
  if (accepted)
    options.preValidation = async (request) => {
      const type = mediaTypeOf(request.headers['content-type']);
      if (type !== null && !accepted.includes(type))
        throw new ApiError(
          'unsupported_media_type',
          `${op.method} ${urlOf(op)} takes ${accepted.join(' or ')}, not ${type}`,
          'unsupported_media_type',
          { accepted: [...accepted] },
        );
      // An absent form body is an empty form (the schema still enforces its required fields).
      if (op.body === 'form' && (request.body === undefined || request.body === null))
        request.body = {};
    };
  const guarded = writeGuardedFields(op.request);
  if (guarded.length > 0) {
    // Fields with write roles (x-roles on the property): only those roles may send them.
    options.preHandler = async (request) => {
      const role = request.auth?.role;
      for (const { path, roles: allowed } of guarded)
        if (valueAt(request.body, path) !== undefined && (!role || !allowed.includes(role)))
          throw new ApiError(
            'forbidden',
            `Only ${allowed.join(', ')} may set ${path}`,
            'forbidden',
            {
              field: path,
            },
          );
    };
  }
  if (roles !== null) {
    // The roles are read on every request: the admin's role-visibility config changes them live.
    options.onRequest = async (request) => {
      await app.authenticate(request, {
        roles: app.access.rolesFor(op) ?? roles,
        tokenTypes,
        skipMaintenance: extra.skipMaintenance ?? false,
      });
      // An action hidden from the role refuses the operation only that action calls.
      const action = app.access.refusedAction(op, request.auth?.role);
      if (action)
        throw new ApiError(
          'forbidden',
          `The action ${action} is hidden from this role`,
          'forbidden',
          {
            action,
          },
        );
    };
    // Fields hidden from the role leave the JSON answers of the operation's resource.
    options.onSend = async (request, reply, payload) => {
      const hidden = app.access.hiddenFields(op.resource, request.auth?.role);
      if (hidden.length === 0 || typeof payload !== 'string' || reply.statusCode >= 300)
        return payload;
      if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json'))
        return payload;
      const value: unknown = JSON.parse(payload);
      return stripFields(value, hidden) ? JSON.stringify(value) : payload;
    };
  }
  return options;
}

/**
 * Registers the operation `key` with its generated method/path/schemas/access. The handler's
 * request and answer are typed by the operation (src/generated/operation-types.ts); the schemas
 * validated here are the ones those types come from.
 */
export function route<K extends OperationKey>(
  app: FastifyInstance,
  key: K,
  handler: OperationHandler<K>,
  extra: RouteExtra = {},
): void {
  // The request was validated against the operation's schemas: its parts have the generated types.
  app.route(routeOptions(app, operation(key), handler as RouteHandlerMethod as Handler, extra));
  registryOf(app).handled.add(key);
}

/**
 * What is wrong between the operation table and the handlers: an operation that is neither
 * handled nor planned, or one that is planned and handled at the same time. Empty when they agree.
 */
export function operationTableProblems(
  ops: readonly Pick<Operation, 'key' | 'planned'>[],
  handled: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  for (const op of ops) {
    if (op.planned && handled.has(op.key))
      problems.push(`${op.key} is planned in the schema but has a handler: drop "planned"`);
    else if (!op.planned && !handled.has(op.key))
      problems.push(`${op.key} has no handler and is not planned`);
  }
  const known = new Set(ops.map((op) => op.key));
  for (const key of handled) {
    if (!known.has(key)) problems.push(`${key} has a handler but no operation`);
  }
  return problems;
}

/**
 * Registers every planned operation on its generated method and path: the same token and role
 * checks as a real handler, then 501 not_implemented whatever the body. Registered after every
 * route plugin; first checks that the table and the handlers agree and refuses to start otherwise.
 */
export async function plannedOperations(app: FastifyInstance): Promise<void> {
  const registry = registryOf(app);
  const all = Object.values(operations) as Operation[];
  const problems = operationTableProblems(all, registry.handled);
  if (problems.length > 0) {
    throw new Error(
      `the operation table (src/generated/api.ts) and the route handlers disagree:\n  ${problems.join('\n  ')}`,
    );
  }
  // The body of an operation that does not exist yet is neither parsed nor validated.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => {
    done(null, undefined);
  });
  for (const op of all) {
    if (!op.planned) continue;
    const url = urlOf(op);
    // Every operation's path belongs to route(): a route written by hand there is a mistake.
    if (app.hasRoute({ method: op.method, url }))
      throw new Error(
        `${op.key} is planned but ${op.method} ${url} is served by a route outside route()`,
      );
    const options = routeOptions(
      app,
      op,
      async () => {
        throw new ApiError(
          'not_implemented',
          `${op.method} ${url} is not implemented yet`,
          'not_implemented',
          { operation: op.key },
        );
      },
      { response: false },
    );
    delete options.schema;
    delete options.preValidation;
    options.config = { operation: op.key, planned: true };
    app.route(options);
    registry.planned.add(op.key as OperationKey);
  }
}

/**
 * Registers the operation `key` with a handler that is generic over operations (the plain CRUD
 * of server/src/platform/crud): the same method, path, schemas and access as route(); the body
 * and params were validated against the operation's schemas and the answer is serialised by its
 * response schema.
 */
export function routeOperation(
  app: FastifyInstance,
  key: OperationKey,
  handler: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>,
  extra: RouteExtra = {},
): void {
  app.route(routeOptions(app, operation(key), handler, extra));
  registryOf(app).handled.add(key);
}
