/**
 * Pure edits of a role-visibility config for the roleMatrix widget: which roles a role set, a
 * field or an action has now (the config's entry, else its default), and the config after one
 * role is ticked or cleared. An entry equal to its default is dropped, so the file only holds what
 * the admin changed.
 */
import { roles as allRoles } from '@/generated/roles';
import type {
  Role,
  RoleVisibilityCatalogueResource,
  RoleVisibilityConfig,
} from '@/generated/types';

export type MatrixPart = 'roles' | 'fields' | 'actions';
type Table = Record<string, Record<string, Role[]>>;

/** The roles an entry starts with: a set's generated roles; every role for a field or an action. */
export function defaultRoles(
  catalogue: RoleVisibilityCatalogueResource,
  part: MatrixPart,
  name: string,
): readonly Role[] {
  return part === 'roles' ? (catalogue.sets[name] ?? []) : allRoles;
}

/** The roles an entry has now. */
export function entryRoles(
  config: RoleVisibilityConfig,
  catalogue: RoleVisibilityCatalogueResource,
  part: MatrixPart,
  name: string,
): readonly Role[] {
  return config[part]?.[catalogue.name]?.[name] ?? defaultRoles(catalogue, part, name);
}

const sameRoles = (a: readonly Role[], b: readonly Role[]) =>
  a.length === b.length && a.every((role) => b.includes(role));

/** The config with one role ticked (`on`) or cleared for an entry; a new object, never a mutation. */
export function toggleRole(
  config: RoleVisibilityConfig,
  catalogue: RoleVisibilityCatalogueResource,
  part: MatrixPart,
  name: string,
  role: Role,
  on: boolean,
): RoleVisibilityConfig {
  const current = entryRoles(config, catalogue, part, name);
  // Kept in the generated order of the roles.
  const next = allRoles.filter((r) => (r === role ? on : current.includes(r)));
  const table: Table = {};
  for (const [resource, entries] of Object.entries(config[part] ?? {})) {
    const copy: Record<string, Role[]> = {};
    for (const [entry, roles] of Object.entries(entries ?? {})) if (roles) copy[entry] = roles;
    table[resource] = copy;
  }
  const entries = { ...(table[catalogue.name] ?? {}) };
  if (sameRoles(next, defaultRoles(catalogue, part, name))) Reflect.deleteProperty(entries, name);
  else entries[name] = next;
  if (Object.keys(entries).length > 0) table[catalogue.name] = entries;
  else Reflect.deleteProperty(table, catalogue.name);
  const result: RoleVisibilityConfig = { ...config };
  if (Object.keys(table).length > 0) result[part] = table;
  else Reflect.deleteProperty(result, part);
  return result;
}

/** Whether a resource matches the search text (its name, label, fields or actions). */
export function matchesSearch(
  catalogue: RoleVisibilityCatalogueResource,
  label: string,
  search: string,
): boolean {
  const text = search.trim().toLowerCase();
  if (!text) return true;
  return [catalogue.name, label, ...catalogue.fields, ...catalogue.actions].some((value) =>
    value.toLowerCase().includes(text),
  );
}

/** How many entries of a resource the config changes (shown beside its name). */
export function changedCount(config: RoleVisibilityConfig, resource: string): number {
  return (['roles', 'fields', 'actions'] as const).reduce(
    (sum, part) => sum + Object.keys(config[part]?.[resource] ?? {}).length,
    0,
  );
}
