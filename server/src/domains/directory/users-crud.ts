/**
 * The users' plain CRUD in the administration area (list, show, create, update, delete) and what
 * users add to it: a manager acts in their own category only, never sees or writes an admin
 * account and never gives the admin role; a new account's password meets the policy and is
 * stored hashed; the main group belongs to the account's category; the portal keeps an enabled
 * admin; a deleted user's items go to the recycle bin; a user who is disabled, or whose role or
 * group changes, loses their sessions (or cached role) once the write committed.
 */
import { randomUUID } from 'node:crypto';
import { ne } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { hashPassword } from '../../platform/auth/passwords.ts';
import {
  adminUserFromCreate,
  adminUserFromUpdate,
  adminUserReadToWire,
  users,
  type AdminUserReadRow,
  type UserInsert,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import { checkPassword, nextHistory, policyFor } from '../../platform/auth/password-policy.ts';
import type { AccountPolicy } from '../../platform/repository/settings-repository.ts';
import type {
  AdminUser,
  AdminUserCreate,
  AdminUserUpdate,
} from '../../../../src/generated/types.ts';
import { notFound, requireRoleReach } from '../../platform/auth/actor.ts';
import { appendAudit } from './audit.ts';
import type { AdminDeps } from './deps.ts';
import { keepAnAdmin } from './last-admin.ts';
import {
  categoryExists,
  checkMainGroup,
  checkSecondaryGroups,
  groupRowById,
  ownedItems,
} from './users.ts';
import { userWrites } from './user-writes.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

/** Read and made before a create's transaction: the policies in force and the password's hash. */
interface Prepared {
  policies: readonly AccountPolicy[];
  passwordHash: string;
}

const userExists = (username: string) =>
  new ApiError('conflict', `The user ${username} exists already in that category`, 'user_exists', {
    username,
  });

/** The stored address: an empty one is none. */
const emailOrNull = (email: string | null | undefined) =>
  email === undefined ? undefined : email === null || email === '' ? null : email;

/** Whether the write takes away the last enabled admin's role or state (or the account). */
const losesAnAdmin = (before: UserRow, after: UserRow | null) =>
  before.role === role.admin &&
  before.active &&
  (after === null || after.role !== role.admin || !after.active);

/**
 * Refuses to delete what would lose items: media have no place in the recycle bin, so a user who
 * still has media is refused (428 user_owns_items), and so is one who owns anything when the
 * host cannot move items (`movable` false: the command line, or inside the delete's transaction
 * for what was made after the items were gathered).
 */
async function refuseOwned(on: Executor, id: string, movable: boolean): Promise<void> {
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
}

export function usersCrud(deps: AdminDeps) {
  return crudService<'users', AdminUser, AdminUserCreate, AdminUserUpdate, Prepared>(deps.db, {
    resource: 'adminUsers',
    storage: 'users',
    label: 'User',
    toWire: (row) => adminUserReadToWire(row as AdminUserReadRow),
    fromCreate: adminUserFromCreate,
    fromUpdate: adminUserFromUpdate,
    orderBy: ['username', 'categoryId'],
    // A manager's category holds admin accounts the manager neither sees nor writes.
    hidden: (actor) =>
      hasRoleAtLeast(actor.role, role.admin) ? undefined : ne(users.role, role.admin),
    conflict: (values) => userExists(values.username ?? ''),
    writer: {
      insert: (on, values) => userWrites.create(on, values as UserInsert),
      update: (on, id, patch) => userWrites.administer(on, id, patch),
      remove: (on, id) => userWrites.remove(on, id),
    },
    audit: { targetType: 'user', append: appendAudit, targetName: (row) => row.username },
    hooks: {
      async prepareCreate(_actor, body) {
        const [policies, passwordHash] = await Promise.all([
          deps.accountPolicies(),
          hashPassword(body.password),
        ]);
        return { policies, passwordHash };
      },
      async beforeCreate({ tx, actor, prepared }, body) {
        if (!prepared) throw new Error('adminUsers.create: not prepared');
        requireRoleReach(actor, body.role);
        const group = await checkMainGroupExists(tx, body.group);
        // A manager's users go to the manager's own category whatever is sent.
        const categoryId =
          actor.role === role.admin ? (body.category ?? group.categoryId) : actor.categoryId;
        if (!(await categoryExists(tx, categoryId)))
          throw notFound('Category', 'category_not_found', { category: categoryId });
        await checkMainGroup(tx, body.group, categoryId);
        await checkSecondaryGroups(tx, actor, body.secondary_groups ?? []);
        const who = { categoryId, role: body.role, provider: 'local' };
        const policy = policyFor(prepared.policies, who)?.password;
        await checkPassword(policy, body.password, { username: body.username, history: [] });
        const { passwordHash } = prepared;
        return {
          id: randomUUID(),
          uid: body.username,
          provider: 'local',
          categoryId,
          secondaryGroups: body.secondary_groups ?? [],
          passwordHash,
          passwordHistory: nextHistory([], passwordHash, policy?.old_passwords ?? 0),
          passwordLastUpdated: new Date(),
          email: emailOrNull(body.email) ?? null,
        };
      },
      async beforeUpdate({ tx, actor, before }, body) {
        requireRoleReach(actor, before.role, body.role);
        if (body.group !== undefined) await checkMainGroup(tx, body.group, before.categoryId);
        if (body.secondary_groups !== undefined)
          await checkSecondaryGroups(tx, actor, body.secondary_groups);
        const email = emailOrNull(body.email);
        return {
          ...(body.secondary_groups !== undefined
            ? { secondaryGroups: body.secondary_groups }
            : {}),
          ...(email !== undefined ? { email } : {}),
          ...(email !== undefined && email !== before.email ? { emailVerified: false } : {}),
        };
      },
      async beforeDelete({ tx, actor, before }) {
        requireRoleReach(actor, before.role);
        if (actor.id === before.id) throw cannotDeleteSelf();
        // anything made meanwhile, after the items were gathered, keeps the user
        await refuseOwned(tx, before.id, false);
        return {};
      },
      async afterWrite({ tx, before }, { after }) {
        if (before && losesAnAdmin(before, after)) await keepAnAdmin(tx);
      },
      async aroundDelete(actor, user, remove) {
        if (actor.id === user.id) throw cannotDeleteSelf();
        requireRoleReach(actor, user.role);
        await refuseOwned(deps.db, user.id, deps.recycleUserItems !== undefined);
        if (deps.recycleUserItems) await deps.recycleUserItems(actor, user, remove);
        else await deps.db.transaction(remove);
      },
      async afterCommit(_actor, { kind, before, after }) {
        if (kind === 'create' || !before) return;
        if (kind === 'delete') return deps.sessionsChanged(before.id, false);
        if (!after) return;
        const disabled = before.active && !after.active;
        if (disabled || after.role !== before.role || after.groupId !== before.groupId)
          await deps.sessionsChanged(after.id, disabled);
      },
    },
  });
}

const cannotDeleteSelf = () =>
  new ApiError('precondition_required', 'You cannot delete yourself', 'cannot_delete_self');

/** The main group named by a new account exists (404 group_not_found). */
async function checkMainGroupExists(on: Executor, groupId: string) {
  const group = await groupRowById(on, groupId);
  if (!group) throw notFound('Group', 'group_not_found', { group: groupId });
  return group;
}

export type UsersCrud = ReturnType<typeof usersCrud>;
