/**
 * Role visibility: which roles may use which operation, see which field of a resource's answers and
 * be offered which action. The generated tables (x-roles, fields, x-actions) are the defaults; the
 * admin's config (`roles`, `fields`, `actions`, see schema/entities/role-visibility.schema.json)
 * merges over them. Declared here, below the plugins, so lib code (OpenAPI, routes) reads it
 * without importing the access plugin that loads and stores it. Everything here is pure.
 */
import type { Operation } from '../../../../src/generated/api.ts';
import { fields, type FieldMeta } from '../../../../src/generated/fields.ts';
import { resources } from '../../../../src/generated/resources.ts';
import {
  roles as allRoles,
  roleSets as generatedRoleSets,
} from '../../../../src/generated/roles.ts';
import { stateActions } from '../../../../src/generated/actions.ts';
import type {
  Role,
  RoleVisibilityCatalogueResource,
  RoleVisibilityConfig,
  RoleVisibilityEffective,
} from '../../../../src/generated/types.ts';

/** roleSets[resource][setName] = roles allowed. */
export type RoleSets = Record<string, Record<string, readonly Role[]>>;
export type { RoleVisibilityConfig };

export interface Access {
  /** The merged role sets in force now (read again after every change). */
  readonly roleSets: RoleSets;
  /** The config in force (the file's role-visibility part). */
  readonly config: RoleVisibilityConfig;
  /** Increases with every change applied in this process. */
  readonly version: number;
  /** Roles allowed on an operation now; null = public. */
  rolesFor(op: Pick<Operation, 'resource' | 'access' | 'roles'>): readonly Role[] | null;
  /** Field paths of a resource's answers the role does not see. */
  hiddenFields(resource: string, role: Role | null | undefined): readonly string[];
  /** The hidden action whose operation this is, when the role is refused it (see actionRefused). */
  refusedAction(
    op: Pick<Operation, 'resource' | 'name'>,
    role: Role | null | undefined,
  ): string | null;
  /** What the config leaves a role (GET /user/role-visibility). */
  effective(role: Role): RoleVisibilityEffective;
  /** Puts a new config in force in this process. */
  apply(config: RoleVisibilityConfig): void;
}

/** The generated role sets with a config's `roles` merged over them (a set is replaced whole). */
export function mergeRoleSets(base: RoleSets, override: RoleSets | undefined): RoleSets {
  const merged: RoleSets = {};
  for (const [resource, sets] of Object.entries(base)) merged[resource] = { ...sets };
  for (const [resource, sets] of Object.entries(override ?? {}))
    merged[resource] = { ...merged[resource], ...sets };
  return merged;
}

type Key = 'roles' | 'fields' | 'actions';

/** One part of a config as a plain table (resource -> name -> roles). */
export function tableOf(config: RoleVisibilityConfig, key: Key): RoleSets {
  const table: RoleSets = {};
  for (const [resource, entries] of Object.entries(config[key] ?? {})) {
    const named: Record<string, readonly Role[]> = {};
    for (const [name, roles] of Object.entries(entries ?? {})) if (roles) named[name] = roles;
    table[resource] = named;
  }
  return table;
}

const fieldTable = fields as Readonly<Record<string, readonly FieldMeta[]>>;
const machineTable = stateActions as Readonly<
  Record<string, { actions: Readonly<Record<string, { operation?: string }>> }>
>;

/** Field paths a resource's answers show: its show and list types, without hidden ones and its id. */
function fieldPaths(resource: string): string[] {
  const def = resources.find((r) => r.name === resource);
  if (!def) return [];
  const idField = (def.meta as { idField?: string }).idField ?? 'id';
  const types: (string | null)[] = [def.meta.types.show, def.meta.types.list];
  const paths = types.flatMap((type) =>
    (type ? (fieldTable[type] ?? []) : [])
      .filter((m) => !m.hidden && m.path !== idField)
      .map((m) => m.path),
  );
  return [...new Set(paths)];
}

/** Every resource the config may name: its role sets (defaults), fields and actions. */
export function roleVisibilityCatalogue(): RoleVisibilityCatalogueResource[] {
  const names = new Set([...Object.keys(generatedRoleSets), ...resources.map((r) => r.name)]);
  return [...names].sort().map((name) => ({
    name,
    sets: Object.fromEntries(
      Object.entries((generatedRoleSets as RoleSets)[name] ?? {}).map(([set, roles]) => [
        set,
        [...roles],
      ]),
    ),
    fields: fieldPaths(name),
    actions: Object.keys(machineTable[name]?.actions ?? {}),
  }));
}

export interface ConfigProblem {
  /** JSON pointer of the entry in the config */
  path: string;
  code: 'role_visibility_unknown_entry';
}

/** Entries naming a resource, role set, field or action the catalogue does not have. */
export function unknownEntries(
  config: RoleVisibilityConfig,
  catalogue: readonly RoleVisibilityCatalogueResource[] = roleVisibilityCatalogue(),
): ConfigProblem[] {
  const byName = new Map(catalogue.map((r) => [r.name, r]));
  const problems: ConfigProblem[] = [];
  const check = (
    key: 'roles' | 'fields' | 'actions',
    known: (r: RoleVisibilityCatalogueResource) => readonly string[],
  ) => {
    for (const [resource, entries] of Object.entries(tableOf(config, key))) {
      const found = byName.get(resource);
      for (const name of Object.keys(entries))
        if (!found || !known(found).includes(name))
          problems.push({
            path: `/${key}/${resource}/${name}`,
            code: 'role_visibility_unknown_entry',
          });
    }
  };
  check('roles', (r) => Object.keys(r.sets));
  check('fields', (r) => r.fields);
  check('actions', (r) => r.actions);
  return problems;
}

/** The config without entries the catalogue does not know (a file written for another version). */
export function knownPart(config: RoleVisibilityConfig): RoleVisibilityConfig {
  const unknown = new Set(unknownEntries(config).map((p) => p.path));
  const keep = (key: 'roles' | 'fields' | 'actions') =>
    Object.fromEntries(
      Object.entries(tableOf(config, key)).map(([resource, entries]) => [
        resource,
        Object.fromEntries(
          Object.entries(entries)
            .filter(([name]) => !unknown.has(`/${key}/${resource}/${name}`))
            .map(([name, roles]) => [name, [...roles]]),
        ),
      ]),
    );
  return { roles: keep('roles'), fields: keep('fields'), actions: keep('actions') };
}

/** Operations a screen needs (list, details, forms): hiding an action never refuses them. */
const SCREEN_OPERATIONS = new Set(['list', 'show', 'create', 'update']);

/**
 * The action an operation belongs to when hiding it refuses the operation: the one x-actions
 * action of the resource that calls it (an operation several actions share, or a screen's own
 * list/show/create/update, stays allowed: hiding such an action only removes it from the screens).
 */
export function soleActionOf(resource: string, operation: string): string | null {
  if (SCREEN_OPERATIONS.has(operation)) return null;
  const users = Object.entries(machineTable[resource]?.actions ?? {}).filter(
    ([, def]) => def.operation === operation,
  );
  return users.length === 1 ? (users[0]?.[0] ?? null) : null;
}

/**
 * The lists of other resources' records each resource's answers embed (a deployment's desktops):
 * parent resource -> the embedded resource and the path of its list (x-live.parent).
 */
const embeddedLists: ReadonlyMap<string, readonly { child: string; path: string }[]> = (() => {
  const map = new Map<string, { child: string; path: string }[]>();
  for (const resource of resources) {
    const parent = (resource.meta.live as { parent?: { resource: string; path: string } } | null)
      ?.parent;
    if (!parent) continue;
    const list = map.get(parent.resource) ?? [];
    list.push({ child: resource.name, path: parent.path });
    map.set(parent.resource, list);
  }
  return map;
})();

/** An access table over a config (the generated defaults with the config merged in). */
export function createAccess(initial: RoleVisibilityConfig): Access {
  let config = initial;
  let merged = mergeRoleSets(generatedRoleSets as RoleSets, tableOf(config, 'roles'));
  let version = 0;
  const hidden = (key: 'fields' | 'actions', resource: string, role: Role | null | undefined) =>
    Object.entries(tableOf(config, key)[resource] ?? {})
      .filter(([, roles]) => !role || !roles.includes(role))
      .map(([name]) => name);
  return {
    get roleSets() {
      return merged;
    },
    get config() {
      return config;
    },
    get version() {
      return version;
    },
    rolesFor(op) {
      if (op.access === 'public') return null;
      if (op.access === 'token') return allRoles;
      return merged[op.resource]?.[op.access] ?? op.roles ?? [];
    },
    hiddenFields: (resource, role) => [
      ...hidden('fields', resource, role),
      // Records of another resource embedded in this one's answers lose what that one hides.
      ...(embeddedLists.get(resource) ?? []).flatMap(({ child, path }) =>
        hidden('fields', child, role).map((field) => `${path}.${field}`),
      ),
    ],
    refusedAction(op, role) {
      const action = soleActionOf(op.resource, op.name);
      const roles = action ? tableOf(config, 'actions')[op.resource]?.[action] : undefined;
      return action && roles && (!role || !roles.includes(role)) ? action : null;
    },
    effective(role) {
      const sets: Record<string, string[]> = {};
      for (const [resource, named] of Object.entries(merged))
        sets[resource] = Object.entries(named)
          .filter(([, roles]) => roles.includes(role))
          .map(([set]) => set);
      const collect = (key: 'fields' | 'actions') =>
        Object.fromEntries(
          Object.keys(config[key] ?? {})
            .map((resource) => [resource, hidden(key, resource, role)] as const)
            .filter(([, names]) => names.length > 0),
        );
      return {
        role,
        sets,
        hiddenFields: collect('fields'),
        hiddenActions: collect('actions'),
        version,
      };
    },
    apply(next) {
      config = next;
      merged = mergeRoleSets(generatedRoleSets as RoleSets, tableOf(next, 'roles'));
      version += 1;
    },
  };
}

function deletePath(target: unknown, keys: readonly string[]): boolean {
  // A list on the way (embedded records): the path is removed from every item.
  if (Array.isArray(target))
    return target.map((item) => deletePath(item, keys)).some((removed) => removed);
  if (target === null || typeof target !== 'object') return false;
  const node = target as Record<string, unknown>;
  const [head, ...rest] = keys;
  if (head === undefined || !(head in node)) return false;
  if (rest.length === 0) return Reflect.deleteProperty(node, head);
  return deletePath(node[head], rest);
}

/**
 * Removes the hidden field paths from an answer in place: the object itself, or every item of an
 * array answer; a path through a list (`desktops.user_name`) is removed from each of its items.
 * True when anything was removed.
 */
export function stripFields(value: unknown, paths: readonly string[]): boolean {
  if (paths.length === 0) return false;
  const items = Array.isArray(value) ? value : [value];
  let removed = false;
  for (const item of items)
    for (const path of paths) if (deletePath(item, path.split('.'))) removed = true;
  return removed;
}
