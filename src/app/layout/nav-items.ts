/**
 * The navbar, derived from the generated menu (`src/generated/menu.ts`, from the resources' menu
 * and the schema's `x-menu`). Product rule: every entry leads to a working screen or is not shown,
 * so an entry is kept only when
 * - the role is in the entry's roles and may use the entry's operation (generated roles, with the
 *   admin's role visibility over them: a resource entry follows its `view` set),
 * - neither the entry nor its operation is planned (the server answers 501 for planned ones),
 * - a resource entry has a list route and a list operation (no operation = no generic screen yet),
 * - its `visibleIf` config flag is set and its `hrefFrom` config value is a usable URL.
 * Entries nest by `parent`: a parent whose children survive becomes a group, the parent's own
 * route first; children of a hidden parent take its place. Nothing here names a resource.
 */
import { operations, type Operation, type OperationKey } from '@/generated/api';
import { menu, type MenuEntry } from '@/generated/menu';
import { resourceOf } from '@/generated/resources';
import type { Role, UserConfig } from '@/generated/types';
import { inRoleSet, operationAllowed } from '@/lib/role-visibility';
import { canAccess } from '@/providers/access-control-provider';

interface NavBase {
  /** The menu key (React key, `data-nav-key`). */
  key: string;
  /** i18n key of the label: `common:nav.<key>` (`common:nav.overview` for a group's own route). */
  labelKey: string;
  /** Semantic icon name (see `src/components/icon.tsx`); null when the schema gives none. */
  icon: string | null;
}

export type NavEntry =
  | (NavBase & {
      kind: 'route';
      path: string;
      /** Path prefixes of every page of the entry's resource (list, create, edit, show). */
      match: readonly string[];
    })
  | (NavBase & { kind: 'link'; href: string; external: boolean })
  | (NavBase & { kind: 'download'; operation: OperationKey })
  | (NavBase & { kind: 'logout' })
  | (NavBase & { kind: 'group'; children: NavEntry[] });

/** The tables the navbar is built from (the generated ones unless a test passes its own). */
export interface NavSource {
  menu: readonly MenuEntry[];
  operations: Readonly<Record<string, Operation>>;
}

const GENERATED: NavSource = {
  menu,
  operations: operations as Readonly<Record<string, Operation>>,
};

/** The label key of a menu entry. */
export function navLabelKey(key: string): string {
  return `common:nav.${key}`;
}
/** The label of a group's own route (a route parent, shown as the group's first child). */
export const GROUP_OWN_ROUTE_LABEL = 'common:nav.overview';

/** Absolute http(s) URLs and same-origin absolute paths; anything else (`javascript:`...) is dropped. */
function usableHref(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const href = value.trim();
  return /^https?:\/\/[^\s]+$/i.test(href) || /^\/(?!\/)\S*$/.test(href) ? href : null;
}

function configValue(config: UserConfig | null, key: keyof UserConfig | null): unknown {
  return key ? (config?.[key] ?? null) : null;
}

/** Whether the role may use the entry now (roles, planned, operation, config flag). */
function isUsable(entry: MenuEntry, role: Role, config: UserConfig | null, source: NavSource) {
  if (entry.planned) return false;
  if (entry.roles && entry.kind === 'resource' && !inRoleSet(role, entry.key, 'view', entry.roles))
    return false;
  if (entry.roles && entry.kind !== 'resource' && !entry.roles.includes(role)) return false;
  if (entry.visibleIf && !configValue(config, entry.visibleIf)) return false;
  if (entry.operation === null) return entry.kind !== 'resource' && entry.kind !== 'download';
  const op = source.operations[entry.operation];
  if (!op || op.planned) return false;
  if (!operationAllowed(op, role)) return false;
  return canAccess(role, op.resource, op.name);
}

/** The static prefixes of a resource entry's pages (`/recyclebin/:id` -> `/recyclebin`). */
function routePrefixes(entry: MenuEntry, path: string): string[] {
  const resource = resourceOf(entry.key);
  const routes = resource ? [resource.list, resource.create, resource.edit, resource.show] : [];
  const prefixes = routes.flatMap((route) => (route ? [route.split('/:')[0] ?? route] : []));
  return [...new Set([path, ...prefixes.filter((prefix) => prefix.length > 1)])];
}

/** Whether a location path is one of a route entry's pages. */
export function isEntryActive(entry: { match: readonly string[] }, pathname: string): boolean {
  return entry.match.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/** The leaf for a usable entry, or null when it has nothing to lead to. */
function toLeaf(entry: MenuEntry, config: UserConfig | null): NavEntry | null {
  const base = { key: entry.key, labelKey: navLabelKey(entry.key), icon: entry.icon };
  switch (entry.kind) {
    case 'resource':
      return entry.path
        ? { ...base, kind: 'route', path: entry.path, match: routePrefixes(entry, entry.path) }
        : null;
    case 'link': {
      const href = usableHref(entry.href ?? configValue(config, entry.hrefFrom));
      return href ? { ...base, kind: 'link', href, external: entry.external } : null;
    }
    case 'download':
      return entry.operation ? { ...base, kind: 'download', operation: entry.operation } : null;
    case 'logout':
      return { ...base, kind: 'logout' };
    case 'group':
      // A heading only: its children make it (see buildNavEntries).
      return null;
  }
}

/** Builds the navbar for a role and the user config, in menu order. */
export function buildNavEntries(
  role: Role,
  config: UserConfig | null,
  source: NavSource = GENERATED,
): NavEntry[] {
  const keys = new Set(source.menu.map((entry) => entry.key));
  // An entry naming a parent the menu does not have sits at the top level.
  const parentOf = (entry: MenuEntry): string | null =>
    entry.parent !== null && entry.parent !== entry.key && keys.has(entry.parent)
      ? entry.parent
      : null;

  // `ancestors` stops a malformed menu (a key repeated along its own parent chain) from looping.
  const level = (parent: string | null, ancestors: ReadonlySet<string>): NavEntry[] =>
    source.menu
      .filter((entry) => parentOf(entry) === parent && !ancestors.has(entry.key))
      .flatMap((entry): NavEntry[] => {
        const self = isUsable(entry, role, config, source) ? toLeaf(entry, config) : null;
        const children = level(entry.key, new Set([...ancestors, entry.key]));
        if (!children.length) return self ? [self] : [];
        // A heading of its own (kind group) gathers its children while its roles allow it.
        if (entry.kind === 'group')
          return isUsable(entry, role, config, source)
            ? [
                {
                  key: entry.key,
                  labelKey: navLabelKey(entry.key),
                  icon: entry.icon,
                  kind: 'group',
                  children,
                },
              ]
            : [];
        if (!self) return children;
        return [
          {
            key: entry.key,
            labelKey: navLabelKey(entry.key),
            icon: entry.icon,
            kind: 'group',
            children: [
              self.kind === 'route' ? { ...self, labelKey: GROUP_OWN_ROUTE_LABEL } : self,
              ...children,
            ],
          },
        ];
      });

  return level(null, new Set());
}
