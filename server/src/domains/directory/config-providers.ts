/**
 * Login providers declared in the config file (PORTAL_CONFIG, else config/portal.json), under its
 * `providers` key: `ldap`, `oidc` and `saml` lists whose entries are the bodies the administration
 * area's create takes (adminLdapProviders, adminOidcProviders, adminSamlProviders).
 *
 * - A secret (`bind_password`, `client_secret`, `sp_private_key`, `sp_encryption_private_key`) is
 *   never written in the file: it is `{ "env": "NAME" }` (an environment variable) or
 *   `{ "file": "path" }` (a file's content, a relative path read from the config file's folder).
 *   A secret written in plain is refused.
 * - At boot, after the seed, each entry is written through the same service as the administration
 *   area, as the actor `config` (so the audit log names it): the category's provider of that kind
 *   is updated when it has one, else created. The file overrides: an edit made in the
 *   administration area to such a provider lasts until the next boot. Secrets stay write-only as
 *   for any provider: no answer, audit entry or log line carries them.
 * - A file of the wrong shape, or a secret that cannot be read, stops the boot with a message that
 *   names the entry (never the secret). An entry the service refuses (a category or group that does
 *   not exist, metadata that cannot be read) is logged and skipped: the other providers still load.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../../platform/db/client.ts';
import type { Actor } from '../../platform/auth/actor.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { role } from '../../../../src/generated/policy.ts';
import {
  AdminLdapProviderCreate,
  AdminOidcProviderCreate,
  AdminSamlProviderCreate,
} from '../../../../src/generated/validators.js';
import type {
  AdminLdapProviderCreate as AdminLdapProviderCreateBody,
  AdminOidcProviderCreate as AdminOidcProviderCreateBody,
  AdminSamlProviderCreate as AdminSamlProviderCreateBody,
} from '../../../../src/generated/types.ts';
import { ldapProvidersCrud } from './ldap-providers.ts';
import { oidcProvidersCrud } from './oidc-providers.ts';
import { samlProvidersCrud } from './saml-providers.ts';

/** Who writes the config file's providers, as the audit log shows it. */
export const CONFIG_ACTOR: Actor = {
  id: 'config',
  name: 'config file',
  role: role.admin,
  categoryId: '',
};

/** A generated validator: whether the data is a T, and what is wrong otherwise. */
interface Validator<T> {
  (data: unknown): data is T;
  errors?: { instancePath: string; message?: string }[] | null;
}

const validators = {
  ldap: AdminLdapProviderCreate as Validator<AdminLdapProviderCreateBody>,
  oidc: AdminOidcProviderCreate as Validator<AdminOidcProviderCreateBody>,
  saml: AdminSamlProviderCreate as Validator<AdminSamlProviderCreateBody>,
};

/** Each kind's secret fields. */
const SECRETS = {
  ldap: ['bind_password'],
  oidc: ['client_secret'],
  saml: ['sp_private_key', 'sp_encryption_private_key'],
} as const;

type Kind = keyof typeof SECRETS;
const isKind = (kind: string): kind is Kind => kind in SECRETS;

/** One provider of the file, its secret read; `at` is where it is in the file (`providers.saml[0]`). */
export type ConfigProvider =
  | { kind: 'ldap'; at: string; body: AdminLdapProviderCreateBody }
  | { kind: 'oidc'; at: string; body: AdminOidcProviderCreateBody }
  | { kind: 'saml'; at: string; body: AdminSamlProviderCreateBody };

/** The entry as its kind's create body, or why it is not one. */
function typed(kind: Kind, at: string, body: unknown): ConfigProvider | string {
  const validate = validators[kind];
  if (kind === 'ldap' && validators.ldap(body)) return { kind, at, body };
  if (kind === 'oidc' && validators.oidc(body)) return { kind, at, body };
  if (kind === 'saml' && validators.saml(body)) return { kind, at, body };
  return (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`).join('; ');
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A secret reference read: an environment variable or a file. */
function secretOf(
  reference: unknown,
  at: string,
  env: NodeJS.ProcessEnv,
  folder: string,
): string | undefined {
  if (reference === undefined) return undefined;
  if (isObject(reference) && Object.keys(reference).length === 1) {
    if (typeof reference.env === 'string') {
      const value = env[reference.env];
      if (!value) throw new Error(`${at}: the environment variable ${reference.env} is not set`);
      return value;
    }
    if (typeof reference.file === 'string') {
      try {
        return readFileSync(resolve(folder, reference.file), 'utf8').trim();
      } catch {
        throw new Error(`${at}: the file ${reference.file} cannot be read`);
      }
    }
  }
  throw new Error(`${at}: a secret is { "env": "NAME" } or { "file": "path" }, never written here`);
}

/**
 * The providers of a parsed config file (its `providers` key), validated, their secrets read.
 * `path` is the file's own path (relative secret files are read from its folder).
 */
export function readConfigProviders(
  file: Record<string, unknown>,
  path: string,
  env: NodeJS.ProcessEnv = process.env,
): ConfigProvider[] {
  const providers = file.providers;
  if (providers === undefined) return [];
  const problem = (message: string) => new Error(`invalid config file ${path}: ${message}`);
  if (!isObject(providers)) throw problem('providers is not an object');
  const found: ConfigProvider[] = [];
  for (const [kind, entries] of Object.entries(providers)) {
    if (!isKind(kind)) throw problem(`providers.${kind}: the kinds are ldap, oidc and saml`);
    if (!Array.isArray(entries)) throw problem(`providers.${kind} is not a list`);
    entries.forEach((entry: unknown, index) => {
      const at = `providers.${kind}[${index}]`;
      if (!isObject(entry)) throw problem(`${at} is not an object`);
      const secrets: Record<string, string> = {};
      for (const secret of SECRETS[kind]) {
        let value: string | undefined;
        try {
          value = secretOf(entry[secret], `${at}.${secret}`, env, dirname(path));
        } catch (error) {
          throw problem((error as Error).message);
        }
        if (value !== undefined) secrets[secret] = value;
      }
      const provider = typed(kind, at, { ...entry, ...secrets });
      if (typeof provider === 'string') throw problem(`${at}: ${provider}`);
      found.push(provider);
    });
  }
  return found;
}

/** The config file's providers as JSON (no file, or no `providers` key: none). */
export function readConfigProvidersFile(path: string | undefined): ConfigProvider[] {
  if (!path) return [];
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const parsed: unknown = JSON.parse(text);
  if (!isObject(parsed)) throw new Error(`invalid config file ${path}: not a JSON object`);
  return readConfigProviders(parsed, path);
}

/** What the three services have in common: a list, a create and an update. */
interface ProviderService<Create> {
  list(actor: Actor): Promise<{ id: string; category_id: string }[]>;
  create(actor: Actor, body: Create): Promise<{ id: string }>;
  update(actor: Actor, id: string, body: Omit<Create, 'category_id'>): Promise<void>;
}

/** The category's provider updated with the body when it has one, else created from it. */
async function upsert<Create extends { category_id: string }>(
  service: ProviderService<Create>,
  body: Create,
): Promise<void> {
  const current = (await service.list(CONFIG_ACTOR)).find(
    (p) => p.category_id === body.category_id,
  );
  if (!current) {
    await service.create(CONFIG_ACTOR, body);
    return;
  }
  const { category_id: _category, ...update } = body;
  await service.update(CONFIG_ACTOR, current.id, update);
}

/**
 * Writes each provider over its category's provider of that kind (or creates it); an entry the
 * service refuses is logged and skipped. Resolves to how many were written.
 */
export async function applyConfigProviders(
  db: Db,
  providers: ConfigProvider[],
  log: FastifyBaseLogger,
): Promise<number> {
  let written = 0;
  for (const provider of providers) {
    try {
      if (provider.kind === 'ldap') await upsert(ldapProvidersCrud(db), provider.body);
      else if (provider.kind === 'oidc') await upsert(oidcProvidersCrud(db), provider.body);
      else await upsert(samlProvidersCrud(db), provider.body);
      written += 1;
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      log.error(
        { provider: provider.at, category: provider.body.category_id, reason: error.message },
        'a login provider of the config file was not loaded',
      );
    }
  }
  return written;
}
