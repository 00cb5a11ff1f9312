/**
 * Users in the administration area: list and show (allow-listed fields only), create, update,
 * set a password, delete. Every write and its audit entry go in one transaction. Managers act in
 * their own category only, never on an admin account, and never give the admin role; a user who
 * is disabled, or whose password is set, loses their sessions.
 */
import { randomUUID } from 'node:crypto';
import { and, asc, eq, getTableColumns, inArray, ne, sql, type SQL } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { hashPassword } from '../../platform/auth/passwords.ts';
import {
  adminUserFromCreate,
  adminUserFromUpdate,
  adminUserReadToWire,
  adminUserSnapshot,
  categories,
  deployments,
  desktops,
  groups,
  media,
  recycleBin,
  templates,
  users,
  usersComputed,
  type GroupRow,
  type UserInsert,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { checkPassword, nextHistory } from '../../platform/auth/password-policy.ts';
import type {
  AdminUser,
  AdminUserCreate,
  AdminUserPassword,
  AdminUserUpdate,
} from '../../../../src/generated/types.ts';
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
import { keepAnAdmin } from './last-admin.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

/** Users with their category's and main group's names, as the administration reads them. */
async function usersWithNames(db: Db, where: SQL | undefined) {
  const rows = await db
    .select({ ...getTableColumns(users), ...usersComputed })
    .from(users)
    .where(where)
    .orderBy(asc(users.username), asc(users.categoryId));
  return rows.map(adminUserReadToWire);
}

/** The users the actor sees: every user for an admin; a manager's own category but its admins. */
function visibleTo(actor: Actor): SQL | undefined {
  return hasRoleAtLeast(actor.role, role.admin)
    ? undefined
    : and(eq(users.categoryId, actor.categoryId), ne(users.role, role.admin));
}

export async function listUsers(db: Db, actor: Actor): Promise<AdminUser[]> {
  requireStaff(actor);
  return usersWithNames(db, visibleTo(actor));
}

/** One user; for a manager, another category's user and an admin account are not found. */
export async function showUser(db: Db, actor: Actor, id: string): Promise<AdminUser> {
  requireStaff(actor);
  const [found] = await usersWithNames(db, and(eq(users.id, id), visibleTo(actor)));
  if (!found) throw notFound('User');
  return found;
}

export async function userRowById(on: Executor, id: string): Promise<UserRow | undefined> {
  const rows = await on.select().from(users).where(eq(users.id, id)).limit(1);
  return rows[0];
}

/** The user to write on: it exists (404) and the actor reaches it (403). */
async function writableUser(on: Executor, actor: Actor, id: string): Promise<UserRow> {
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
async function checkSecondaryGroups(on: Executor, actor: Actor, ids: readonly string[]) {
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

async function categoryExists(on: Executor, id: string): Promise<boolean> {
  const rows = await on
    .select({ id: categories.id })
    .from(categories)
    .where(eq(categories.id, id))
    .limit(1);
  return rows.length > 0;
}

const userExists = (username: string) =>
  new ApiError('conflict', `The user ${username} exists already in that category`, 'user_exists', {
    username,
  });

const emailOrNull = (email: string | null | undefined) =>
  email === undefined ? undefined : email === null || email === '' ? null : email;

export async function createUser(
  deps: AdminDeps,
  actor: Actor,
  body: AdminUserCreate,
): Promise<{ id: string }> {
  requireStaff(actor);
  requireRoleReach(actor, body.role);
  const group = await groupRowById(deps.db, body.group);
  if (!group) throw notFound('Group', 'group_not_found', { group: body.group });
  // A manager's users go to the manager's own category whatever is sent.
  const categoryId =
    actor.role === role.admin ? (body.category ?? group.categoryId) : actor.categoryId;
  if (!(await categoryExists(deps.db, categoryId)))
    throw notFound('Category', 'category_not_found', { category: categoryId });
  await checkMainGroup(deps.db, body.group, categoryId);
  await checkSecondaryGroups(deps.db, actor, body.secondary_groups ?? []);
  const policy = await passwordPolicyOf(deps, {
    categoryId,
    role: body.role,
    provider: 'local',
  });
  await checkPassword(policy, body.password, { username: body.username, history: [] });
  const passwordHash = await hashPassword(body.password);
  const id = randomUUID();
  await deps.db.transaction(async (tx) => {
    const inserted = await tx
      .insert(users)
      .values({
        // every stored field of the body, by the generated mapper; then what differs
        ...adminUserFromCreate(body),
        id,
        uid: body.username,
        username: body.username,
        name: body.name,
        role: body.role,
        groupId: body.group,
        provider: 'local',
        categoryId,
        secondaryGroups: body.secondary_groups ?? [],
        passwordHash,
        passwordHistory: nextHistory([], passwordHash, policy?.old_passwords ?? 0),
        passwordLastUpdated: new Date(),
        email: emailOrNull(body.email) ?? null,
      })
      .onConflictDoNothing()
      .returning();
    const row = inserted[0];
    if (!row) throw userExists(body.username);
    await appendAudit(tx, actor, {
      action: 'adminUsers.create',
      targetType: 'user',
      targetId: id,
      targetName: row.username,
      categoryId,
      before: null,
      after: adminUserSnapshot(row),
    });
  });
  return { id };
}

export async function updateUser(
  deps: AdminDeps,
  actor: Actor,
  id: string,
  body: AdminUserUpdate,
): Promise<void> {
  const current = await writableUser(deps.db, actor, id);
  requireRoleReach(actor, body.role);
  if (body.group !== undefined) await checkMainGroup(deps.db, body.group, current.categoryId);
  if (body.secondary_groups !== undefined)
    await checkSecondaryGroups(deps.db, actor, body.secondary_groups);
  // every stored field of the body, by the generated mapper; then what differs
  const patch: Partial<UserInsert> = adminUserFromUpdate(body);
  const email = emailOrNull(body.email);
  if (email !== undefined) patch.email = email;
  if (email !== undefined && email !== current.email) patch.emailVerified = false;
  await deps.db.transaction(async (tx) => {
    const before = await writableUser(tx, actor, id);
    const updated = Object.keys(patch).length
      ? (await tx.update(users).set(patch).where(eq(users.id, id)).returning())[0]
      : before;
    if (!updated) throw notFound('User');
    if (
      before.role === role.admin &&
      before.active &&
      (updated.role !== role.admin || !updated.active)
    )
      await keepAnAdmin(tx);
    await appendAudit(tx, actor, {
      action: 'adminUsers.update',
      targetType: 'user',
      targetId: id,
      targetName: updated.username,
      categoryId: updated.categoryId,
      before: adminUserSnapshot(before),
      after: adminUserSnapshot(updated),
    });
  });
  const disabled = body.active === false && current.active;
  if (disabled || (body.role !== undefined && body.role !== current.role) || body.group)
    await deps.sessionsChanged(id, disabled);
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
    const [updated] = await tx
      .update(users)
      .set({
        passwordHash,
        passwordHistory: nextHistory(
          before.passwordHistory,
          passwordHash,
          policy?.old_passwords ?? 0,
        ),
        passwordLastUpdated: sql`now()`,
        passwordResetRequired: body.password_reset_required ?? true,
        passwordResetJti: null,
      })
      .where(eq(users.id, id))
      .returning();
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
  const [desktopCount, templateCount, mediaCount, deploymentCount, binRows] = await Promise.all([
    count(desktops),
    count(templates),
    count(media),
    count(deployments),
    on
      .select({ n: sql<number>`count(*)::int` })
      .from(recycleBin)
      .where(eq(recycleBin.ownerId, userId)),
  ]);
  return {
    desktops: desktopCount,
    templates: templateCount,
    media: mediaCount,
    deployments: deploymentCount,
    recycle_bin: binRows[0]?.n ?? 0,
  };
}

/**
 * Deletes a user (never oneself): the server moves what they own into one recycle-bin entry of
 * the actor, the account with it, so a restore brings both back. Media have no place in the
 * recycle bin: a user who still has media is refused (428 user_owns_items), and so is one who
 * owns anything when the host cannot move items (the command line).
 */
export async function deleteUser(deps: AdminDeps, actor: Actor, id: string): Promise<void> {
  if (actor.id === id)
    throw new ApiError('precondition_required', 'You cannot delete yourself', 'cannot_delete_self');
  const refuseOwned = async (on: Executor, movable: boolean) => {
    const owned = await ownedItems(on, id);
    if ((movable ? [owned.media] : Object.values(owned)).some((n) => n > 0))
      throw new ApiError(
        'precondition_required',
        movable
          ? 'The user still has media: delete them first'
          : 'The user still owns items: move or delete them first',
        'user_owns_items',
        owned,
      );
  };
  const user = await writableUser(deps.db, actor, id);
  await refuseOwned(deps.db, deps.recycleUserItems !== undefined);
  const finish = async (tx: Executor) => {
    const before = await writableUser(tx, actor, id);
    // anything made meanwhile, after the items were gathered, keeps the user
    await refuseOwned(tx, false);
    await tx.delete(users).where(eq(users.id, id));
    if (before.role === role.admin && before.active) await keepAnAdmin(tx);
    await appendAudit(tx, actor, {
      action: 'adminUsers.delete',
      targetType: 'user',
      targetId: id,
      targetName: before.username,
      categoryId: before.categoryId,
      before: adminUserSnapshot(before),
      after: null,
    });
  };
  if (deps.recycleUserItems) await deps.recycleUserItems(actor, user, finish);
  else await deps.db.transaction(finish);
  await deps.sessionsChanged(id, false);
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
