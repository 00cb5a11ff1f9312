/**
 * Categories in the administration area. Admins create, change and delete them; a manager reads
 * only their own. A new category comes with its default group, named after it. Names are unique
 * (any case), and so are custom URL names, which may not be another category's id either (the
 * login looks a category up by both). A category is deleted only while no user, no item and no
 * group other than its default one belongs to it.
 */
import { and, asc, eq, ne, or, sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  categories,
  deployments,
  desktops,
  groups,
  media,
  templates,
  users,
  type CategoryRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type {
  AdminCategory,
  AdminCategoryCreate,
  AdminCategoryUpdate,
} from '../../../../src/generated/types.ts';
import {
  notFound,
  reaches,
  requireAdmin,
  requireStaff,
  type Actor,
} from '../../platform/auth/actor.ts';
import { appendAudit, categorySnapshot, groupSnapshot } from './audit.ts';
import type { AdminDeps } from './deps.ts';

// Spelled out: drizzle leaves the table name off the columns of a one-table select.
const groupsCount = sql<number>`(SELECT count(*)::int FROM groups g WHERE g.category_id = "categories"."id")`;
const usersCount = sql<number>`(SELECT count(*)::int FROM users u WHERE u.category_id = "categories"."id")`;

function toAdminCategory(c: CategoryRow, groupCount: number, userCount: number): AdminCategory {
  return {
    id: c.id,
    name: c.name,
    description: c.description,
    custom_url_name: c.customUrlName,
    frontend: c.frontend,
    maintenance: c.maintenance,
    groups: groupCount,
    users: userCount,
    quota: (c.quota ?? null) as AdminCategory['quota'],
  };
}

async function categoriesWhere(db: Db, where: ReturnType<typeof eq> | undefined) {
  const rows = await db
    .select({ category: categories, groups: groupsCount, users: usersCount })
    .from(categories)
    .where(where)
    .orderBy(asc(categories.name), asc(categories.id));
  return rows.map((r) => toAdminCategory(r.category, r.groups, r.users));
}

export async function listCategories(db: Db, actor: Actor): Promise<AdminCategory[]> {
  requireStaff(actor);
  return categoriesWhere(
    db,
    actor.role === 'admin' ? undefined : eq(categories.id, actor.categoryId),
  );
}

export async function showCategory(db: Db, actor: Actor, id: string): Promise<AdminCategory> {
  requireStaff(actor);
  const [found] = await categoriesWhere(db, eq(categories.id, id));
  if (!found || !reaches(actor, found.id)) throw notFound('Category');
  return found;
}

const urlNameOrNull = (v: string | null | undefined) =>
  v === undefined ? undefined : v === null || v === '' ? null : v;

async function checkUnique(
  on: Executor,
  values: { id: string; name?: string | undefined; customUrlName?: string | null | undefined },
  exceptId?: string,
) {
  const others = exceptId === undefined ? undefined : ne(categories.id, exceptId);
  if (values.name !== undefined) {
    const rows = await on
      .select({ id: categories.id })
      .from(categories)
      .where(and(sql`lower(${categories.name}) = lower(${values.name})`, others))
      .limit(1);
    if (rows.length > 0)
      throw new ApiError('conflict', `A category named ${values.name} exists`, 'category_exists', {
        name: values.name,
      });
  }
  const url = values.customUrlName;
  if (url) {
    const rows = await on
      .select({ id: categories.id })
      .from(categories)
      .where(and(or(eq(categories.customUrlName, url), eq(categories.id, url)), others))
      .limit(1);
    if (rows.length > 0)
      throw new ApiError('conflict', 'That custom URL name is taken', 'custom_url_name_taken', {
        custom_url_name: url,
      });
  }
}

/** Category writes are serialised, so two creations cannot both pass the uniqueness checks. */
async function lockCategories(on: Executor): Promise<void> {
  await on.execute(sql`SELECT pg_advisory_xact_lock(7406321014)`);
}

/** A readable id from the name when free (`Other school` -> `other-school`), else a random one. */
async function newCategoryId(on: Executor, name: string): Promise<string> {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  if (slug) {
    const taken = await on
      .select({ id: categories.id })
      .from(categories)
      .where(or(eq(categories.id, slug), eq(categories.customUrlName, slug)))
      .limit(1);
    if (taken.length === 0) return slug;
  }
  return randomUUID();
}

export async function createCategory(
  deps: AdminDeps,
  actor: Actor,
  body: AdminCategoryCreate,
): Promise<{ id: string }> {
  requireAdmin(actor);
  const customUrlName = urlNameOrNull(body.custom_url_name) ?? null;
  return deps.db.transaction(async (tx) => {
    await lockCategories(tx);
    const id = await newCategoryId(tx, body.name);
    await checkUnique(tx, { id, name: body.name, customUrlName });
    const [row] = await tx
      .insert(categories)
      .values({
        id,
        name: body.name,
        description: body.description ?? '',
        customUrlName,
        frontend: body.frontend ?? true,
        maintenance: body.maintenance ?? false,
        quota: (body.quota ?? null) as Record<string, unknown> | null,
      })
      .returning();
    if (!row) throw new Error('category not inserted');
    const [group] = await tx
      .insert(groups)
      .values({
        id: `${id}-default`,
        categoryId: id,
        name: body.name,
        description: `Default group of ${body.name}`,
      })
      .returning();
    if (!group) throw new Error('default group not inserted');
    await appendAudit(tx, actor, {
      action: 'adminCategories.create',
      targetType: 'category',
      targetId: id,
      targetName: row.name,
      categoryId: id,
      before: null,
      after: { ...categorySnapshot(row), default_group: groupSnapshot(group) },
    });
    return { id };
  });
}

async function writableCategory(on: Executor, actor: Actor, id: string): Promise<CategoryRow> {
  requireAdmin(actor);
  const rows = await on.select().from(categories).where(eq(categories.id, id)).limit(1);
  const row = rows[0];
  if (!row) throw notFound('Category');
  return row;
}

export async function updateCategory(
  deps: AdminDeps,
  actor: Actor,
  id: string,
  body: AdminCategoryUpdate,
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const before = await writableCategory(tx, actor, id);
    await lockCategories(tx);
    const customUrlName = urlNameOrNull(body.custom_url_name);
    await checkUnique(tx, { id, name: body.name, customUrlName }, id);
    const patch: Partial<CategoryRow> = {};
    if (body.name !== undefined) patch.name = body.name;
    if (body.description !== undefined) patch.description = body.description;
    if (customUrlName !== undefined) patch.customUrlName = customUrlName;
    if (body.frontend !== undefined) patch.frontend = body.frontend;
    if (body.maintenance !== undefined) patch.maintenance = body.maintenance;
    if (body.quota !== undefined) patch.quota = body.quota as Record<string, unknown> | null;
    const after = Object.keys(patch).length
      ? (await tx.update(categories).set(patch).where(eq(categories.id, id)).returning())[0]
      : before;
    if (!after) throw notFound('Category');
    await appendAudit(tx, actor, {
      action: 'adminCategories.update',
      targetType: 'category',
      targetId: id,
      targetName: after.name,
      categoryId: id,
      before: categorySnapshot(before),
      after: categorySnapshot(after),
    });
  });
}

const countIn = async (
  on: Executor,
  table: typeof users | typeof desktops | typeof templates | typeof media | typeof deployments,
  categoryId: string,
) =>
  (
    await on
      .select({ n: sql<number>`count(*)::int` })
      .from(table)
      .where(eq(table.categoryId, categoryId))
  )[0]?.n ?? 0;

export async function deleteCategory(deps: AdminDeps, actor: Actor, id: string): Promise<void> {
  await deps.db.transaction(async (tx) => {
    const before = await writableCategory(tx, actor, id);
    const own = await tx.select().from(groups).where(eq(groups.categoryId, id));
    // The default group is the one named after the category (made with it).
    const others = own.filter((g) => g.name !== before.name);
    const counts = {
      users: await countIn(tx, users, id),
      groups: others.length,
      desktops: await countIn(tx, desktops, id),
      templates: await countIn(tx, templates, id),
      media: await countIn(tx, media, id),
      deployments: await countIn(tx, deployments, id),
    };
    if (Object.values(counts).some((n) => n > 0))
      throw new ApiError(
        'precondition_required',
        'Users, groups or items still belong to this category',
        'category_has_users',
        counts,
      );
    await tx.delete(groups).where(eq(groups.categoryId, id));
    await tx.delete(categories).where(eq(categories.id, id));
    await appendAudit(tx, actor, {
      action: 'adminCategories.delete',
      targetType: 'category',
      targetId: id,
      targetName: before.name,
      categoryId: id,
      before: { ...categorySnapshot(before), groups: own.map(groupSnapshot) },
      after: null,
    });
  });
}
