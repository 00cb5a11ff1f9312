/**
 * The portal's texts and switches (admins): read them all, and set maintenance, the disclaimer of
 * a language, the notification of a trigger and the second factor a policy requires. Every write is audited and applies at once.
 */
import type { FastifyInstance } from 'fastify';
import { createSettingsService, type SettingsActor } from '../settings-service.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf, type AuthContext } from '../../../platform/auth/auth.ts';

const actorOf = (auth: AuthContext): SettingsActor => ({
  userId: auth.userId,
  name: auth.name,
  role: auth.role,
});

export default async function adminSettingsRoutes(app: FastifyInstance) {
  const service = createSettingsService(app);

  route(app, 'adminSettings.show', () => service.show());

  route(app, 'adminSettings.setMaintenance', async (request) => {
    await service.setMaintenance(actorOf(authOf(request)), request.body);
    return {};
  });

  route(app, 'adminSettings.setDisclaimer', async (request) => {
    await service.setDisclaimer(actorOf(authOf(request)), request.body);
    return {};
  });

  route(app, 'adminSettings.setSecondFactor', async (request) => {
    await service.setSecondFactor(actorOf(authOf(request)), request.body);
    return {};
  });

  route(app, 'adminSettings.setNotification', async (request) => {
    await service.setNotification(actorOf(authOf(request)), request.params.trigger, request.body);
    return {};
  });
}
