/**
 * Who gets a desktop of a deployment (active members of its groups, its users, and the owner if
 * asked, within the owner's category unless an admin owns it), the names those desktops get, the
 * rows inserted for them, and the quota checks that count them.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, inArray, ne, or, sql, type SQL } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  users,
  type DeploymentRow,
  type DesktopInsert,
  type TemplateRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { stockImageOf, NEW_DESKTOP_HARDWARE } from '../desktops/index.ts';
import { fields } from '../../../../src/generated/fields.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import type { AllowedShareLists, Role } from '../../../../src/generated/types.ts';
import {
  checkDeploymentQuota,
  checkTargetDesktopLimits,
  type QuotaSubject,
} from '../quotas/index.ts';
import { subjectOf, type DeploymentDeps } from './deployment-deps.ts';

/** Longest desktop name. */
const MAX_NAME = Number(
  fields.DeploymentCreate.find((f) => f.path === 'desktop_name')?.maxLength ?? 50,
);

interface TargetUser {
  id: string;
  categoryId: string;
  groupId: string;
}

export type DeploymentTargets = ReturnType<typeof deploymentTargets>;

export function deploymentTargets({ app }: Pick<DeploymentDeps, 'app'>) {
  const { db } = app;

  /** The users who get a desktop: active members of the groups, the users, and the owner if asked. */
  const targetUsers = async (
    row: Pick<DeploymentRow, 'allowed' | 'userId' | 'categoryId' | 'createDict'>,
    ownerRole: Role | null,
    on: Executor = db,
  ): Promise<TargetUser[]> => {
    const groupIds = row.allowed.groups || [];
    const userIds = row.allowed.users || [];
    const picked: SQL[] = [];
    if (groupIds.length > 0) picked.push(inArray(users.groupId, groupIds));
    if (userIds.length > 0) picked.push(inArray(users.id, userIds));
    if (row.createDict.owner_desktop !== false) picked.push(eq(users.id, row.userId));
    if (picked.length === 0) return [];
    return on
      .select({ id: users.id, categoryId: users.categoryId, groupId: users.groupId })
      .from(users)
      .where(
        and(
          eq(users.active, true),
          or(...picked),
          // Deployments of non-admins reach only their owner's category.
          hasRoleAtLeast(ownerRole, role.admin) ? undefined : eq(users.categoryId, row.categoryId),
        ),
      )
      .orderBy(users.id);
  };

  /** A name the user has no other desktop by: the desktop name, then with the deployment's name. */
  const freeName = async (userId: string, base: string, deploymentName: string, on: Executor) => {
    for (let n = 0; n < 20; n++) {
      const suffix = n === 0 ? '' : n === 1 ? ` (${deploymentName})` : ` (${deploymentName} ${n})`;
      const candidate = `${base.slice(0, Math.max(1, MAX_NAME - suffix.length))}${suffix}`.slice(
        0,
        MAX_NAME,
      );
      if (!(await app.desktops.nameTaken(userId, candidate, undefined, on))) return candidate;
    }
    return `${base.slice(0, MAX_NAME - 9)} ${randomUUID().slice(0, 8)}`;
  };

  /** Inserts the rows (state `creating`) of the desktops of these users, inside the caller's transaction. */
  const insertDesktops = async (
    row: DeploymentRow,
    template: TemplateRow,
    targets: readonly TargetUser[],
    on: Executor,
  ): Promise<string[]> => {
    const dict = row.createDict;
    const ids: string[] = [];
    for (const user of targets) {
      const id = randomUUID();
      const values: DesktopInsert = {
        id,
        userId: user.id,
        categoryId: user.categoryId,
        groupId: user.groupId,
        name: await freeName(user.id, row.desktopName, row.name, on),
        description: dict.description ?? template.description,
        type: 'persistent',
        state: 'creating',
        templateId: template.id,
        hardware: { ...NEW_DESKTOP_HARDWARE, ...template.hardware, ...(dict.hardware ?? {}) },
        guestProperties: dict.guest_properties ?? template.guestProperties,
        image: dict.image && Object.keys(dict.image).length > 0 ? dict.image : stockImageOf(id),
        tag: row.id,
        visible: row.visible,
      };
      await app.desktops.table.create(values, on);
      ids.push(id);
    }
    return ids;
  };

  const ownerSubject = async (row: DeploymentRow): Promise<QuotaSubject> => {
    const owner = await app.users.byId(row.userId);
    if (!owner) throw new ApiError('not_found', 'The owner no longer exists', 'user_not_found');
    return subjectOf({ ...owner, userId: owner.id });
  };

  /** The quota check of a new deployment, with the desktops its targets would get when sent. */
  const checkQuota = async (auth: AuthContext, sent?: AllowedShareLists): Promise<void> => {
    let targets: TargetUser[] = [];
    if (sent) {
      const allowed = await app.allowedService.shareLists(auth, sent);
      targets = await targetUsers(
        { allowed, userId: auth.userId, categoryId: auth.categoryId, createDict: {} },
        auth.role,
      );
    }
    await checkDeploymentQuota(app.database.query, subjectOf(auth), {
      newDeployment: true,
      desktops: targets.length,
    });
    await checkTargetDesktopLimits(app.database.query, targets);
  };

  /** PUT /groups_users/count: distinct users of the groups (any state), plus one for the caller. */
  const countGroupsUsers = async (
    auth: AuthContext,
    groupIds: readonly string[],
  ): Promise<number> => {
    const allowed = await app.allowedService.shareLists(auth, { groups: [...groupIds] });
    const groupsList = allowed.groups || [];
    if (groupsList.length === 0) return 1;
    const rows = await db
      .select({ n: sql<number>`count(DISTINCT ${users.id})::int` })
      .from(users)
      .where(and(inArray(users.groupId, groupsList), ne(users.id, auth.userId)));
    return Number(rows[0]?.n ?? 0) + 1;
  };

  return { targetUsers, freeName, insertDesktops, ownerSubject, checkQuota, countGroupsUsers };
}
