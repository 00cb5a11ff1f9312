/**
 * Groups in the administration area. A group's name is unique in its category; a registration
 * code (enrollment) is unique across every group and role, so a code always names one group and
 * role when someone registers with it. A group is deleted only while no user has it as main group
 * and no desktop, template, medium or deployment refers to it; it then leaves the secondary groups
 * of the users that listed it.
 */
import { randomUUID } from 'node:crypto';
import { and, eq, ne, or, sql } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminGroupFromCreate,
  adminGroupFromUpdate,
  adminGroupReadToWire,
  categories,
  groups,
  ldapProviders,
  oidcProviders,
  samlProviders,
  type AdminGroupReadRow,
  type GroupRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import { ENROLLMENT_ROLES } from './users-repository.ts';
import { userWrites } from './user-writes.ts';
import type {
  AdminGroup,
  AdminGroupCreate,
  AdminGroupEnrollment,
  AdminGroupUpdate,
} from '../../../../src/generated/types.ts';
import { notFound, reaches, type Actor } from '../../platform/auth/actor.ts';
import { itemsIn, usersIn } from './item-counts.ts';
import { appendAudit } from './audit.ts';
import type { AdminDeps } from './deps.ts';
import { role } from '../../../../src/generated/policy.ts';

type Enrollment = NonNullable<GroupRow['enrollment']>;

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

/**
 * The groups' plain CRUD (list with the users count and the category name, show, create,
 * update, delete) and what groups add to it: a manager's group goes to the manager's category,
 * names and registration codes stay unique, and a group in use is not deleted.
 */
export function groupsCrud(deps: Pick<AdminDeps, 'db'>) {
  return crudService<'groups', AdminGroup, AdminGroupCreate, AdminGroupUpdate>(deps.db, {
    resource: 'adminGroups',
    storage: 'groups',
    label: 'Group',
    toWire: (row) => adminGroupReadToWire(row as AdminGroupReadRow),
    fromCreate: adminGroupFromCreate,
    fromUpdate: adminGroupFromUpdate,
    orderBy: ['name'],
    audit: { targetType: 'group', append: appendAudit },
    hooks: {
      // The codes as read: every role present, null when there is none.
      toWire: (wire) => ({
        ...wire,
        enrollment: {
          user: wire.enrollment?.user ?? null,
          advanced: wire.enrollment?.advanced ?? null,
          manager: wire.enrollment?.manager ?? null,
        },
      }),
      async beforeCreate({ tx, actor }, body) {
        // A manager's groups go to the manager's own category whatever is sent.
        const categoryId = actor.role === role.admin ? body.category : actor.categoryId;
        const cat = await tx
          .select({ id: categories.id })
          .from(categories)
          .where(eq(categories.id, categoryId))
          .limit(1);
        if (cat.length === 0)
          throw notFound('Category', 'category_not_found', { category: categoryId });
        await lockGroups(tx);
        await checkNameFree(tx, categoryId, body.name);
        const enrollment = normalizeEnrollment(body.enrollment) ?? null;
        if (enrollment) await checkCodesFree(tx, enrollment);
        return { id: randomUUID(), categoryId, enrollment };
      },
      async beforeUpdate({ tx, before }, body) {
        await lockGroups(tx);
        if (body.name !== undefined)
          await checkNameFree(tx, before.categoryId, body.name, before.id);
        const enrollment = normalizeEnrollment(body.enrollment);
        if (!enrollment) return {};
        const merged = { ...(before.enrollment ?? {}), ...enrollment };
        await checkCodesFree(tx, merged, before.id);
        return { enrollment: merged };
      },
      async beforeDelete({ tx, before }) {
        const id = before.id;
        const members = await usersIn(tx, 'groupId', id);
        if (members)
          throw new ApiError(
            'precondition_required',
            'Users still have this group as their main group',
            'group_has_users',
            { users: members },
          );
        const items = await itemsIn(tx, 'groupId', id);
        if (Object.values(items).some((n) => n > 0))
          throw new ApiError(
            'precondition_required',
            'Desktops, templates, media or deployments still belong to this group',
            'group_has_items',
            items,
          );
        const directories = await tx
          .select({ categoryId: ldapProviders.categoryId })
          .from(ldapProviders)
          .where(eq(ldapProviders.groupId, id));
        if (directories.length)
          throw new ApiError(
            'precondition_required',
            'An LDAP directory registers its new users into this group',
            'group_has_ldap_directory',
            { categories: directories.map((d) => d.categoryId) },
          );
        const signIns = await tx
          .select({ categoryId: oidcProviders.categoryId })
          .from(oidcProviders)
          .where(eq(oidcProviders.groupId, id));
        if (signIns.length)
          throw new ApiError(
            'precondition_required',
            'An OpenID Connect provider registers its new users into this group',
            'group_has_oidc_provider',
            { categories: signIns.map((d) => d.categoryId) },
          );
        const samlSignIns = await tx
          .select({ categoryId: samlProviders.categoryId })
          .from(samlProviders)
          .where(eq(samlProviders.groupId, id));
        if (samlSignIns.length)
          throw new ApiError(
            'precondition_required',
            'A SAML provider registers its new users into this group',
            'group_has_saml_provider',
            { categories: samlSignIns.map((d) => d.categoryId) },
          );
        await userWrites.leaveSecondaryGroup(tx, id);
        return {};
      },
    },
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
