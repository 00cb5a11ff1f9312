/**
 * The SAML identity provider of a category (adminSamlProviders, admins only): its plain CRUD, and
 * the enabled providers with our private key for the sign-in.
 *
 * The identity provider is described by its metadata: pasted, or read from its address on save
 * (a create without metadata reads the address; an update reads it again when it sends a new
 * address without metadata). Metadata that names no entity id, redirect sign-on address or signing
 * certificate is refused (400 saml_metadata_invalid), as is an address that cannot be read (400
 * saml_metadata_unavailable); the entity id and whether it offers single logout are kept beside it.
 * Our private keys (signing, and decrypting the assertions) are write-only: a create may send them,
 * an update keeps the stored ones unless it sends others; no answer, audit snapshot or log line
 * carries them (the show answer says only whether each is stored). One provider per category; its group belongs to its category.
 */
import { createPrivateKey, randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  adminSamlProviderFromCreate,
  adminSamlProviderFromUpdate,
  adminSamlProviderReadToWire,
  samlProviders,
  type AdminSamlProviderInsert,
  type AdminSamlProviderReadRow,
  type AdminSamlProviderRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import {
  fetchIdpMetadata,
  readIdpMetadata,
  SamlMetadataError,
  SamlUnavailableError,
} from '../../platform/auth/saml.ts';
import type {
  AdminSamlProvider,
  AdminSamlProviderCreate,
  AdminSamlProviderUpdate,
} from '../../../../src/generated/types.ts';
import { appendAudit } from './audit.ts';
import { checkCategoryAndGroup, checkCategoryRegex } from './ldap-providers.ts';

/** A provider as the sign-in uses it (our private key included). */
export type SamlProviderConfig = AdminSamlProviderRow;

const metadataInvalid = (reason: string) =>
  new ApiError('bad_request', reason, 'saml_metadata_invalid', { field: 'idp_metadata' });

/** The metadata to store and what it says: the pasted one, else the one read from its address. */
async function metadataOf(
  xml: string | null | undefined,
  url: string | null | undefined,
): Promise<Partial<AdminSamlProviderInsert>> {
  let text = xml?.trim();
  try {
    if (!text && url) text = (await fetchIdpMetadata(url)).trim();
    if (!text) throw metadataInvalid('idp_metadata or idp_metadata_url is required');
    const summary = await readIdpMetadata(text);
    return { idpMetadata: text, idpEntityId: summary.entityId, idpSlo: summary.singleLogout };
  } catch (error) {
    if (error instanceof SamlMetadataError) throw metadataInvalid(error.message);
    if (error instanceof SamlUnavailableError)
      throw new ApiError('bad_request', error.message, 'saml_metadata_unavailable', {
        field: 'idp_metadata_url',
      });
    throw error;
  }
}

/** A private key in PEM that Node can use, trimmed (the field named in a refusal). */
function privateKeyOf(pem: string, field = 'sp_private_key'): string {
  try {
    createPrivateKey(pem);
  } catch {
    throw new ApiError('bad_request', 'The private key cannot be read', 'saml_pem_format', {
      field,
    });
  }
  return pem.trim();
}

/** The write-only keys of a create or update body, as columns (a key not sent is not changed). */
function keysOf(body: {
  sp_private_key?: string;
  sp_encryption_private_key?: string;
}): Partial<AdminSamlProviderInsert> {
  return {
    ...(body.sp_private_key === undefined
      ? {}
      : { spPrivateKey: privateKeyOf(body.sp_private_key) }),
    ...(body.sp_encryption_private_key === undefined
      ? {}
      : {
          spEncryptionPrivateKey: privateKeyOf(
            body.sp_encryption_private_key,
            'sp_encryption_private_key',
          ),
        }),
  };
}

/** The providers' plain CRUD, with the metadata read on save and the write-only key. */
export function samlProvidersCrud(db: Db) {
  return crudService<
    'samlProviders',
    AdminSamlProvider,
    AdminSamlProviderCreate,
    AdminSamlProviderUpdate,
    Partial<AdminSamlProviderInsert>
  >(db, {
    resource: 'adminSamlProviders',
    storage: 'samlProviders',
    label: 'SAML provider',
    toWire: (row) => adminSamlProviderReadToWire(row as AdminSamlProviderReadRow),
    fromCreate: adminSamlProviderFromCreate,
    fromUpdate: adminSamlProviderFromUpdate,
    orderBy: ['categoryId'],
    audit: { targetType: 'saml_provider', append: appendAudit },
    conflict: (values) =>
      new ApiError('conflict', 'The category has a SAML provider already', 'saml_provider_exists', {
        category: values.categoryId ?? null,
      }),
    hooks: {
      // the metadata address is read before the transaction opens
      prepareCreate: async (_actor, body) => metadataOf(body.idp_metadata, body.idp_metadata_url),
      async beforeCreate({ tx, prepared }, body) {
        await checkCategoryAndGroup(tx, body.category_id, body.group_id);
        checkCategoryRegex(body.category_regex);
        return {
          ...prepared,
          id: randomUUID(),
          label: body.label.trim(),
          ...keysOf(body),
        };
      },
      async beforeUpdate({ tx, before }, body) {
        if (body.group_id !== undefined)
          await checkCategoryAndGroup(tx, before.categoryId, body.group_id);
        checkCategoryRegex(body.category_regex);
        // new metadata pasted, else a new address read; otherwise the stored metadata stays
        const pasted = body.idp_metadata?.trim() ? body.idp_metadata : undefined;
        const newAddress =
          !!body.idp_metadata_url && body.idp_metadata_url !== before.idpMetadataUrl;
        const metadata =
          pasted !== undefined || newAddress
            ? await metadataOf(pasted, body.idp_metadata_url)
            : { idpMetadata: before.idpMetadata };
        return {
          ...metadata,
          ...(body.label === undefined ? {} : { label: body.label.trim() }),
          ...keysOf(body),
        };
      },
    },
  });
}

/** The enabled provider of that id; else undefined. */
export async function enabledSamlProvider(
  db: Db,
  id: string,
): Promise<SamlProviderConfig | undefined> {
  const [row] = await db
    .select()
    .from(samlProviders)
    .where(and(eq(samlProviders.id, id), eq(samlProviders.enabled, true)))
    .limit(1);
  return row;
}

/** The enabled providers of an identity provider (whatever our entity), by category. */
export async function samlProvidersOfIdp(
  db: Db,
  idpEntityId: string,
): Promise<SamlProviderConfig[]> {
  return db
    .select()
    .from(samlProviders)
    .where(and(eq(samlProviders.idpEntityId, idpEntityId), eq(samlProviders.enabled, true)))
    .orderBy(samlProviders.categoryId);
}

/**
 * The enabled providers of the same identity provider and service provider entity (the ones a
 * category attribute chooses among), by category.
 */
export async function samlSiblings(
  db: Db,
  idpEntityId: string,
  spEntityId: string,
): Promise<SamlProviderConfig[]> {
  return db
    .select()
    .from(samlProviders)
    .where(
      and(
        eq(samlProviders.idpEntityId, idpEntityId),
        eq(samlProviders.spEntityId, spEntityId),
        eq(samlProviders.enabled, true),
      ),
    )
    .orderBy(samlProviders.categoryId);
}

/** The enabled provider of a category; else undefined. */
export async function categorySamlProvider(
  db: Db,
  categoryId: string,
): Promise<SamlProviderConfig | undefined> {
  const [row] = await db
    .select()
    .from(samlProviders)
    .where(and(eq(samlProviders.categoryId, categoryId), eq(samlProviders.enabled, true)))
    .limit(1);
  return row;
}

/** The enabled providers with their label and icon (the login page's buttons). */
export async function enabledSamlButtons(
  db: Db,
): Promise<{ id: string; categoryId: string; label: string; icon: string | null }[]> {
  return db
    .select({
      id: samlProviders.id,
      categoryId: samlProviders.categoryId,
      label: samlProviders.label,
      icon: samlProviders.icon,
    })
    .from(samlProviders)
    .where(eq(samlProviders.enabled, true))
    .orderBy(samlProviders.categoryId);
}
