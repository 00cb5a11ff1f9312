/**
 * Sharing lists (`allowed`) of templates and media: who an item is shared with, saving a new list,
 * and the search that finds users, groups, categories, roles and items to share with.
 *
 * Who may read or change an item's lists: whoever manages the item (an admin, its owner, a manager
 * of its owner's category whose owner is not an admin); anybody else gets 403 and nothing changes.
 *
 * A list is `false` (not used), `[]` (everyone of the scope: every role or category, or for groups
 * and users everybody of the item's category) or ids. Every id a saved list names must exist (404)
 * and be one the caller could have found with the search (403): admins share with anybody, the
 * others with the groups and users of their own category. The first bad id refuses the whole
 * request, so a list is saved entirely or not at all.
 *
 * The search matches a piece of the name (any case, at least 2 characters) and never reaches past
 * the caller's scope: non-admins see only their own category's users (never an admin account),
 * groups and category, and only the media and templates they may use.
 */
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { canManageItem, isAllowed } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { media, templates, type MediaRow, type TemplateRow } from '../../platform/db/schema.ts';
import { DIRECTORY_SEARCH_LIMIT } from '../directory/index.ts';
import type {
  Allowed,
  AllowedExpanded,
  AllowedShareLists,
  AllowedTableParams,
  AllowedTermParams,
  AllowedTermRequest,
  AllowedTermResult,
  Role,
} from '../../../../src/generated/types.ts';
import { hasRoleAtLeast, role, roles } from '../../../../src/generated/policy.ts';

type Table = AllowedTableParams['table'];

/** An item with sharing lists, as the caller may manage it. */
type SharedItem = { table: 'domains'; row: TemplateRow } | { table: 'media'; row: MediaRow };

const ROLE_NAMES: Readonly<Record<Role, string>> = {
  admin: 'Administrator',
  manager: 'Manager',
  advanced: 'Advanced',
  user: 'User',
};
const ROLES: readonly Role[] = roles;
const roleName = (id: string): string | undefined => {
  const role = ROLES.find((r) => r === id);
  return role ? ROLE_NAMES[role] : undefined;
};

const notFound = (id: string) => new ApiError('not_found', 'Item not found', 'not_found', { id });

/** The stored lists of an item, every key present (absent ones are "not used"). */
function storedLists(allowed: Allowed): Required<Allowed> {
  return {
    roles: allowed.roles ?? false,
    categories: allowed.categories ?? false,
    groups: allowed.groups ?? false,
    users: allowed.users ?? false,
  };
}

const matches = (name: string, term: string) => name.toLowerCase().includes(term.toLowerCase());

export type AllowedService = ReturnType<typeof createAllowedService>;

export function createAllowedService(app: FastifyInstance) {
  /** The item of `table` the caller manages: 404 unknown, 403 somebody else's. */
  const itemFor = async (auth: AuthContext, table: Table, id: string): Promise<SharedItem> => {
    let item: SharedItem | undefined;
    if (table === 'domains') {
      const row = await app.templates.get(id);
      if (row) item = { table, row };
    } else if (table === 'media') {
      const row = await app.media.get(id);
      if (row && row.status !== 'deleted') item = { table, row };
    }
    if (!item) throw notFound(id);
    const owner = await app.users.byId(item.row.userId);
    if (!canManageItem(auth, { ...item.row, ownerRole: owner?.role ?? null }))
      throw new ApiError('forbidden', 'Not enough rights on this item', 'forbidden', { id });
    return item;
  };

  const outOfScope = (id: string, path: string) =>
    new ApiError(
      'forbidden',
      `You can not share with ${id}`,
      'allowed_out_of_scope',
      { id },
      { errors: { [path]: 'allowed_out_of_scope' } },
    );
  const unknown = (id: string, path: string) =>
    new ApiError(
      'not_found',
      `Unknown ${id}`,
      'not_found',
      { id },
      { errors: { [path]: 'not_found' } },
    );

  /**
   * The lists a body sends, checked (every id exists and is within the caller's reach) and
   * completed: keys not sent, and the roles and categories the portal does not edit, are false.
   */
  const shareLists = async (auth: AuthContext, sent: AllowedShareLists): Promise<Allowed> => {
    const groups = sent.groups ?? false;
    const users = sent.users ?? false;
    if (groups) {
      const found = new Map((await app.directory.groupsByIds(groups)).map((g) => [g.id, g]));
      groups.forEach((id, i) => {
        const group = found.get(id);
        if (!group) throw unknown(id, `/allowed/groups/${i}`);
        if (!hasRoleAtLeast(auth.role, role.admin) && group.categoryId !== auth.categoryId)
          throw outOfScope(id, `/allowed/groups/${i}`);
      });
    }
    if (users) {
      const found = new Map((await app.directory.usersByIds(users)).map((u) => [u.id, u]));
      users.forEach((id, i) => {
        const user = found.get(id);
        if (!user) throw unknown(id, `/allowed/users/${i}`);
        if (
          !hasRoleAtLeast(auth.role, role.admin) &&
          (user.categoryId !== auth.categoryId || user.role === role.admin)
        )
          throw outOfScope(id, `/allowed/users/${i}`);
      });
    }
    return { roles: false, categories: false, groups, users };
  };

  /** The stored lists with names: ids that no longer exist are left out. */
  const expand = async (allowed: Allowed): Promise<AllowedExpanded> => {
    const lists = storedLists(allowed);
    const named = (ids: string[], name: (id: string) => string | undefined) =>
      ids.flatMap((id) => {
        const n = name(id);
        return n === undefined ? [] : [{ id, name: n }];
      });
    const categories = lists.categories
      ? new Map((await app.directory.categoriesByIds(lists.categories)).map((c) => [c.id, c.name]))
      : new Map<string, string>();
    const groups = lists.groups ? await app.directory.groupsByIds(lists.groups) : [];
    const users = lists.users ? await app.directory.usersByIds(lists.users) : [];
    const byId = <T extends { id: string }>(rows: T[], ids: string[]) => {
      const map = new Map(rows.map((r) => [r.id, r]));
      return ids.flatMap((id) => {
        const row = map.get(id);
        return row ? [row] : [];
      });
    };
    return {
      roles: lists.roles && named(lists.roles, roleName),
      categories: lists.categories && named(lists.categories, (id) => categories.get(id)),
      groups:
        lists.groups &&
        byId(groups, lists.groups).map((g) => ({
          id: g.id,
          name: g.name,
          uid: g.id,
          parent_category: g.categoryId,
          category_name: g.categoryName,
        })),
      users:
        lists.users &&
        byId(users, lists.users).map((u) => ({
          id: u.id,
          name: u.name,
          uid: u.uid,
          group_name: u.groupName,
          category_name: u.categoryName,
        })),
    };
  };

  const assertSameTable = (table: Table, sent: Table | undefined) => {
    if (sent !== undefined && sent !== table)
      throw new ApiError(
        'bad_request',
        'The body names another table than the path',
        'bad_request',
        { table: sent },
        { errors: { '/table': 'bad_request' } },
      );
  };

  return {
    shareLists,

    /** POST /allowed/table/{table}: who an item the caller manages is shared with. */
    async table(
      auth: AuthContext,
      table: Table,
      body: { id: string; table?: Table | undefined },
    ): Promise<AllowedExpanded> {
      assertSameTable(table, body.table);
      const item = await itemFor(auth, table, body.id);
      return expand(item.row.allowed);
    },

    /** POST /admin/allowed/update/{table}: replaces the sharing of an item the caller manages. */
    async update(
      auth: AuthContext,
      table: Table,
      body: { id: string; table?: Table | undefined; allowed: AllowedShareLists },
    ): Promise<void> {
      assertSameTable(table, body.table);
      const item = await itemFor(auth, table, body.id);
      const allowed = await shareLists(auth, body.allowed);
      if (item.table === 'domains') {
        const saved = await app.templates.update(item.row.id, { allowed });
        if (!saved) throw notFound(item.row.id);
        await app.templateService.publish(saved.id, 'templates.updated');
      } else {
        const saved = await app.media.update(item.row.id, { allowed });
        if (!saved) throw notFound(item.row.id);
      }
      app.log.info({ table, id: item.row.id, agent: auth.userId }, 'sharing of an item changed');
    },

    /** POST /admin/allowed/term/{table}: what the caller may share with (or use), by name. */
    async term(
      auth: AuthContext,
      table: AllowedTermParams['table'],
      body: AllowedTermRequest,
    ): Promise<AllowedTermResult[]> {
      const { term } = body;
      const admin = hasRoleAtLeast(auth.role, role.admin);
      switch (table) {
        case 'roles':
          return ROLES.map((id) => ({ id, name: ROLE_NAMES[id] })).filter(
            (r) => matches(r.name, term) || matches(r.id, term),
          );
        case 'categories':
          return (
            await app.directory.searchCategories(term, admin ? undefined : auth.categoryId)
          ).map((c) => ({ id: c.id, name: c.name }));
        case 'groups':
          return (
            await app.directory.searchGroups(term, admin ? body.category : auth.categoryId)
          ).map((g) => ({
            id: g.id,
            name: g.name,
            parent_category: g.categoryId,
            category_name: g.categoryName,
          }));
        case 'users': {
          // Only admins find admin accounts.
          const found = await app.directory.searchUsers({
            term,
            categoryId: admin ? body.category : auth.categoryId,
            excludeRoles: [
              ...(body.exclude_role ? [body.exclude_role] : []),
              ...(admin ? [] : [role.admin]),
            ],
          });
          return found.map((u): AllowedTermResult =>
            admin
              ? {
                  id: u.id,
                  name: u.name,
                  uid: u.uid,
                  username: u.username,
                  role: u.role,
                  category_name: u.categoryName,
                  group_name: u.groupName,
                }
              : {
                  id: u.id,
                  name: u.name,
                  uid: u.uid,
                  category: u.categoryId,
                  ...(body.exclude_role ? { role: u.role } : {}),
                },
          );
        }
        case 'media': {
          const kind = body.kind === 'floppies' ? 'floppy' : body.kind === 'isos' ? 'iso' : null;
          const rows = await app.media.named(eq(media.status, 'downloaded'));
          return rows
            .filter(
              ({ row: m, ownerRole }) =>
                (kind === null || m.kind === kind) &&
                matches(m.name, term) &&
                isAllowed(auth, { ...m, ownerRole }),
            )
            .slice(0, DIRECTORY_SEARCH_LIMIT)
            .map(({ row: m }) => ({ id: m.id, name: m.name, user: m.userId }));
        }
        case 'domains': {
          const rows = await app.templates.named(eq(templates.enabled, true));
          return rows
            .filter(
              ({ row: r, ownerRole }) =>
                r.status === 'ready' &&
                matches(r.name, term) &&
                isAllowed(auth, { ...r, ownerRole }),
            )
            .slice(0, DIRECTORY_SEARCH_LIMIT)
            .map(({ row: r }) => ({ id: r.id, name: r.name }));
        }
        case 'deployments':
          return [];
      }
    },
  };
}
