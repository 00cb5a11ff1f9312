/**
 * Who may act on a deployment, and who gets its events.
 *
 * - Managing it (show, edit, users, recreate, start/stop all, visibility, direct-viewer CSV,
 *   permissions, reading co-owners): an admin; its owner; a co-owner; a manager of the owner's
 *   category whose owner is not an admin.
 * - Owning it (delete, changing co-owners): the same people except co-owners, who get 403.
 * - Its desktops' events and counters go to the owner and every co-owner.
 */
import type { Caller } from '../../platform/auth/auth-context.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { managesOwner } from '../../platform/lib/ownership.ts';
import type { DeploymentRow } from '../../platform/db/schema.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

export type DeploymentRight = 'manage' | 'own';

/** The deployment with its owner's current role (what the manager rule looks at). */
export interface OwnedDeployment {
  row: DeploymentRow;
  ownerRole: Role | null;
}

export function isCoOwner(auth: Caller, row: DeploymentRow): boolean {
  return row.coOwners.includes(auth.userId);
}

/** True when the caller may act on the deployment with this right (see above). */
export function canActOnDeployment(
  auth: Caller,
  deployment: OwnedDeployment,
  right: DeploymentRight,
): boolean {
  const { row, ownerRole } = deployment;
  if (hasRoleAtLeast(auth.role, role.admin) || row.userId === auth.userId) return true;
  if (ownerRole !== null && managesOwner(auth, { categoryId: row.categoryId, role: ownerRole }))
    return true;
  return right === 'manage' && hasRoleAtLeast(auth.role, role.advanced) && isCoOwner(auth, row);
}

/** 404 for an unknown deployment, 403 (with its own code for co-owners) when not allowed. */
export function assertDeploymentRight(
  auth: Caller,
  deployment: OwnedDeployment | undefined,
  right: DeploymentRight,
): DeploymentRow {
  if (!deployment) throw new ApiError('not_found', 'Deployment not found', 'not_found');
  if (canActOnDeployment(auth, deployment, right)) return deployment.row;
  if (right === 'own' && isCoOwner(auth, deployment.row))
    throw new ApiError(
      'forbidden',
      'Co-owners can not delete a deployment nor change its owners',
      'deployment_co_owner_forbidden',
      { id: deployment.row.id },
    );
  throw new ApiError('forbidden', 'Not enough rights on this deployment', 'forbidden', {
    id: deployment.row.id,
  });
}

/** The users who hear about a deployment's desktops: its owner and co-owners. */
export function audienceOf(row: DeploymentRow): string[] {
  return [...new Set([row.userId, ...row.coOwners])];
}
