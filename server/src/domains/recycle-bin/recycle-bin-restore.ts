/**
 * Restoring an entry: its templates come back usable with their disks, its desktops stopped with
 * theirs, its deployments before their desktops, and a user entry's account first (same id and
 * password), all in one transaction, each item inside its owner's quota and limits and under a
 * name the owner has no other item by. A deployment and its desktops are checked as a create
 * checks them: against the deployment owner's deployment quotas and the desktop limits of the
 * desktops' groups and categories; one refused item refuses the whole restore.
 */
import { and, eq, inArray, ne } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import {
  adminUserSnapshot,
  groups,
  recycleBin,
  templates,
  users,
} from '../../platform/db/schema.ts';
import { appendAudit } from '../../platform/repository/audit-writer.ts';
import { failRestoredWithoutDisk } from './restore-disks.ts';
import {
  announceBastionTargetsRestored,
  restoreBastionTargets,
} from '../../platform/repository/desktop-bastion-targets.ts';
import { queryOn } from '../../platform/db/query.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import {
  checkDeploymentQuota,
  checkDesktopCreate,
  checkTargetDesktopLimits,
  checkTemplateCreate,
  lockQuotaScopesOf,
  type QuotaSubject,
} from '../quotas/index.ts';
import { fields } from '../../../../src/generated/fields.ts';
import type { EntryData } from './recycle-bin-entry.ts';
import type { RecycleBinDeps } from './recycle-bin-service.ts';

const dateOrNull = (value: string | null) => (value === null ? null : new Date(value));

/** Longest desktop name (the edit form's limit). */
const MAX_NAME = Number(fields.DesktopUpdate.find((f) => f.path === 'name')?.maxLength);
/** How many " (restored n)" names a restore tries. */
const MAX_RESTORED_NAMES = 20;

export function recycleBinRestore({
  app,
  entryFor,
  assertRecycled,
  publishStatus,
}: RecycleBinDeps) {
  /** True when the owner has a template by this (trimmed) name. */
  const templateNameTaken = async (ownerId: string, name: string, on: Executor) =>
    (
      await app.templates.list({
        where: eq(templates.userId, ownerId),
        on,
      })
    ).some((t) => t.name.trim() === name.trim());

  /**
   * The name a restored desktop or template comes back under: its own, or with a " (restored)"
   * suffix (then " (restored 2)", ...) when the owner has another one by that name meanwhile.
   */
  const restoredName = async (
    kind: 'desktop' | 'template',
    ownerId: string,
    name: string,
    on: Executor,
  ): Promise<string> => {
    for (let n = 0; n <= MAX_RESTORED_NAMES; n++) {
      const suffix = n === 0 ? '' : n === 1 ? ' (restored)' : ` (restored ${n})`;
      const candidate = `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
      const taken =
        kind === 'desktop'
          ? await app.desktops.nameTaken(ownerId, candidate, undefined, on)
          : await templateNameTaken(ownerId, candidate, on);
      if (!taken) return candidate;
    }
    throw new ApiError(
      'conflict',
      `The owner already has ${kind}s by this name`,
      kind === 'desktop' ? 'new_desktop_name_exists' : 'new_template_name_exists',
      { name },
    );
  };

  /**
   * Recreates a deleted account as it was (same id, password and keys), in its group: 404
   * group_not_found when the group is gone, 409 user_exists when the user name was taken again in
   * that category. Links sent by mail before the delete no longer work; the VPN address is given
   * up when somebody else has it now.
   */
  const recreateUser = async (
    auth: AuthContext,
    account: NonNullable<EntryData['user']>,
    tx: Executor,
  ) => {
    const [group] = await tx
      .select({ id: groups.id })
      .from(groups)
      .where(eq(groups.id, account.groupId))
      .limit(1);
    if (!group)
      throw new ApiError('not_found', 'The group of this user is gone', 'group_not_found', {
        group: account.groupId,
      });
    const addressTaken =
      account.wgAddress !== null &&
      (
        await tx
          .select({ id: users.id })
          .from(users)
          .where(and(eq(users.wgAddress, account.wgAddress), ne(users.id, account.id)))
          .limit(1)
      ).length > 0;
    const restored = await app.users.create(
      {
        ...account,
        passwordLastUpdated: dateOrNull(account.passwordLastUpdated),
        accessed: dateOrNull(account.accessed),
        apiKeyExpires: dateOrNull(account.apiKeyExpires),
        createdAt: new Date(account.createdAt),
        emailVerificationJti: null,
        passwordResetJti: null,
        ...(addressTaken ? { wgAddress: null, wgPrivateKey: null, wgPublicKey: null } : {}),
      },
      tx,
    );
    if (!restored)
      throw new ApiError(
        'conflict',
        `The user ${account.username} exists already in that category`,
        'user_exists',
        { username: account.username },
      );
    // The account is back: the audit log keeps who restored it, like its delete.
    await appendAudit(
      tx,
      { id: auth.userId, name: auth.name, role: auth.role, categoryId: auth.categoryId },
      {
        action: 'recycle-bins.restore',
        targetType: 'user',
        targetId: restored.id,
        targetName: restored.username,
        categoryId: restored.categoryId,
        before: null,
        after: adminUserSnapshot(restored),
      },
    );
  };

  return {
    /**
     * Puts the entry's templates (usable again, with their disks) and desktops (stopped, with
     * theirs) back, each inside its owner's quota and limits.
     */
    async restore(auth: AuthContext, id: string): Promise<{ recycle_bin_ids: string[] }> {
      const row = await entryFor(auth, id);
      assertRecycled(row);
      const data = row.data as EntryData;
      const account = data.user;
      // The owner a deployment desktop counts against: its deployment's, in this entry or still there.
      const deploymentOwners = new Map((data.deployments ?? []).map((p) => [p.id, p.userId]));
      for (const tag of new Set((data.desktops ?? []).map((d) => d.tag))) {
        if (tag === null || deploymentOwners.has(tag)) continue;
        const deployment = await app.deployments.get(tag);
        if (deployment) deploymentOwners.set(tag, deployment.userId);
      }
      const ownerIds = [
        ...new Set([
          row.ownerId,
          ...(data.templates ?? []).map((t) => t.userId),
          ...(data.desktops ?? []).map((d) => d.userId),
          ...deploymentOwners.values(),
        ]),
      ].filter((ownerId) => ownerId !== account?.id);
      const subjects = new Map<string, QuotaSubject>();
      // a user entry brings its owner back first: the items count against the recreated account
      if (account)
        subjects.set(account.id, {
          userId: account.id,
          groupId: account.groupId,
          categoryId: account.categoryId,
          role: account.role,
        });
      for (const ownerId of ownerIds) {
        const owner = await app.users.byId(ownerId);
        if (!owner)
          throw new ApiError(
            'not_found',
            'The owner of these items no longer exists',
            'unable_to_restore_user',
            { user: ownerId },
          );
        subjects.set(owner.id, {
          userId: owner.id,
          groupId: owner.groupId,
          categoryId: owner.categoryId,
          role: owner.role,
        });
      }
      const subjectOf = (ownerId: string): QuotaSubject => {
        const subject = subjects.get(ownerId);
        if (!subject) throw new Error(`no quota subject for ${ownerId}`);
        return subject;
      };
      // One transaction: the entry is claimed first (recycled -> restored, a row lock), so among
      // restores sent at the same time exactly one brings the items back; each item counts
      // against its owner's quota and limits like a create, under the same locks.
      const restored = await app.db.transaction(async (tx) => {
        const claimed = await app.recycleBin.update(
          row.id,
          { status: 'restored' },
          { condition: eq(recycleBin.status, 'recycled'), on: tx },
        );
        if (!claimed) return undefined;
        if (account) await recreateUser(auth, account, tx);
        const query = queryOn(tx);
        await lockQuotaScopesOf(query, [...subjects.values()]);
        // Every item needs the template whose disk it is made on: in this entry, or still there.
        const inEntry = new Set((data.templates ?? []).map((t) => t.id));
        const needed = [
          ...(data.desktops ?? []).map((d) => d.templateId),
          ...(data.templates ?? []).map((t) => t.duplicateOf),
        ].filter((t): t is string => t !== null && !inEntry.has(t));
        const present = new Set(
          needed.length === 0
            ? []
            : (await app.templates.list({ where: inArray(templates.id, needed), on: tx })).map(
                (t) => t.id,
              ),
        );
        const missing = needed.find((t) => !present.has(t));
        if (missing !== undefined)
          throw new ApiError(
            'precondition_required',
            'The template these items were made from is gone',
            'parent_template_not_found',
            { id: missing },
          );
        const templateIds: string[] = [];
        for (const recycled of data.templates ?? []) {
          const { createdAt: _created, updatedAt: _updated, ...t } = recycled;
          await checkTemplateCreate(query, subjectOf(t.userId));
          await app.templates.create(
            {
              ...t,
              name: await restoredName('template', t.userId, t.name, tx),
              // a copy the deletion interrupted can not be taken up again: its disk is incomplete
              status: t.status === 'creating' ? 'failed' : t.status,
              progress: null,
            },
            tx,
          );
          templateIds.push(t.id);
        }
        const desktopIds: string[] = [];
        const targetIds: string[] = [];
        const restoreDesktop = async (recycled: NonNullable<EntryData['desktops']>[number]) => {
          const {
            createdAt: _created,
            updatedAt: _updated,
            ownerRole: _role,
            bastionTargets: _targets,
            ...d
          } = recycled;
          await app.desktops.table.create(
            {
              ...d,
              name: await restoredName('desktop', d.userId, d.name, tx),
              state: 'stopped',
              runtime: {},
              queue: null,
              accessed: new Date(d.accessed),
            },
            tx,
          );
          desktopIds.push(d.id);
          targetIds.push(...(await restoreBastionTargets(recycled, tx)));
        };
        const deploymentIds: string[] = [];
        for (const recycled of data.deployments ?? []) {
          const { createdAt: _created, updatedAt: _updated, ...p } = recycled;
          const own = (data.desktops ?? []).filter((d) => d.tag === p.id);
          // As a create: one more deployment with these desktops for its owner, and the desktops
          // within the limits of their groups and categories; then its desktops, so the next
          // deployment of the entry counts them.
          await checkDeploymentQuota(query, subjectOf(p.userId), {
            newDeployment: true,
            desktops: own.length,
          });
          await checkTargetDesktopLimits(query, own);
          await app.deployments.create(p, tx);
          deploymentIds.push(p.id);
          for (const d of own) await restoreDesktop(d);
        }
        for (const d of data.desktops ?? []) {
          if (d.tag !== null && deploymentIds.includes(d.tag)) continue;
          const deploymentOwner = d.tag === null ? undefined : deploymentOwners.get(d.tag);
          // A deployment's desktop counts against its deployment's owner, not its user's own quota.
          if (deploymentOwner !== undefined) {
            await checkDeploymentQuota(query, subjectOf(deploymentOwner), {
              newDeployment: false,
              desktops: 1,
            });
            await checkTargetDesktopLimits(query, [d]);
          } else if (!d.tag)
            await checkDesktopCreate(
              query,
              subjectOf(d.userId),
              d.type === 'nonpersistent' ? 'volatile' : 'desktops',
            );
          await restoreDesktop(d);
        }
        return { templateIds, desktopIds, deploymentIds, targetIds };
      });
      if (!restored) {
        const now = await app.recycleBin.get(row.id);
        if (now) assertRecycled(now);
        throw new ApiError('not_found', 'Recycle bin entry not found', 'not_found');
      }
      // A desktop whose disk file is gone is flagged now, before anyone is told it is back.
      await failRestoredWithoutDisk(app, restored.desktopIds);
      for (const templateId of restored.templateIds)
        await app.templateService.publish(templateId, 'templates.created');
      for (const desktopId of restored.desktopIds) {
        const row = await app.desktops.table.get(desktopId);
        // a desktop of an invisible deployment stays out of its user's list
        if (row && (!row.tag || (row.visible && (await app.deploymentService.isVisible(row)))))
          await app.desktops.publishCurrent(desktopId, 'desktops.created');
      }
      await app.deploymentService.restored(restored.deploymentIds);
      await announceBastionTargetsRestored(app, restored.targetIds);
      publishStatus(row, 'restored');
      app.log.info({ entry: row.id, agent: auth.userId }, 'recycle bin entry restored');
      return { recycle_bin_ids: [row.id] };
    },
  };
}
