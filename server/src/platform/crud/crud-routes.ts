/**
 * The routes of a resource's plain CRUD operations (list, show, create, update, delete): each
 * operation the schema declares and does not plan is registered with the generated method, path,
 * schemas and access, and answered by the resource's CRUD service. Create answers `{ id }`,
 * update and delete `{}`; the list refuses a trailing slash (the show of an empty id).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { operations } from '../../../../src/generated/api.ts';
import { refuseEmptyId } from '../http/request-guards.ts';
import { routeOperation, type OperationKey } from '../http/route.ts';
import type { CrudActor, CrudService } from './crud-service.ts';

export const CRUD_OPERATIONS = ['list', 'show', 'create', 'update', 'delete'] as const;

/** The operation keys of the resource's plain CRUD operations that are built (not planned). */
export function crudOperationKeys(resource: string): OperationKey[] {
  return CRUD_OPERATIONS.map((op) => `${resource}.${op}`).filter(
    (key): key is OperationKey => key in operations && !operations[key as OperationKey].planned,
  );
}

export function crudRoutes<Wire, Create, Update>(
  app: FastifyInstance,
  resource: string,
  service: CrudService<Wire, Create, Update>,
  actorOf: (request: FastifyRequest) => CrudActor,
): void {
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  // The request parts were validated against the operation's schemas, which the types come from.
  const handlers: Record<string, (request: FastifyRequest) => Promise<unknown>> = {
    list: (request) => {
      refuseEmptyId(request);
      return service.list(actorOf(request));
    },
    show: (request) => service.show(actorOf(request), idOf(request)),
    create: (request) => service.create(actorOf(request), request.body as Create),
    update: async (request) => {
      await service.update(actorOf(request), idOf(request), request.body as Update);
      return {};
    },
    delete: async (request) => {
      await service.remove(actorOf(request), idOf(request));
      return {};
    },
  };
  for (const key of crudOperationKeys(resource)) {
    const handler = handlers[key.slice(resource.length + 1)];
    if (!handler) continue;
    routeOperation(app, key, handler);
  }
}
