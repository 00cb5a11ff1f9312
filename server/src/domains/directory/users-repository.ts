/**
 * Users, their category and group (local accounts; other providers come later), and the account
 * flows' writes: registration from an enrolment code, password changes that keep the history and
 * use up a reset link, address verification that uses up its link.
 */
import type { FastifyPluginAsync } from 'fastify';
import { and, asc, eq, ne, or, sql } from 'drizzle-orm';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import {
  categories,
  groups,
  users,
  type UserInsert,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { role, roles } from '../../../../src/generated/policy.ts';

export interface UserWithNames extends UserRow {
  categoryName: string;
  groupName: string;
}

/** The group and role a registration code gives. */
export interface Enrollment {
  groupId: string;
  categoryId: string;
  role: Role;
}

/** A role a registration code can give: every role but admin (admins are never self-registered). */
export type EnrollmentRole = Exclude<Role, typeof role.admin>;

/** Roles a code can give, highest first: the order codes are looked up. */
export const ENROLLMENT_ROLES: readonly EnrollmentRole[] = roles.filter(
  (r): r is EnrollmentRole => r !== role.admin,
);

/** A new password: its hash and the trimmed history that already holds it. */
export interface PasswordChange {
  passwordHash: string;
  passwordHistory: string[];
}

const sameAddress = (email: string) => sql`lower(${users.email}) = lower(${email})`;

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
  /** The local accounts named `uid` in every category, with the category's name, by category name. */
  findLocalEverywhere(uid: string): Promise<(UserRow & { categoryName: string })[]>;
  /** The active local accounts of the category with that address (any case), verified or not. */
  findLocalByEmail(email: string, categoryId: string): Promise<UserRow[]>;
  /** Whether another account of the category has that address verified. */
  emailInUse(email: string, categoryId: string, exceptUserId?: string): Promise<boolean>;
  /** The group and role a registration code gives (manager codes first, then advanced, user). */
  enrollment(code: string): Promise<Enrollment | undefined>;
  /** Inserts the account; undefined when (provider, category, uid) exists already. */
  create(row: UserInsert): Promise<UserRow | undefined>;
  /**
   * Stores a new password (now as its date, no reset required, pending reset links void). With
   * `resetJti` it happens only while that is the stored reset link's jti; false when it was not.
   */
  changePassword(id: string, change: PasswordChange, resetJti?: string): Promise<boolean>;
  /**
   * Uses up the email-verification link `jti`: while it is the stored one, clears it and, with
   * `email`, makes that the verified address. False when the link is not the stored one.
   */
  useEmailVerification(id: string, jti: string, email?: string): Promise<boolean>;
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
    async findLocalEverywhere(uid) {
      const rows = await db
        .select({ user: users, categoryName: categories.name })
        .from(users)
        .innerJoin(categories, eq(categories.id, users.categoryId))
        .where(and(eq(users.uid, uid), eq(users.provider, 'local')))
        .orderBy(asc(categories.name), asc(categories.id));
      return rows.map((r) => ({ ...r.user, categoryName: r.categoryName }));
    },
    async findLocalByEmail(email, categoryId) {
      return db
        .select()
        .from(users)
        .where(
          and(
            sameAddress(email),
            eq(users.categoryId, categoryId),
            eq(users.provider, 'local'),
            eq(users.active, true),
          ),
        );
    },
    async emailInUse(email, categoryId, exceptUserId) {
      const rows = await db
        .select({ id: users.id })
        .from(users)
        .where(
          and(
            sameAddress(email),
            eq(users.categoryId, categoryId),
            eq(users.emailVerified, true),
            exceptUserId === undefined ? undefined : ne(users.id, exceptUserId),
          ),
        )
        .limit(1);
      return rows.length > 0;
    },
    async enrollment(code) {
      const rows = await db
        .select({ id: groups.id, categoryId: groups.categoryId, enrollment: groups.enrollment })
        .from(groups)
        .where(
          or(...ENROLLMENT_ROLES.map((role) => sql`${groups.enrollment} ->> ${role} = ${code}`)),
        )
        .orderBy(asc(groups.id));
      for (const role of ENROLLMENT_ROLES) {
        const found = rows.find((g) => g.enrollment?.[role] === code);
        if (found) return { groupId: found.id, categoryId: found.categoryId, role };
      }
      return undefined;
    },
    async create(row) {
      const inserted = await db.insert(users).values(row).onConflictDoNothing().returning();
      return inserted[0];
    },
    async changePassword(id, change, resetJti) {
      const rows = await db
        .update(users)
        .set({
          passwordHash: change.passwordHash,
          passwordHistory: change.passwordHistory,
          passwordLastUpdated: sql`now()`,
          passwordResetRequired: false,
          passwordResetJti: null,
        })
        .where(
          and(
            eq(users.id, id),
            resetJti === undefined ? undefined : eq(users.passwordResetJti, resetJti),
          ),
        )
        .returning({ id: users.id });
      return rows.length > 0;
    },
    async useEmailVerification(id, jti, email) {
      const rows = await db
        .update(users)
        .set(
          email === undefined
            ? { emailVerificationJti: null }
            : { emailVerificationJti: null, email, emailVerified: true },
        )
        .where(and(eq(users.id, id), eq(users.emailVerificationJti, jti)))
        .returning({ id: users.id });
      return rows.length > 0;
    },
  };
  app.decorate('users', repo);
};

export default globalPlugin(plugin, 'users-repository');
