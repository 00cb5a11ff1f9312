/**
 * The LDAP directory of a category (adminLdapProviders, admins only): its plain CRUD, and the
 * enabled directory of a category with its service account's password for the form login.
 *
 * The service account's password is write-only: a create must send it, an update keeps the stored
 * one unless it sends another; no answer, audit snapshot or log line carries it (the show answer
 * says only whether one is stored). One directory per category; its group belongs to its category.
 */
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminLdapProviderFromCreate,
  adminLdapProviderFromUpdate,
  adminLdapProviderReadToWire,
  categories,
  groups,
  ldapProviders,
  type AdminLdapProviderReadRow,
  type AdminLdapProviderRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import type {
  AdminLdapProvider,
  AdminLdapProviderCreate,
  AdminLdapProviderUpdate,
} from '../../../../src/generated/types.ts';
import { appendAudit } from './audit.ts';

/** An enabled directory as the login uses it (the service account's password included). */
export type LdapDirectory = AdminLdapProviderRow & { bindPassword: string };

/** The category exists and the group belongs to it. */
export async function checkCategoryAndGroup(tx: Executor, categoryId: string, groupId: string) {
  const [category] = await tx
    .select({ id: categories.id })
    .from(categories)
    .where(eq(categories.id, categoryId));
  if (!category)
    throw new ApiError('not_found', 'The category does not exist', 'not_found', {
      category: categoryId,
    });
  const [group] = await tx
    .select({ categoryId: groups.categoryId })
    .from(groups)
    .where(eq(groups.id, groupId));
  if (!group) throw new ApiError('not_found', 'The group does not exist', 'group_not_found');
  if (group.categoryId !== categoryId)
    throw new ApiError(
      'bad_request',
      'The group belongs to another category',
      'group_not_in_category',
      { group: groupId, category: categoryId },
    );
}

/** A category regex as an administrator writes it: one that compiles, or none. */
export function checkCategoryRegex(regex: string | null | undefined): void {
  if (!regex) return;
  try {
    new RegExp(regex);
  } catch {
    throw new ApiError(
      'bad_request',
      'The category regex is not a valid regular expression',
      'category_regex_invalid',
      null,
      { errors: { '/category_regex': 'category_regex_invalid' } },
    );
  }
}

/** The directories' plain CRUD, with the write-only password and the category's own group. */
export function ldapProvidersCrud(db: Db) {
  return crudService<
    'ldapProviders',
    AdminLdapProvider,
    AdminLdapProviderCreate,
    AdminLdapProviderUpdate
  >(db, {
    resource: 'adminLdapProviders',
    storage: 'ldapProviders',
    label: 'LDAP directory',
    toWire: (row) => adminLdapProviderReadToWire(row as AdminLdapProviderReadRow),
    fromCreate: adminLdapProviderFromCreate,
    fromUpdate: adminLdapProviderFromUpdate,
    orderBy: ['categoryId'],
    audit: { targetType: 'ldap_provider', append: appendAudit },
    conflict: (values) =>
      new ApiError('conflict', 'The category has a directory already', 'ldap_provider_exists', {
        category: values.categoryId ?? null,
      }),
    hooks: {
      async beforeCreate({ tx }, body) {
        await checkCategoryAndGroup(tx, body.category_id, body.group_id);
        checkCategoryRegex(body.category_regex);
        return { id: randomUUID(), label: body.label.trim(), bindPassword: body.bind_password };
      },
      async beforeUpdate({ tx, before }, body) {
        if (body.group_id !== undefined)
          await checkCategoryAndGroup(tx, before.categoryId, body.group_id);
        checkCategoryRegex(body.category_regex);
        return {
          ...(body.label === undefined ? {} : { label: body.label.trim() }),
          ...(body.bind_password === undefined ? {} : { bindPassword: body.bind_password }),
        };
      },
    },
  });
}

/** The enabled directory of a category, with its service account's password; else undefined. */
export async function enabledLdapDirectory(
  db: Db,
  categoryId: string,
): Promise<LdapDirectory | undefined> {
  const [row] = await db
    .select()
    .from(ldapProviders)
    .where(and(eq(ldapProviders.categoryId, categoryId), eq(ldapProviders.enabled, true)))
    .limit(1);
  if (!row?.bindPassword) return undefined;
  return { ...row, bindPassword: row.bindPassword };
}

/** The enabled directories at this address (the categories a sign-in there may guess). */
export async function ldapSiblings(db: Db, url: string): Promise<AdminLdapProviderRow[]> {
  return db
    .select()
    .from(ldapProviders)
    .where(and(eq(ldapProviders.url, url), eq(ldapProviders.enabled, true)))
    .orderBy(ldapProviders.categoryId);
}

/** The categories whose directory is enabled, with its label. */
export async function enabledLdapLabels(db: Db): Promise<{ categoryId: string; label: string }[]> {
  return db
    .select({ categoryId: ldapProviders.categoryId, label: ldapProviders.label })
    .from(ldapProviders)
    .where(eq(ldapProviders.enabled, true))
    .orderBy(ldapProviders.categoryId);
}
