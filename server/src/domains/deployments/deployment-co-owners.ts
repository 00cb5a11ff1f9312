/**
 * The co-owners of a deployment (who may manage it but not delete it nor change its owners) and
 * the permissions its users have on their desktops.
 */
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type {
  DeploymentCoOwners,
  DeploymentUserPermissions,
} from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import { audienceOf } from './deployment-access.ts';
import { person } from './deployment-answers.ts';
import type { DeploymentDeps } from './deployment-deps.ts';

export function deploymentCoOwners({
  app,
  answers,
  deploymentFor,
  publishToAudience,
}: Pick<DeploymentDeps, 'app' | 'answers' | 'deploymentFor' | 'publishToAudience'>) {
  const { listItem } = answers;

  return {
    async coOwners(auth: AuthContext, id: string): Promise<DeploymentCoOwners> {
      const row = await deploymentFor(auth, id);
      const people = await app.directory.usersByIds([row.userId, ...row.coOwners]);
      const byId = new Map(people.map((p) => [p.id, p]));
      const owner = byId.get(row.userId);
      return {
        owner: owner ? person(owner) : { id: row.userId, name: '[Deleted]' },
        co_owners: row.coOwners.flatMap((c) => {
          const p = byId.get(c);
          return p ? [person(p)] : [];
        }),
      };
    },

    /**
     * PUT /deployment/co-owners/{id} (owner, manager, admin): the owner and users with role
     * `user` are left out; every other id must be a user the caller could share with.
     */
    async updateCoOwners(auth: AuthContext, id: string, coOwners: readonly string[]) {
      const row = await deploymentFor(auth, id, 'own');
      const found = new Map(
        (await app.directory.usersByIds([...new Set(coOwners)])).map((u) => [u.id, u]),
      );
      const kept: string[] = [];
      coOwners.forEach((userId, i) => {
        const u = found.get(userId);
        if (!u)
          throw new ApiError(
            'not_found',
            `Unknown ${userId}`,
            'not_found',
            { id: userId },
            {
              errors: { [`/co_owners/${i}`]: 'not_found' },
            },
          );
        if (!hasRoleAtLeast(auth.role, role.admin) && u.categoryId !== row.categoryId)
          throw new ApiError(
            'forbidden',
            `You can not share with ${userId}`,
            'allowed_out_of_scope',
            { id: userId },
            { errors: { [`/co_owners/${i}`]: 'allowed_out_of_scope' } },
          );
        if (u.id !== row.userId && u.role !== role.user && !kept.includes(u.id)) kept.push(u.id);
      });
      const saved = await app.deployments.update(row.id, { coOwners: kept });
      if (!saved) throw new ApiError('not_found', 'Deployment not found', 'not_found');
      const item = await listItem(saved);
      const added = kept.filter((c) => !row.coOwners.includes(c));
      const dropped = row.coOwners.filter((c) => !kept.includes(c));
      publishToAudience(saved, 'deployments.created', item, added);
      for (const ownerId of dropped)
        app.events.publish({
          name: 'deployments.deleted',
          payload: { id: row.id, version: saved.version },
          ownerId,
        });
      publishToAudience(
        saved,
        'deployments.updated',
        item,
        audienceOf(row).filter((a) => !dropped.includes(a)),
      );
    },

    async permissions(auth: AuthContext, id: string): Promise<DeploymentUserPermissions> {
      return [...(await deploymentFor(auth, id)).userPermissions].sort();
    },
  };
}
