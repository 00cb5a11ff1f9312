/**
 * The administration of reservable items, their profiles and the booking priority rules (admins):
 * the plain CRUD of each (list, show, create, update, delete), and the rule groups a profile may
 * name.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { reservablesAdmin } from '../reservables-service.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { crudRoutes } from '../../../platform/crud/crud-routes.ts';
import type { CrudActor } from '../../../platform/crud/crud-service.ts';

const actorOf = (request: FastifyRequest): CrudActor => {
  const auth = authOf(request);
  return { id: auth.userId, name: auth.name, role: auth.role, categoryId: auth.categoryId };
};

export default async function adminReservableRoutes(app: FastifyInstance) {
  const admin = reservablesAdmin(app.db, app.directory);
  crudRoutes(app, 'adminReservables', admin.items, actorOf);
  crudRoutes(app, 'adminReservableProfiles', admin.profiles, actorOf);
  crudRoutes(app, 'adminBookingPriorities', admin.rules, actorOf);
  route(app, 'adminBookingPriorities.groups', () => admin.ruleGroups());
}
