/** Users, their category and group (local accounts; other providers come later). */
import type { FastifyPluginAsync } from 'fastify';
import { and, eq, or, sql } from 'drizzle-orm';
import { globalPlugin } from '../../lib/plugin.ts';
import { categories, groups, users, type UserRow } from '../../db/schema.ts';

export interface UserWithNames extends UserRow {
  categoryName: string;
  groupName: string;
}

export type CategoryRow = typeof categories.$inferSelect;

export interface UsersRepository {
  findLocal(uid: string, categoryId: string): Promise<UserRow | undefined>;
  byId(id: string): Promise<UserRow | undefined>;
  withNames(id: string): Promise<UserWithNames | undefined>;
  touchAccessed(id: string): Promise<void>;
  update(id: string, patch: Partial<Omit<UserRow, 'id'>>): Promise<void>;
  count(): Promise<number>;
  categories(): Promise<CategoryRow[]>;
  /** By id or custom URL name. */
  category(idOrName: string): Promise<CategoryRow | undefined>;
}

declare module 'fastify' {
  interface FastifyInstance {
    users: UsersRepository;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;
  const repo: UsersRepository = {
    async findLocal(uid, categoryId) {
      const rows = await db
        .select()
        .from(users)
        .where(
          and(eq(users.uid, uid), eq(users.categoryId, categoryId), eq(users.provider, 'local')),
        )
        .limit(1);
      return rows[0];
    },
    async byId(id) {
      const rows = await db.select().from(users).where(eq(users.id, id)).limit(1);
      return rows[0];
    },
    async withNames(id) {
      const rows = await db
        .select({ user: users, categoryName: categories.name, groupName: groups.name })
        .from(users)
        .innerJoin(categories, eq(categories.id, users.categoryId))
        .innerJoin(groups, eq(groups.id, users.groupId))
        .where(eq(users.id, id))
        .limit(1);
      const r = rows[0];
      return r ? { ...r.user, categoryName: r.categoryName, groupName: r.groupName } : undefined;
    },
    async touchAccessed(id) {
      await db
        .update(users)
        .set({ accessed: sql`now()` })
        .where(eq(users.id, id));
    },
    async update(id, patch) {
      await db.update(users).set(patch).where(eq(users.id, id));
      if (patch.active === false || patch.role !== undefined) app.sessions.clearCache();
      if (patch.active === false) await app.sessions.revokeUser(id);
    },
    async count() {
      const rows = await db.select({ n: sql<number>`count(*)::int` }).from(users);
      return rows[0]?.n ?? 0;
    },
    async categories() {
      return db
        .select()
        .from(categories)
        .where(eq(categories.frontend, true))
        .orderBy(categories.name);
    },
    async category(idOrName) {
      const rows = await db
        .select()
        .from(categories)
        .where(or(eq(categories.id, idOrName), eq(categories.customUrlName, idOrName)))
        .limit(1);
      return rows[0];
    },
  };
  app.decorate('users', repo);
};

export default globalPlugin(plugin, 'users-repository');
