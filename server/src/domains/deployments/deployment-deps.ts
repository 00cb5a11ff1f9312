/**
 * What the parts of the deployment service share: the app, the deployments whose desktops this
 * process is creating, the live view, the answer shapes, and the lookup that checks the caller's
 * right on a deployment.
 */
import type { FastifyInstance } from 'fastify';
import type { DeploymentRow, DesktopRow } from '../../platform/db/schema.ts';
import type { Caller } from '../../platform/auth/auth-context.ts';
import type { Deployment, Role } from '../../../../src/generated/types.ts';
import { desktopStates } from '../../../../src/generated/policy.ts';
import type { DeploymentRight } from './deployment-access.ts';
import type { DeploymentAnswers } from './deployment-answers.ts';
import type { DeploymentEvents } from './deployment-events.ts';

/** States a deployment desktop may be in while the deployment is edited or deleted. */
export const IDLE_STATES: readonly DesktopRow['state'][] = desktopStates.editable;

export const subjectOf = (c: {
  userId: string;
  groupId: string;
  categoryId: string;
  role: string;
}) => ({
  userId: c.userId,
  groupId: c.groupId,
  categoryId: c.categoryId,
  role: c.role,
});

export interface DeploymentDeps {
  app: FastifyInstance;
  /** Deployments whose desktops this process is creating now. */
  creating: Set<string>;
  events: DeploymentEvents;
  answers: DeploymentAnswers;
  /** The deployment and its owner's role, or undefined when it does not exist. */
  ownedDeployment(id: string): Promise<{ row: DeploymentRow; ownerRole: Role | null } | undefined>;
  /** The deployment when the caller has this right on it (404/403 otherwise). */
  deploymentFor(auth: Caller, id: string, right?: DeploymentRight): Promise<DeploymentRow>;
  publishToAudience(
    row: DeploymentRow,
    name: 'deployments.created' | 'deployments.updated',
    payload: Deployment,
    audience?: readonly string[],
  ): void;
}
