/**
 * Categories in the administration area. Admins create, change and delete them; a manager reads
 * only their own. A new category comes with its default group, named after it. Names are unique
 * (any case), and so are custom URL names, which may not be another category's id either (the
 * login looks a category up by both). A category is deleted only while no user, no item and no
 * group other than its default one belongs to it.
 */
import { and, eq, ne, or, sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminCategoryFromCreate,
  adminCategoryFromUpdate,
  adminCategoryReadToWire,
  adminGroupSnapshot,
  categories,
  groups,
  type AdminCategoryReadRow,
} from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import type {
  AdminCategory,
  AdminCategoryCreate,
  AdminCategoryUpdate,
} from '../../../../src/generated/types.ts';
import { itemsIn, usersIn } from './item-counts.ts';
import { appendAudit } from './audit.ts';
import type { AdminDeps } from './deps.ts';

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

/**
 * The categories' plain CRUD (list with the groups and users counts, show, create, update,
 * delete) and what categories add to it: a readable id, unique names and custom URL names, the
 * default group made with the category, and a category in use is not deleted.
 */
export function categoriesCrud(deps: Pick<AdminDeps, 'db'>) {
  return crudService<'categories', AdminCategory, AdminCategoryCreate, AdminCategoryUpdate>(
    deps.db,
    {
      resource: 'adminCategories',
      storage: 'categories',
      label: 'Category',
      toWire: (row) => adminCategoryReadToWire(row as AdminCategoryReadRow),
      fromCreate: adminCategoryFromCreate,
      fromUpdate: adminCategoryFromUpdate,
      orderBy: ['name'],
      audit: { targetType: 'category', append: appendAudit },
      hooks: {
        async beforeCreate({ tx }, body) {
          const customUrlName = urlNameOrNull(body.custom_url_name) ?? null;
          await lockCategories(tx);
          const id = await newCategoryId(tx, body.name);
          await checkUnique(tx, { id, name: body.name, customUrlName });
          return { id, customUrlName };
        },
        async afterCreate({ tx }, row) {
          const [group] = await tx
            .insert(groups)
            .values({
              id: `${row.id}-default`,
              categoryId: row.id,
              name: row.name,
              description: `Default group of ${row.name}`,
            })
            .returning();
          if (!group) throw new Error('default group not inserted');
          return { default_group: adminGroupSnapshot(group) };
        },
        async beforeUpdate({ tx, before }, body) {
          await lockCategories(tx);
          const customUrlName = urlNameOrNull(body.custom_url_name);
          await checkUnique(tx, { id: before.id, name: body.name, customUrlName }, before.id);
          return customUrlName === undefined ? {} : { customUrlName };
        },
        async beforeDelete({ tx, before }) {
          const id = before.id;
          const own = await tx.select().from(groups).where(eq(groups.categoryId, id));
          // The default group is the one named after the category (made with it).
          const others = own.filter((g) => g.name !== before.name);
          const counts = {
            users: await usersIn(tx, 'categoryId', id),
            groups: others.length,
            ...(await itemsIn(tx, 'categoryId', id)),
          };
          if (Object.values(counts).some((n) => n > 0))
            throw new ApiError(
              'precondition_required',
              'Users, groups or items still belong to this category',
              'category_has_users',
              counts,
            );
          await tx.delete(groups).where(eq(groups.categoryId, id));
          return { groups: own.map(adminGroupSnapshot) };
        },
      },
    },
  );
}
