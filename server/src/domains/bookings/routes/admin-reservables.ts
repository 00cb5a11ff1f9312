/**
 * The administration of reservable items, their profiles and the booking priority rules (admins):
 * list, show, create, update and delete of each, and the rule groups a profile may name.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { reservablesAdmin, type Actor } from '../reservables-service.ts';
import { ApiError } from '../../../platform/http/api-error.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { refuseEmptyId } from '../../../platform/http/request-guards.ts';

/** Every group and user the allowed lists name exists (404 `not_found` on the first that does not). */
async function checkLists(
  app: FastifyInstance,
  lists: { groups?: string[] | false; users?: string[] | false } | undefined,
): Promise<void> {
  const unknown = (id: string, path: string) =>
    new ApiError(
      'not_found',
      `Unknown ${id}`,
      'not_found',
      { id },
      { errors: { [path]: 'not_found' } },
    );
  const groups = lists?.groups || [];
  const users = lists?.users || [];
  if (groups.length > 0) {
    const found = new Set((await app.directory.groupsByIds(groups)).map((g) => g.id));
    groups.forEach((id, i) => {
      if (!found.has(id)) throw unknown(id, `/allowed/groups/${i}`);
    });
  }
  if (users.length > 0) {
    const found = new Set((await app.directory.usersByIds(users)).map((u) => u.id));
    users.forEach((id, i) => {
      if (!found.has(id)) throw unknown(id, `/allowed/users/${i}`);
    });
  }
}

const actorOf = (request: FastifyRequest): Actor => {
  const auth = authOf(request);
  return { userId: auth.userId, role: auth.role, categoryId: auth.categoryId, name: auth.name };
};

export default async function adminReservableRoutes(app: FastifyInstance) {
  const admin = reservablesAdmin(app.db);
  const ok = {} as const;

  route(app, 'adminReservables.list', async (request) => {
    refuseEmptyId(request);
    return admin.items();
  });
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

  route(app, 'adminReservableProfiles.list', async (request) => {
    refuseEmptyId(request);
    return admin.profiles();
  });
  route(app, 'adminReservableProfiles.show', (request) => admin.profile(request.params.id));
  route(app, 'adminReservableProfiles.create', async (request) => {
    await checkLists(app, request.body.allowed);
    return { id: await admin.createProfile(actorOf(request), request.body) };
  });
  route(app, 'adminReservableProfiles.update', async (request) => {
    await checkLists(app, request.body.allowed);
    await admin.updateProfile(actorOf(request), request.params.id, request.body);
    return ok;
  });
  route(app, 'adminReservableProfiles.delete', async (request) => {
    await admin.deleteProfile(actorOf(request), request.params.id);
    return ok;
  });

  route(app, 'adminBookingPriorities.list', async (request) => {
    refuseEmptyId(request);
    return admin.rules();
  });
  route(app, 'adminBookingPriorities.groups', () => admin.ruleGroups());
  route(app, 'adminBookingPriorities.show', (request) => admin.rule(request.params.id));
  route(app, 'adminBookingPriorities.create', async (request) => {
    await checkLists(app, request.body.allowed);
    return { id: await admin.createRule(actorOf(request), request.body) };
  });
  route(app, 'adminBookingPriorities.update', async (request) => {
    await checkLists(app, request.body.allowed);
    await admin.updateRule(actorOf(request), request.params.id, request.body);
    return ok;
  });
  route(app, 'adminBookingPriorities.delete', async (request) => {
    await admin.deleteRule(actorOf(request), request.params.id);
    return ok;
  });
}
