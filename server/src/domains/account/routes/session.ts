/**
 * /api/v3 session-area routes: the user, categories, maintenance, status bar, checks, health and
 * the applied quota; the account's API key, VPN, migration and notification routes are
 * registered from here too.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../platform/http/api-error.ts';
import { route } from '../../../platform/http/route.ts';
import { roleNames } from '../../../platform/auth/tokens.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import type { SessionUser, SessionUserCategory } from '../../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../../src/generated/policy.ts';
import type { CategoryRow } from '../../directory/index.ts';
import { appliedQuota } from '../../quotas/index.ts';
import apiKeyRoutes from './api-key.ts';
import migrationRoutes from './migration.ts';
import { notificationRoutes } from '../../notifications/index.ts';
import vpnRoutes from './vpn.ts';

const epoch = (d: Date | null) => (d ? Math.floor(d.getTime() / 1000) : 0);

const categoryWire = (c: CategoryRow): SessionUserCategory => ({
  id: c.id,
  name: c.name,
  frontend: c.frontend,
  custom_url_name: c.customUrlName,
  photo: c.photo,
});

export default async function sessionRoutes(app: FastifyInstance) {
  route(app, 'session.user', async (request) => {
    const auth = authOf(request);
    const u = await app.users.withNames(auth.userId);
    if (!u) throw new ApiError('unauthorized', 'Session expired', 'session_expired');
    // Whitelist: the response schema drops anything else as well.
    const user: SessionUser = {
      id: u.id,
      uid: u.uid,
      username: u.username,
      name: u.name,
      provider: u.provider,
      role_id: u.role,
      role_name: roleNames[u.role],
      category: u.categoryId,
      category_name: u.categoryName,
      group: u.groupId,
      group_name: u.groupName,
      secondary_groups_names: [],
      email: u.email,
      email_verified: u.emailVerified,
      photo: u.photo,
      lang: u.lang,
      accessed: epoch(u.accessed),
    };
    return user;
  });

  route(app, 'profile.appliedQuota', async (request) => {
    const auth = authOf(request);
    const applied = await appliedQuota(app.database.query, {
      userId: auth.userId,
      groupId: auth.groupId,
      categoryId: auth.categoryId,
      role: auth.role,
    });
    return { quota: applied.quota, restriction_applied: applied.restriction_applied };
  });

  route(app, 'session.categories', async () => (await app.users.categories()).map(categoryWire));

  route(app, 'session.category', async (request) => {
    const { id } = request.params;
    const c = await app.users.category(id);
    if (!c) throw new ApiError('not_found', 'Category not found', 'not_found', { id });
    return categoryWire(c);
  });

  route(app, 'session.loginConfig', async () => (await app.settings.all()).login_config);

  route(app, 'session.apiCheck', async () => ({}));

  route(
    app,
    'session.maintenance',
    async (request, reply) => {
      const auth = authOf(request);
      const on = hasRoleAtLeast(auth.role, role.admin)
        ? false
        : await app.settings.maintenanceFor(auth.categoryId);
      return reply.type('application/json').send(JSON.stringify(on));
    },
    { skipMaintenance: true },
  );

  route(app, 'session.maintenanceText', async (_request, reply) => {
    const s = await app.settings.all();
    if (!s.maintenance) return reply.code(204).send();
    // The admin's text with its own switch: `enabled: false` leaves the page to its default text.
    return { ...s.maintenance_text };
  });

  route(app, 'session.statusBar', async (_request, reply) => {
    const bar = (await app.settings.all()).status_bar;
    return reply.type('application/json').send(JSON.stringify(bar));
  });

  route(
    app,
    'session.health',
    async (_request, reply) => {
      try {
        await app.database.ping();
        return { status: 'ok' as const, database: true, node: app.config.nodeName };
      } catch {
        return reply
          .code(503)
          .send({ status: 'degraded', database: false, node: app.config.nodeName });
      }
    },
    { response: false },
  );

  await app.register(apiKeyRoutes);
  await app.register(vpnRoutes);
  await app.register(migrationRoutes);
  await app.register(notificationRoutes);
}
