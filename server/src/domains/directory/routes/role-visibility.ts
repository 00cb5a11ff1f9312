/**
 * The admin's role-visibility config (schema/entities/role-visibility.schema.json):
 * - GET /admin/role-visibility: the config in force, the file it is written to and the catalogue of
 *   what it may name (every resource's role sets with their defaults, fields and actions);
 * - PUT /admin/role-visibility: the body is validated by the same schema as the file (400), its
 *   names against the catalogue (400 role_visibility_unknown_entry), and the admins keep this
 *   screen (409 role_visibility_lockout); then the file is written (temp file + rename), the config
 *   is in force at once on every node and every socket gets `role_visibility` from its node (once
 *   the config is in force there) to read its visibility again;
 * - GET /user/role-visibility: what the config leaves the caller's role (the SPA's menus, columns,
 *   form fields and actions follow it).
 */
import type { FastifyInstance } from 'fastify';
import { appendAudit } from '../audit.ts';
import { actorOf } from '../plugin.ts';
import { ApiError } from '../../../platform/http/api-error.ts';
import {
  mergeRoleSets,
  roleVisibilityCatalogue,
  tableOf,
  unknownEntries,
} from '../../../platform/http/access.ts';
import type { RoleSets } from '../../../platform/http/access.ts';
import { route } from '../../../platform/http/route.ts';
import { authOf } from '../../../platform/auth/auth.ts';
import { roleSets } from '../../../../../src/generated/roles.ts';

/** The resource and role set that guard this screen: the admins may never lose them. */
const GUARD = { resource: 'roleVisibility', set: 'admin' } as const;

export default async function roleVisibilityRoutes(app: FastifyInstance) {
  route(app, 'roleVisibility.show', async () => ({
    id: 'role-visibility',
    file: app.roleVisibility.path,
    config: app.access.config,
    catalogue: roleVisibilityCatalogue(),
  }));

  route(app, 'roleVisibility.update', async (request) => {
    const config = request.body.config;
    const unknown = unknownEntries(config);
    if (unknown.length > 0)
      throw new ApiError(
        'bad_request',
        `Unknown entries: ${unknown.map((p) => p.path).join(', ')}`,
        'role_visibility_unknown_entry',
        { entries: unknown.map((p) => p.path) },
      );
    const merged = mergeRoleSets(roleSets as RoleSets, tableOf(config, 'roles'));
    if (!merged[GUARD.resource]?.[GUARD.set]?.includes('admin'))
      throw new ApiError(
        'conflict',
        'The admins would lose the role-visibility screen',
        'role_visibility_lockout',
        { entry: `/roles/${GUARD.resource}/${GUARD.set}` },
      );
    const before = app.access.config;
    // The entry first: a change the audit log cannot record is not made.
    await appendAudit(app.db, actorOf(authOf(request)), {
      action: 'roleVisibility.update',
      targetType: 'roleVisibility',
      targetId: app.roleVisibility.path,
      targetName: 'role visibility',
      categoryId: null,
      before: { ...before },
      after: { ...config },
    });
    try {
      await app.roleVisibility.save(config);
    } catch (err) {
      request.log.error({ err }, 'role-visibility config not written');
      throw new ApiError(
        'internal_server',
        'The role-visibility config file could not be written',
        'role_visibility_not_written',
      );
    }
    return {};
  });

  route(app, 'roleVisibility.mine', async (request) => app.access.effective(authOf(request).role));
}
