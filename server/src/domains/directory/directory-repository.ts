/**
 * The directory of who an item can be shared with: users, groups and categories, read by id with
 * their display names (to show an allowed list) and searched by a piece of their name (to add to
 * one). Reads only; every search is bounded and scoped by the caller-side filters it is given.
 */
import type { FastifyPluginAsync } from 'fastify';
import { and, asc, eq, inArray, notInArray, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { categories, groups, users } from '../../platform/db/schema.ts';
import type { Role } from '../../../../src/generated/types.ts';

/** A user as the sharing screens show it (never secrets: no hash, email or quota). */
export interface DirectoryUser {
  id: string;
  uid: string;
  username: string;
  name: string;
  role: Role;
  active: boolean;
  categoryId: string;
  groupId: string;
  categoryName: string | null;
  groupName: string | null;
}

export interface DirectoryGroup {
  id: string;
  name: string;
  categoryId: string;
  categoryName: string | null;
}

export interface DirectoryCategory {
  id: string;
  name: string;
}

/** What a search may return at most. */
export const DIRECTORY_SEARCH_LIMIT = 100;

export interface UserSearch {
  term: string;
  /** only users of this category */
  categoryId?: string | undefined;
  /** leave users of these roles out */
  excludeRoles?: readonly Role[] | undefined;
}

export interface DirectoryRepository {
  usersByIds(ids: readonly string[]): Promise<DirectoryUser[]>;
  groupsByIds(ids: readonly string[]): Promise<DirectoryGroup[]>;
  categoriesByIds(ids: readonly string[]): Promise<DirectoryCategory[]>;
  /** Active users whose name or user name contains the term (any case), by name. */
  searchUsers(search: UserSearch): Promise<DirectoryUser[]>;
  /** Groups whose name contains the term, of one category when given, by name. */
  searchGroups(term: string, categoryId?: string): Promise<DirectoryGroup[]>;
  /** Categories whose name contains the term, only this one when given, by name. */
  searchCategories(term: string, categoryId?: string): Promise<DirectoryCategory[]>;
}

declare module 'fastify' {
  interface FastifyInstance {
    directory: DirectoryRepository;
  }
}

/** The term is matched as plain text: `%` and `_` are characters, not wildcards. */
const contains = (column: PgColumn, term: string): SQL =>
  sql`strpos(lower(${column}), lower(${term})) > 0`;

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;

  const userColumns = {
    id: users.id,
    uid: users.uid,
    username: users.username,
    name: users.name,
    role: users.role,
    active: users.active,
    categoryId: users.categoryId,
    groupId: users.groupId,
    categoryName: categories.name,
    groupName: groups.name,
  };
  const selectUsers = (where: SQL | undefined, limit: number) =>
    db
      .select(userColumns)
      .from(users)
      .leftJoin(categories, eq(categories.id, users.categoryId))
      .leftJoin(groups, eq(groups.id, users.groupId))
      .where(where)
      .orderBy(asc(users.name), asc(users.id))
      .limit(limit);

  const groupColumns = {
    id: groups.id,
    name: groups.name,
    categoryId: groups.categoryId,
    categoryName: categories.name,
  };
  const selectGroups = (where: SQL | undefined, limit: number) =>
    db
      .select(groupColumns)
      .from(groups)
      .leftJoin(categories, eq(categories.id, groups.categoryId))
      .where(where)
      .orderBy(asc(groups.name), asc(groups.id))
      .limit(limit);

  const selectCategories = (where: SQL | undefined, limit: number) =>
    db
      .select({ id: categories.id, name: categories.name })
      .from(categories)
      .where(where)
      .orderBy(asc(categories.name), asc(categories.id))
      .limit(limit);

  app.decorate('directory', {
    async usersByIds(ids) {
      if (ids.length === 0) return [];
      return selectUsers(inArray(users.id, [...ids]), ids.length);
    },
    async groupsByIds(ids) {
      if (ids.length === 0) return [];
      return selectGroups(inArray(groups.id, [...ids]), ids.length);
    },
    async categoriesByIds(ids) {
      if (ids.length === 0) return [];
      return selectCategories(inArray(categories.id, [...ids]), ids.length);
    },
    searchUsers({ term, categoryId, excludeRoles = [] }) {
      return selectUsers(
        and(
          eq(users.active, true),
          or(contains(users.name, term), contains(users.username, term)),
          categoryId !== undefined ? eq(users.categoryId, categoryId) : undefined,
          excludeRoles.length > 0 ? notInArray(users.role, [...excludeRoles]) : undefined,
        ),
        DIRECTORY_SEARCH_LIMIT,
      );
    },
    searchGroups(term, categoryId) {
      return selectGroups(
        and(
          contains(groups.name, term),
          categoryId !== undefined ? eq(groups.categoryId, categoryId) : undefined,
        ),
        DIRECTORY_SEARCH_LIMIT,
      );
    },
    searchCategories(term, categoryId) {
      return selectCategories(
        and(
          contains(categories.name, term),
          categoryId !== undefined ? eq(categories.id, categoryId) : undefined,
        ),
        DIRECTORY_SEARCH_LIMIT,
      );
    },
  } satisfies DirectoryRepository);
};

export default globalPlugin(plugin, 'directory-repository');
