/**
 * Users in the administration area beyond their plain CRUD (users-crud.ts): setting a password,
 * resetting their second factors, the checks the writes share (main and secondary groups,
 * category, what a user owns) and the command line's look-up by name. Every write and its audit entry go in one transaction; a user
 * whose password is set loses their sessions.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { hashPassword } from '../../platform/auth/passwords.ts';
import {
  adminUserSnapshot,
  categories,
  deployments,
  desktops,
  groups,
  media,
  recycleBin,
  templates,
  users,
  type GroupRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { checkPassword, nextHistory } from '../../platform/auth/password-policy.ts';
import { removeSecondFactors } from '../../platform/auth/second-factors.ts';
import type { AdminUserPassword } from '../../../../src/generated/types.ts';
import {
  notFound,
  reaches,
  requireReach,
  requireRoleReach,
  requireStaff,
  type Actor,
} from '../../platform/auth/actor.ts';
import { appendAudit } from './audit.ts';
import { passwordPolicyOf, type AdminDeps } from './deps.ts';
import { userWrites } from './user-writes.ts';

export async function userRowById(on: Executor, id: string): Promise<UserRow | undefined> {
  const rows = await on.select().from(users).where(eq(users.id, id)).limit(1);
  return rows[0];
}

/** The user to write on: it exists (404) and the actor reaches it (403). */
export async function writableUser(on: Executor, actor: Actor, id: string): Promise<UserRow> {
  requireStaff(actor);
  const user = await userRowById(on, id);
  if (!user) throw notFound('User');
  requireReach(actor, user.categoryId);
  requireRoleReach(actor, user.role);
  return user;
}

export async function groupRowById(on: Executor, id: string): Promise<GroupRow | undefined> {
  const rows = await on.select().from(groups).where(eq(groups.id, id)).limit(1);
  return rows[0];
}

/** The main group: it exists (404 group_not_found) and belongs to the user's category (400). */
export async function checkMainGroup(
  on: Executor,
  groupId: string,
  categoryId: string,
): Promise<GroupRow> {
  const group = await groupRowById(on, groupId);
  if (!group) throw notFound('Group', 'group_not_found', { group: groupId });
  if (group.categoryId !== categoryId)
    throw new ApiError(
      'bad_request',
      'The group belongs to another category',
      'group_not_in_category',
      { group: groupId, category: categoryId },
    );
  return group;
}

/** Secondary groups exist and the actor reaches each of them (404 group_not_found). */
export async function checkSecondaryGroups(on: Executor, actor: Actor, ids: readonly string[]) {
  if (ids.length === 0) return;
  const found = await on
    .select({ id: groups.id, categoryId: groups.categoryId })
    .from(groups)
    .where(inArray(groups.id, [...ids]));
  for (const id of ids) {
    const g = found.find((f) => f.id === id);
    if (!g || !reaches(actor, g.categoryId))
      throw notFound('Group', 'group_not_found', { group: id, field: 'secondary_groups' });
  }
}

export async function categoryExists(on: Executor, id: string): Promise<boolean> {
  const rows = await on
    .select({ id: categories.id })
    .from(categories)
    .where(eq(categories.id, id))
    .limit(1);
  return rows.length > 0;
}

export async function setUserPassword(
  deps: AdminDeps,
  actor: Actor,
  id: string,
  body: AdminUserPassword,
): Promise<void> {
  const current = await writableUser(deps.db, actor, id);
  const policy = await passwordPolicyOf(deps, current);
  await checkPassword(policy, body.password, {
    username: current.username,
    history: current.passwordHistory,
  });
  const passwordHash = await hashPassword(body.password);
  await deps.db.transaction(async (tx) => {
    const before = await writableUser(tx, actor, id);
    const updated = await userWrites.setPassword(tx, id, {
      passwordHash,
      passwordHistory: nextHistory(
        before.passwordHistory,
        passwordHash,
        policy?.old_passwords ?? 0,
      ),
      resetRequired: body.password_reset_required ?? true,
    });
    if (!updated) throw notFound('User');
    await appendAudit(tx, actor, {
      action: 'adminUsers.setPassword',
      targetType: 'user',
      targetId: id,
      targetName: updated.username,
      categoryId: updated.categoryId,
      before: adminUserSnapshot(before),
      after: { ...adminUserSnapshot(updated), password_changed: true },
    });
  });
  await deps.sessionsChanged(id, true);
}

/**
 * Removes a user's second factors and recovery codes (a lost phone): the next login asks for a
 * new enrolment when the account policy requires one. Audited with the kinds removed.
 */
export async function resetUserSecondFactors(
  deps: AdminDeps,
  actor: Actor,
  id: string,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const user = await writableUser(tx, actor, id);
    const removed = await removeSecondFactors(tx, id);
    const snapshot = adminUserSnapshot(user);
    await appendAudit(tx, actor, {
      action: 'adminUsers.resetSecondFactors',
      targetType: 'user',
      targetId: id,
      targetName: user.username,
      categoryId: user.categoryId,
      before: { ...snapshot, second_factors: removed },
      after: { ...snapshot, second_factors: [] },
    });
  });
  await deps.sessionsChanged(id, false);
}

/** What a user owns that deleting them would lose. */
export async function ownedItems(on: Executor, userId: string) {
  const count = async (
    table: typeof desktops | typeof templates | typeof media | typeof deployments,
  ) =>
    (
      await on
        .select({ n: sql<number>`count(*)::int` })
        .from(table)
        .where(eq(table.userId, userId))
    )[0]?.n ?? 0;
  // One read after the other: `on` may be a transaction, whose one connection takes one query at
  // a time.
  const desktopCount = await count(desktops);
  const templateCount = await count(templates);
  const mediaCount = await count(media);
  const deploymentCount = await count(deployments);
  const binRows = await on
    .select({ n: sql<number>`count(*)::int` })
    .from(recycleBin)
    .where(eq(recycleBin.ownerId, userId));
  return {
    desktops: desktopCount,
    templates: templateCount,
    media: mediaCount,
    deployments: deploymentCount,
    recycle_bin: binRows[0]?.n ?? 0,
  };
}

/** Local accounts named `username`, in the actor's reach (the command line looks users up so). */
export async function findUsersByName(
  db: Db,
  actor: Actor,
  username: string,
  categoryId?: string,
): Promise<UserRow[]> {
  const rows = await db
    .select()
    .from(users)
    .where(
      and(
        eq(users.uid, username),
        eq(users.provider, 'local'),
        categoryId === undefined ? undefined : eq(users.categoryId, categoryId),
      ),
    );
  return rows.filter((r) => reaches(actor, r.categoryId));
}
