/**
 * Who sees and acts on the desktops of a deployment: an invisible deployment's desktops (and a
 * hidden desktop) are not usable by their users, only by those who manage the deployment or the
 * desktop; flipping the visibility of the deployment or of one of its desktops.
 */
import { ApiError } from '../../platform/http/api-error.ts';
import type { DesktopRow } from '../../platform/db/schema.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Caller } from '../../platform/auth/auth-context.ts';
import { hasRoleAtLeast, inSet, role } from '../../../../src/generated/policy.ts';
import { RUNNING_STATES } from '../quotas/index.ts';
import { canActOnDeployment } from './deployment-access.ts';
import type { DeploymentDeps } from './deployment-deps.ts';

export function deploymentVisibility({
  app,
  events,
  ownedDeployment,
  deploymentFor,
}: Pick<DeploymentDeps, 'app' | 'events' | 'ownedDeployment' | 'deploymentFor'>) {
  /** True when the caller manages the deployment this desktop belongs to. */
  const managesDeploymentOf = async (auth: Caller, desktop: DesktopRow): Promise<boolean> => {
    if (!desktop.tag) return false;
    const deployment = await ownedDeployment(desktop.tag);
    return deployment ? canActOnDeployment(auth, deployment, 'manage') : false;
  };

  /** True unless the desktop is hidden or its deployment is invisible. */
  const isVisible = async (desktop: DesktopRow): Promise<boolean> => {
    if (!desktop.tag) return true;
    if (!desktop.visible) return false;
    const deployment = await app.deployments.get(desktop.tag);
    return deployment?.visible ?? false;
  };

  return {
    managesDeploymentOf,
    isVisible,

    /**
     * The rule for the desktop calls: the user of a desktop of an invisible deployment (or a hidden
     * desktop) can not act on it; those who manage the deployment can, and so can whoever manages
     * the desktop itself otherwise (admins, managers of its category).
     */
    async assertDesktopUsable(auth: Caller, desktop: DesktopRow) {
      if (!desktop.tag) return;
      if (hasRoleAtLeast(auth.role, role.admin)) return;
      if (await managesDeploymentOf(auth, desktop)) return;
      if (desktop.userId === auth.userId && !(await isVisible(desktop)))
        throw new ApiError(
          'forbidden',
          'The desktop is not visible now',
          'desktop_is_not_visible',
          { id: desktop.id },
        );
    },

    /** A role `user` recreates the disk of a deployment desktop only with the `recreate` permission. */
    async assertUserMay(auth: Caller, desktop: DesktopRow, action: 'recreate') {
      if (!desktop.tag || auth.role !== role.user) return;
      const deployment = await app.deployments.get(desktop.tag);
      if (!deployment?.userPermissions.includes(action))
        throw new ApiError('forbidden', `Not allowed to ${action} this desktop`, 'forbidden', {
          action,
        });
    },

    /**
     * PUT /deployments/visible/{id}: flips the visibility of the deployment and all its desktops.
     * Shown: each user gets their desktop once (`desktop_add`). Hidden: each user gets
     * `desktop_delete`, and with `stop_started_domains` the started desktops are stopped.
     */
    async toggleVisible(auth: AuthContext, id: string, stopStarted: boolean): Promise<void> {
      const row = await deploymentFor(auth, id);
      const visible = !row.visible;
      const saved = await app.deployments.update(row.id, { visible });
      if (!saved) throw new ApiError('not_found', 'Deployment not found', 'not_found');
      const present = await app.deployments.desktopsOf(row.id);
      for (const d of present) {
        if (visible) {
          // written without an event, then announced once as an add (never an update first)
          await app.desktops.table.update(d.row.id, { visible: true });
          await app.desktops.publishCurrent(d.row.id, 'desktops.created');
        } else {
          await app.desktops.update(d.row.id, { visible: false });
          if (stopStarted && inSet(RUNNING_STATES, d.row.state))
            await app.engine.stop(d.row.id).catch((err: unknown) => {
              app.log.warn({ err, desktop: d.row.id }, 'deployment stop failed');
            });
        }
      }
      events.touch(
        row.id,
        present.map((d) => d.row.id),
      );
    },

    /** PUT /deployments/domain/visible/{id}: flips one desktop of a deployment the caller manages. */
    async toggleDesktopVisible(auth: AuthContext, desktopId: string): Promise<void> {
      const desktop = await app.desktops.byId(desktopId);
      if (!desktop?.tag) throw new ApiError('not_found', 'Desktop not found', 'not_found');
      const row = await deploymentFor(auth, desktop.tag);
      const visible = !desktop.visible;
      if (visible && row.visible) {
        await app.desktops.table.update(desktop.id, { visible: true });
        await app.desktops.publishCurrent(desktop.id, 'desktops.created');
      } else if (visible) {
        await app.desktops.table.update(desktop.id, { visible: true });
      } else {
        await app.desktops.update(desktop.id, { visible: false });
      }
      events.touch(row.id, [desktop.id]);
    },
  };
}
