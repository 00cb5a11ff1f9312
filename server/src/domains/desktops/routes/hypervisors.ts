/**
 * Administration of the hypervisor hosts (admins): the plain CRUD of the adminHypervisors
 * resource. The SSH key is taken, never answered; every write brings the drivers in step and
 * probes the hosts at once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import type { CrudActor } from '../../../platform/crud/crud-service.ts';
import { hypervisorsCrud } from '../hypervisors.ts';

/** The CRUD actor of an admin request. */
export const actorOf = (request: FastifyRequest): CrudActor => {
  const auth = authOf(request);
  return { id: auth.userId, name: auth.name, role: auth.role, categoryId: auth.categoryId };
};

export default async function adminHypervisorRoutes(app: FastifyInstance) {
  const crud = hypervisorsCrud(app.db, () => app.hypervisorHosts.refreshSoon());
  crudRoutes(app, 'adminHypervisors', crud, actorOf);
}
