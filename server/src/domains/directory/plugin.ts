/**
 * The administration service on the app (`app.admin`): the users, groups, categories and audit
 * functions bound to the app's database, account policies and sessions. The command line
 * (scripts/admin.ts) binds the same functions to its own connection.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import type { AuthIdentity } from '../../platform/auth/auth-context.ts';
import { adminService, type AdminService } from './service.ts';
import type { Actor } from '../../platform/auth/actor.ts';
import { createUserRecycler } from '../recycle-bin/index.ts';

declare module 'fastify' {
  interface FastifyInstance {
    admin: AdminService;
  }
}

/** The actor of an authenticated request. */
export const actorOf = (auth: AuthIdentity): Actor => ({
  id: auth.userId,
  name: auth.name,
  role: auth.role,
  categoryId: auth.categoryId,
});

const plugin: FastifyPluginAsync = async (app) => {
  const recycleUser = createUserRecycler(app);
  app.decorate(
    'admin',
    adminService({
      db: app.db,
      accountPolicies: async () => (await app.settings.all()).account_policies,
      async sessionsChanged(userId, revoke) {
        app.cluster.publish({ kind: 'user.changed', userId });
        if (revoke) await app.sessions.revokeUser(userId);
      },
      recycleUserItems: (actor, user, inside) => recycleUser(actor, user, inside),
    }),
  );
};

export default globalPlugin(plugin, 'admin');
