/**
 * Deployments: one desktop per target user (the members of the chosen groups and the chosen
 * users, active ones, within the owner's category unless an admin made it, plus the owner when
 * `owner_desktop`), all made from one template with the same hardware.
 *
 * - Create stores the deployment and its desktops (`creating`) in one transaction inside the
 *   owner's deployment quotas, answers, and makes the disks in the background (a few at a time);
 *   the `creatingDesktops` counter of `deployments_update` follows them down to 0. Desktops left
 *   `creating` by a restart are finished by the engine's reconciler.
 * - Recreate adds the desktops of target users who have none (users added to the groups since)
 *   and deletes for good those of users who are no longer targets; it is refused while desktops
 *   are being created.
 * - An invisible deployment's desktops are not in their users' lists (their sockets get a delete
 *   when it is hidden and one add when it is shown again) and their users can not act on them.
 * - Deleting needs every desktop stopped; the deployment and its desktops go to the recycle bin as
 *   one entry with their disks, or for good.
 * Who may do what: deployment-access.ts. The parts share one `DeploymentDeps` (deployment-deps.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Caller } from '../../platform/auth/auth-context.ts';
import type { DeploymentRow } from '../../platform/db/schema.ts';
import type { Deployment } from '../../../../src/generated/types.ts';
import { assertDeploymentRight, audienceOf, type DeploymentRight } from './deployment-access.ts';
import { deploymentAnswers } from './deployment-answers.ts';
import { deploymentCoOwners } from './deployment-co-owners.ts';
import type { DeploymentDeps } from './deployment-deps.ts';
import { deploymentDesktops } from './deployment-desktops.ts';
import { createDeploymentEvents } from './deployment-events.ts';
import { deploymentReads } from './deployment-reads.ts';
import { deploymentRemoval } from './deployment-removal.ts';
import { deploymentTargets } from './deployment-targets.ts';
import { deploymentVisibility } from './deployment-visibility.ts';
import { deploymentWrites } from './deployment-writes.ts';

export type DeploymentService = ReturnType<typeof createDeploymentService>;

export function createDeploymentService(app: FastifyInstance) {
  const answers = deploymentAnswers(app);
  const events = createDeploymentEvents(app, answers);

  const ownedDeployment = async (id: string) => {
    const row = await app.deployments.get(id);
    if (!row) return undefined;
    const owner = await app.users.byId(row.userId);
    return { row, ownerRole: owner?.role ?? null };
  };

  const deps: DeploymentDeps = {
    app,
    creating: new Set<string>(),
    events,
    answers,
    ownedDeployment,
    deploymentFor: async (
      auth: Caller,
      id: string,
      right: DeploymentRight = 'manage',
    ): Promise<DeploymentRow> => assertDeploymentRight(auth, await ownedDeployment(id), right),
    publishToAudience: (
      row: DeploymentRow,
      name: 'deployments.created' | 'deployments.updated',
      payload: Deployment,
      audience: readonly string[] = audienceOf(row),
    ) => {
      for (const ownerId of audience) app.events.publish({ name, payload, ownerId });
    },
  };

  const targets = deploymentTargets(deps);
  const desktops = deploymentDesktops(deps, targets);

  return {
    events,
    desktopItem: answers.desktopItem,

    async init() {
      await events.init();
    },
    close: () => events.close(),

    ...deploymentVisibility(deps),
    ...deploymentReads(deps),
    ...deploymentWrites(deps, targets, desktops),
    startAll: desktops.startAll,
    stopAll: desktops.stopAll,
    ...deploymentRemoval(deps, desktops),
    ...deploymentCoOwners(deps),
    checkQuota: targets.checkQuota,
    countGroupsUsers: targets.countGroupsUsers,
  };
}
