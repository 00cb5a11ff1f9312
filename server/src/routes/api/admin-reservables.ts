/**
 * The administration of reservable items, their profiles and the booking priority rules (admins):
 * list, show, create, update and delete of each, and the rule groups a profile may name.
 */
import type { FastifyInstance } from 'fastify';
import { reservablesAdmin, type Actor } from '../../admin/reservables-service.ts';
import { route } from '../../lib/route.ts';
import { authOf } from '../../plugins/app/auth.ts';
import type { FastifyRequest } from 'fastify';

const actorOf = (request: FastifyRequest): Actor => {
  const auth = authOf(request);
  return { userId: auth.userId, role: auth.role, categoryId: auth.categoryId, name: auth.name };
};

export default async function adminReservableRoutes(app: FastifyInstance) {
  const admin = reservablesAdmin(app.db);
  const ok = {} as const;

  route(app, 'adminReservables.list', () => admin.items());
  route(app, 'adminReservables.show', (request) => admin.item(request.params.id));
  route(app, 'adminReservables.create', async (request) => ({
    id: await admin.createItem(actorOf(request), request.body),
  }));
  route(app, 'adminReservables.update', async (request) => {
    await admin.updateItem(actorOf(request), request.params.id, request.body);
    return ok;
  });
  route(app, 'adminReservables.delete', async (request) => {
    await admin.deleteItem(actorOf(request), request.params.id);
    return ok;
  });

  route(app, 'adminReservableProfiles.list', () => admin.profiles());
  route(app, 'adminReservableProfiles.show', (request) => admin.profile(request.params.id));
  route(app, 'adminReservableProfiles.create', async (request) => ({
    id: await admin.createProfile(actorOf(request), request.body),
  }));
  route(app, 'adminReservableProfiles.update', async (request) => {
    await admin.updateProfile(actorOf(request), request.params.id, request.body);
    return ok;
  });
  route(app, 'adminReservableProfiles.delete', async (request) => {
    await admin.deleteProfile(actorOf(request), request.params.id);
    return ok;
  });

  route(app, 'adminBookingPriorities.list', () => admin.rules());
  route(app, 'adminBookingPriorities.groups', () => admin.ruleGroups());
  route(app, 'adminBookingPriorities.show', (request) => admin.rule(request.params.id));
  route(app, 'adminBookingPriorities.create', async (request) => ({
    id: await admin.createRule(actorOf(request), request.body),
  }));
  route(app, 'adminBookingPriorities.update', async (request) => {
    await admin.updateRule(actorOf(request), request.params.id, request.body);
    return ok;
  });
  route(app, 'adminBookingPriorities.delete', async (request) => {
    await admin.deleteRule(actorOf(request), request.params.id);
    return ok;
  });
}
