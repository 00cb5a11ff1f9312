/**
 * Users, their category and group (local accounts; other providers come later), and the account
 * flows' writes by name (registration, password changes that keep the history and use up a reset
 * link, address verification that uses up its link, profile, language, API key, VPN keys, login
 * bookkeeping, disabling and deleting a migrated account): each is one of the users table's
 * writes in user-writes.ts, bound to the app's database; a disable ends the account's sessions.
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
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { Role } from '../../../../src/generated/types.ts';
import {
  userWrites,
  type PasswordChange,
  type ProfileChange,
  type VpnKeys,
} from './user-writes.ts';
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

const sameAddress = (email: string) => sql`lower(${users.email}) = lower(${email})`;

export type CategoryRow = typeof categories.$inferSelect;

export interface UsersRepository {
  findLocal(uid: string, categoryId: string): Promise<UserRow | undefined>;
  /** The account of another login provider (an LDAP directory) by its uid there. */
  findByProvider(uid: string, categoryId: string, provider: string): Promise<UserRow | undefined>;
  byId(id: string): Promise<UserRow | undefined>;
  withNames(id: string): Promise<UserWithNames | undefined>;
  /**
   * A direct change of stored columns (tests and operations tooling arrange an account so); a
   * disable or role change reaches the sessions. The portal's flows use the named writes below.
   */
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
  /**
   * Inserts the account (on `on`, a caller's transaction, when given); undefined when (provider,
   * category, uid) or its id exists already.
   */
  create(row: UserInsert, on?: Executor): Promise<UserRow | undefined>;
  /**
   * Stores a new password (now as its date, no reset required, pending reset links void). With
   * `resetJti` it happens only while that is the stored reset link's jti; false when it was not.
   */
  changePassword(id: string, change: PasswordChange, resetJti?: string): Promise<boolean>;
  /** A new password-reset link (its jti); the previous one is void. */
  setPasswordResetLink(id: string, jti: string): Promise<void>;
  /** A new address waiting for its verification link `jti` (unverified until then). */
  startEmailVerification(id: string, email: string, jti: string): Promise<void>;
  /**
   * Uses up the email-verification link `jti`: while it is the stored one, clears it and, with
   * `email`, makes that the verified address. False when the link is not the stored one.
   */
  useEmailVerification(id: string, jti: string, email?: string): Promise<boolean>;
  setProfile(id: string, change: ProfileChange): Promise<void>;
  setLanguage(id: string, lang: string): Promise<void>;
  acknowledgeDisclaimer(id: string): Promise<void>;
  /** The hash and expiry of the account's API key; null, null revokes it. */
  setApiKey(id: string, hash: string | null, expires: Date | null): Promise<void>;
  /** The login bookkeeping: the last access is now. */
  touchAccessed(id: string): Promise<void>;
  /** The account's VPN address (on `on`, the allocation's transaction). */
  setVpnAddress(id: string, address: string, on?: Executor): Promise<void>;
  /** The account's WireGuard keys; with `onlyMissing` only while it has none. */
  setVpnKeys(id: string, keys: VpnKeys, onlyMissing?: boolean): Promise<void>;
  /** Disables the account and ends its sessions. */
  disable(id: string): Promise<void>;
  /** Deletes the account (a migrated one nothing refers to any more); its sessions are forgotten. */
  remove(id: string): Promise<void>;
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
      return repo.findByProvider(uid, categoryId, 'local');
    },
    async findByProvider(uid, categoryId, provider) {
      const rows = await db
        .select()
        .from(users)
        .where(
          and(eq(users.uid, uid), eq(users.categoryId, categoryId), eq(users.provider, provider)),
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
    async update(id, patch) {
      await userWrites.administer(db, id, patch);
      if (patch.active === false || patch.role !== undefined)
        app.cluster.publish({ kind: 'user.changed', userId: id });
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
    create: (row, on) => userWrites.create(on ?? db, row),
    async changePassword(id, change, resetJti) {
      return (await userWrites.setPassword(db, id, change, resetJti)) !== undefined;
    },
    setPasswordResetLink: (id, jti) => userWrites.setPasswordResetLink(db, id, jti),
    startEmailVerification: (id, email, jti) =>
      userWrites.startEmailVerification(db, id, email, jti),
    useEmailVerification: (id, jti, email) => userWrites.useEmailVerification(db, id, jti, email),
    setProfile: (id, change) => userWrites.setProfile(db, id, change),
    setLanguage: (id, lang) => userWrites.setLanguage(db, id, lang),
    acknowledgeDisclaimer: (id) => userWrites.acknowledgeDisclaimer(db, id),
    setApiKey: (id, hash, expires) => userWrites.setApiKey(db, id, hash, expires),
    touchAccessed: (id) => userWrites.touchAccessed(db, id),
    async setVpnAddress(id, address, on) {
      await userWrites.setVpnAddress(on ?? db, id, address);
      app.cluster.publish({ kind: 'vpn.changed', userId: id });
    },
    async setVpnKeys(id, keys, onlyMissing) {
      await userWrites.setVpnKeys(db, id, keys, onlyMissing);
      app.cluster.publish({ kind: 'vpn.changed', userId: id });
    },
    async disable(id) {
      await userWrites.disable(db, id);
      app.cluster.publish({ kind: 'user.changed', userId: id });
      await app.sessions.revokeUser(id);
    },
    async remove(id) {
      await userWrites.remove(db, id);
      app.cluster.publish({ kind: 'user.changed', userId: id });
    },
  };
  app.decorate('users', repo);
};

export default globalPlugin(plugin, 'users-repository');
