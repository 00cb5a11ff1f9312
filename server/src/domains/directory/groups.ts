/**
 * Groups in the administration area. A group's name is unique in its category; a registration
 * code (enrollment) is unique across every group and role, so a code always names one group and
 * role when someone registers with it. A group is deleted only while no user has it as main group
 * and no desktop, template, medium or deployment refers to it; it then leaves the secondary groups
 * of the users that listed it.
 */
import { randomUUID } from 'node:crypto';
import { and, asc, eq, ne, or, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  categories,
  deployments,
  desktops,
  groups,
  media,
  templates,
  users,
  type GroupRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { ENROLLMENT_ROLES } from './users-repository.ts';
import type {
  AdminGroup,
  AdminGroupCreate,
  AdminGroupEnrollment,
  AdminGroupUpdate,
} from '../../../../src/generated/types.ts';
import {
  notFound,
  reaches,
  requireReach,
  requireStaff,
  type Actor,
} from '../../platform/auth/actor.ts';
import { appendAudit, groupSnapshot } from './audit.ts';
import type { AdminDeps } from './deps.ts';

type Enrollment = NonNullable<GroupRow['enrollment']>;

// Spelled out: drizzle may leave the table name off a column.
const usersCount = sql<number>`(SELECT count(*)::int FROM users u WHERE u.group_id = "groups"."id")`;

function toAdminGroup(g: GroupRow, categoryName: string | null, userCount: number): AdminGroup {
  return {
    id: g.id,
    name: g.name,
    description: g.description,
    category: g.categoryId,
    category_name: categoryName,
    users: userCount,
    enrollment: {
      user: g.enrollment?.user ?? null,
      advanced: g.enrollment?.advanced ?? null,
      manager: g.enrollment?.manager ?? null,
    },
    quota: (g.quota ?? null) as AdminGroup['quota'],
  };
}

async function groupsWhere(db: Db, where: ReturnType<typeof eq> | undefined) {
  const rows = await db
    .select({ group: groups, category: categories.name, users: usersCount })
    .from(groups)
    .leftJoin(categories, eq(categories.id, groups.categoryId))
    .where(where)
    .orderBy(asc(groups.name), asc(groups.id));
  return rows.map((r) => toAdminGroup(r.group, r.category, r.users));
}

export async function listGroups(db: Db, actor: Actor): Promise<AdminGroup[]> {
  requireStaff(actor);
  return groupsWhere(
    db,
    actor.role === 'admin' ? undefined : eq(groups.categoryId, actor.categoryId),
  );
}

export async function showGroup(db: Db, actor: Actor, id: string): Promise<AdminGroup> {
  requireStaff(actor);
  const [found] = await groupsWhere(db, eq(groups.id, id));
  if (!found || !reaches(actor, found.category)) throw notFound('Group');
  return found;
}

const groupExists = (name: string) =>
  new ApiError('conflict', `A group named ${name} exists already in the category`, 'group_exists', {
    name,
  });

async function checkNameFree(on: Executor, categoryId: string, name: string, exceptId?: string) {
  const rows = await on
    .select({ id: groups.id })
    .from(groups)
    .where(
      and(
        eq(groups.categoryId, categoryId),
        sql`lower(${groups.name}) = lower(${name})`,
        exceptId === undefined ? undefined : ne(groups.id, exceptId),
      ),
    )
    .limit(1);
  if (rows.length > 0) throw groupExists(name);
}

/** The codes as stored: empty strings are no code. */
export function normalizeEnrollment(e: AdminGroupEnrollment | undefined): Enrollment | undefined {
  if (!e) return undefined;
  const out: Enrollment = {};
  for (const role of ENROLLMENT_ROLES)
    if (role in e) out[role] = e[role] === '' || e[role] === undefined ? null : (e[role] ?? null);
  return out;
}

const codeTaken = (code: string, role: string) =>
  new ApiError('conflict', 'That registration code is in use', 'enrollment_code_taken', {
    role,
    field: `enrollment.${role}`,
    code,
  });

/** Each code names one group and role only: not twice in the group, not in another group. */
async function checkCodesFree(on: Executor, enrollment: Enrollment, exceptGroupId?: string) {
  const seen = new Set<string>();
  for (const role of ENROLLMENT_ROLES) {
    const code = enrollment[role];
    if (!code) continue;
    if (seen.has(code)) throw codeTaken(code, role);
    seen.add(code);
    const rows = await on
      .select({ id: groups.id })
      .from(groups)
      .where(
        and(
          or(...ENROLLMENT_ROLES.map((r) => sql`${groups.enrollment} ->> ${r} = ${code}`)),
          exceptGroupId === undefined ? undefined : ne(groups.id, exceptGroupId),
        ),
      )
      .limit(1);
    if (rows.length > 0) throw codeTaken(code, role);
  }
}

/** Serialises group writes of a category, so two writes cannot both pass the checks. */
async function lockGroups(on: Executor): Promise<void> {
  await on.execute(sql`SELECT pg_advisory_xact_lock(7406321013)`);
}

export async function createGroup(
  deps: AdminDeps,
  actor: Actor,
  body: AdminGroupCreate,
  id: string = randomUUID(),
): Promise<{ id: string }> {
  requireStaff(actor);
  // A manager's groups go to the manager's own category whatever is sent.
  const categoryId = actor.role === 'admin' ? body.category : actor.categoryId;
  const enrollment = normalizeEnrollment(body.enrollment) ?? null;
  await deps.db.transaction(async (tx) => {
    const cat = await tx
      .select({ id: categories.id })
      .from(categories)
      .where(eq(categories.id, categoryId))
      .limit(1);
    if (cat.length === 0)
      throw notFound('Category', 'category_not_found', { category: categoryId });
    await lockGroups(tx);
    await checkNameFree(tx, categoryId, body.name);
    if (enrollment) await checkCodesFree(tx, enrollment);
    const [row] = await tx
      .insert(groups)
      .values({
        id,
        categoryId,
        name: body.name,
        description: body.description ?? '',
        enrollment,
        quota: (body.quota ?? null) as Record<string, unknown> | null,
      })
      .returning();
    if (!row) throw new Error('group not inserted');
    await appendAudit(tx, actor, {
      action: 'adminGroups.create',
      targetType: 'group',
      targetId: id,
      targetName: row.name,
      categoryId,
      before: null,
      after: groupSnapshot(row),
    });
  });
  return { id };
}

async function writableGroup(on: Executor, actor: Actor, id: string): Promise<GroupRow> {
  requireStaff(actor);
  const rows = await on.select().from(groups).where(eq(groups.id, id)).limit(1);
  const group = rows[0];
  if (!group) throw notFound('Group');
  requireReach(actor, group.categoryId);
  return group;
}

export async function updateGroup(
  deps: AdminDeps,
  actor: Actor,
  id: string,
  body: AdminGroupUpdate,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const before = await writableGroup(tx, actor, id);
    await lockGroups(tx);
    const patch: Partial<GroupRow> = {};
    if (body.name !== undefined) {
      await checkNameFree(tx, before.categoryId, body.name, id);
      patch.name = body.name;
    }
    if (body.description !== undefined) patch.description = body.description;
    const enrollment = normalizeEnrollment(body.enrollment);
    if (enrollment) {
      const merged = { ...(before.enrollment ?? {}), ...enrollment };
      await checkCodesFree(tx, merged, id);
      patch.enrollment = merged;
    }
    if (body.quota !== undefined) patch.quota = body.quota as Record<string, unknown> | null;
    const after = Object.keys(patch).length
      ? (await tx.update(groups).set(patch).where(eq(groups.id, id)).returning())[0]
      : before;
    if (!after) throw notFound('Group');
    await appendAudit(tx, actor, {
      action: 'adminGroups.update',
      targetType: 'group',
      targetId: id,
      targetName: after.name,
      categoryId: after.categoryId,
      before: groupSnapshot(before),
      after: groupSnapshot(after),
    });
  });
}

const countWhere = async (
  on: Executor,
  table: typeof desktops | typeof templates | typeof media | typeof deployments,
  groupId: string,
) =>
  (
    await on
      .select({ n: sql<number>`count(*)::int` })
      .from(table)
      .where(eq(table.groupId, groupId))
  )[0]?.n ?? 0;

export async function deleteGroup(deps: AdminDeps, actor: Actor, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const before = await writableGroup(tx, actor, id);
    const members = (
      await tx
        .select({ n: sql<number>`count(*)::int` })
        .from(users)
        .where(eq(users.groupId, id))
    )[0]?.n;
    if (members)
      throw new ApiError(
        'precondition_required',
        'Users still have this group as their main group',
        'group_has_users',
        { users: members },
      );
    const items = {
      desktops: await countWhere(tx, desktops, id),
      templates: await countWhere(tx, templates, id),
      media: await countWhere(tx, media, id),
      deployments: await countWhere(tx, deployments, id),
    };
    if (Object.values(items).some((n) => n > 0))
      throw new ApiError(
        'precondition_required',
        'Desktops, templates, media or deployments still belong to this group',
        'group_has_items',
        items,
      );
    await tx
      .update(users)
      .set({ secondaryGroups: sql`${users.secondaryGroups} - ${id}::text` })
      .where(sql`${users.secondaryGroups} ? ${id}`);
    await tx.delete(groups).where(eq(groups.id, id));
    await appendAudit(tx, actor, {
      action: 'adminGroups.delete',
      targetType: 'group',
      targetId: id,
      targetName: before.name,
      categoryId: before.categoryId,
      before: groupSnapshot(before),
      after: null,
    });
  });
}

/** A group by id, else by name (in the category when given), among those the actor reaches. */
export async function findGroup(
  db: Db,
  actor: Actor,
  idOrName: string,
  categoryId?: string,
): Promise<GroupRow[]> {
  const rows = await db
    .select()
    .from(groups)
    .where(
      and(
        or(eq(groups.id, idOrName), eq(groups.name, idOrName)),
        categoryId === undefined ? undefined : eq(groups.categoryId, categoryId),
      ),
    );
  const reachable = rows.filter((g) => reaches(actor, g.categoryId));
  const byId = reachable.filter((g) => g.id === idOrName);
  return byId.length > 0 ? byId : reachable;
}
