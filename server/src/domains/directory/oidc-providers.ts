/**
 * The OpenID Connect provider of a category (adminOidcProviders, admins only): its plain CRUD, and
 * the enabled provider of a category with its client secret for the sign-in.
 *
 * The client secret is write-only: a create must send it, an update keeps the stored one unless it
 * sends another; no answer, audit snapshot or log line carries it (the show answer says only
 * whether one is stored). One provider per category; its group belongs to its category.
 */
import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminOidcProviderFromCreate,
  adminOidcProviderFromUpdate,
  adminOidcProviderReadToWire,
  oidcProviders,
  type AdminOidcProviderReadRow,
  type AdminOidcProviderRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import type {
  AdminOidcProvider,
  AdminOidcProviderCreate,
  AdminOidcProviderUpdate,
} from '../../../../src/generated/types.ts';
import { appendAudit } from './audit.ts';
import { checkCategoryAndGroup, checkCategoryRegex } from './ldap-providers.ts';

/** An enabled provider as the sign-in uses it (the client secret included). */
export type OidcIssuerConfig = AdminOidcProviderRow & { clientSecret: string };

/** The issuer as configured, without a trailing slash (discovery appends its well-known path). */
const issuerOf = (issuer: string) => issuer.trim().replace(/\/+$/, '');

/** The providers' plain CRUD, with the write-only secret and the category's own group. */
export function oidcProvidersCrud(db: Db) {
  return crudService<
    'oidcProviders',
    AdminOidcProvider,
    AdminOidcProviderCreate,
    AdminOidcProviderUpdate
  >(db, {
    resource: 'adminOidcProviders',
    storage: 'oidcProviders',
    label: 'OpenID Connect provider',
    toWire: (row) => adminOidcProviderReadToWire(row as AdminOidcProviderReadRow),
    fromCreate: adminOidcProviderFromCreate,
    fromUpdate: adminOidcProviderFromUpdate,
    orderBy: ['categoryId'],
    audit: { targetType: 'oidc_provider', append: appendAudit },
    conflict: (values) =>
      new ApiError(
        'conflict',
        'The category has an OpenID Connect provider already',
        'oidc_provider_exists',
        { category: values.categoryId ?? null },
      ),
    hooks: {
      async beforeCreate({ tx }, body) {
        await checkCategoryAndGroup(tx, body.category_id, body.group_id);
        checkCategoryRegex(body.category_regex);
        return {
          id: randomUUID(),
          label: body.label.trim(),
          issuer: issuerOf(body.issuer),
          clientSecret: body.client_secret,
        };
      },
      async beforeUpdate({ tx, before }, body) {
        if (body.group_id !== undefined)
          await checkCategoryAndGroup(tx, before.categoryId, body.group_id);
        checkCategoryRegex(body.category_regex);
        return {
          ...(body.label === undefined ? {} : { label: body.label.trim() }),
          ...(body.issuer === undefined ? {} : { issuer: issuerOf(body.issuer) }),
          ...(body.client_secret === undefined ? {} : { clientSecret: body.client_secret }),
        };
      },
    },
  });
}

/** The enabled provider of a category, with its client secret; else undefined. */
export async function enabledOidcProvider(
  db: Db,
  categoryId: string,
): Promise<OidcIssuerConfig | undefined> {
  const [row] = await db
    .select()
    .from(oidcProviders)
    .where(and(eq(oidcProviders.categoryId, categoryId), eq(oidcProviders.enabled, true)))
    .limit(1);
  if (!row?.clientSecret) return undefined;
  return { ...row, clientSecret: row.clientSecret };
}

/** The enabled providers of this issuer and client (the categories a sign-in there may guess). */
export async function oidcSiblings(
  db: Db,
  issuer: string,
  clientId: string,
): Promise<AdminOidcProviderRow[]> {
  return db
    .select()
    .from(oidcProviders)
    .where(
      and(
        eq(oidcProviders.issuer, issuer),
        eq(oidcProviders.clientId, clientId),
        eq(oidcProviders.enabled, true),
      ),
    )
    .orderBy(oidcProviders.categoryId);
}

/** The categories whose provider is enabled, with its label and icon (the login page's buttons). */
export async function enabledOidcButtons(
  db: Db,
): Promise<{ categoryId: string; label: string; icon: string | null }[]> {
  return db
    .select({
      categoryId: oidcProviders.categoryId,
      label: oidcProviders.label,
      icon: oidcProviders.icon,
    })
    .from(oidcProviders)
    .where(eq(oidcProviders.enabled, true))
    .orderBy(oidcProviders.categoryId);
}
