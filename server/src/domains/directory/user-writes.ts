/**
 * The one place that writes the `users` table: every insert, change and delete of an account, by
 * what it is for. Each operation takes the executor it runs on (the database or the caller's
 * transaction); the administration CRUD, the CSV import, the account flows, the VPN, the
 * migration, the recycle bin and the seed call these and write no account SQL of their own.
 */
import { and, eq, isNull, or, sql } from 'drizzle-orm';
import { users, type UserInsert, type UserRow } from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';

/** A new password: its hash and the trimmed history that already holds it. */
export interface PasswordChange {
  passwordHash: string;
  passwordHistory: string[];
  /** the user must choose another at the next login (false unless set) */
  resetRequired?: boolean;
}

/** What the owner changes of their own profile. */
export type ProfileChange = Partial<Pick<UserInsert, 'name' | 'photo'>>;

export interface VpnKeys {
  privateKey: string;
  publicKey: string;
}

export const userWrites = {
  /** Inserts the account; undefined when (provider, category, uid) or its id exists already. */
  async create(on: Executor, row: UserInsert): Promise<UserRow | undefined> {
    return (await on.insert(users).values(row).onConflictDoNothing().returning())[0];
  },

  /** Inserts accounts made together (the demo data); a clash fails the whole write. */
  async createMany(on: Executor, rows: readonly UserInsert[]): Promise<void> {
    if (rows.length > 0) await on.insert(users).values([...rows]);
  },

  /**
   * An administration change of the fields the admin forms and the CSV import carry (names,
   * address, role, groups, state, quota); the changed account, undefined when it is gone.
   */
  async administer(
    on: Executor,
    id: string,
    patch: Partial<UserInsert>,
  ): Promise<UserRow | undefined> {
    return (await on.update(users).set(patch).where(eq(users.id, id)).returning())[0];
  },

  /** Deletes the account (what refers to it goes by the foreign keys' rules). */
  async remove(on: Executor, id: string): Promise<void> {
    await on.delete(users).where(eq(users.id, id));
  },

  async disable(on: Executor, id: string): Promise<void> {
    await on.update(users).set({ active: false }).where(eq(users.id, id));
  },

  /**
   * Stores a new password (now as its date, pending reset links void). With `resetJti` it
   * happens only while that is the stored reset link's jti. The changed account, else undefined.
   */
  async setPassword(
    on: Executor,
    id: string,
    change: PasswordChange,
    resetJti?: string,
  ): Promise<UserRow | undefined> {
    return (
      await on
        .update(users)
        .set({
          passwordHash: change.passwordHash,
          passwordHistory: change.passwordHistory,
          passwordLastUpdated: sql`now()`,
          passwordResetRequired: change.resetRequired ?? false,
          passwordResetJti: null,
        })
        .where(
          and(
            eq(users.id, id),
            resetJti === undefined ? undefined : eq(users.passwordResetJti, resetJti),
          ),
        )
        .returning()
    )[0];
  },

  /** The pending password-reset link (its jti); a new one voids the previous. */
  async setPasswordResetLink(on: Executor, id: string, jti: string): Promise<void> {
    await on.update(users).set({ passwordResetJti: jti }).where(eq(users.id, id));
  },

  /** A new address waiting for its verification link `jti` (unverified until then). */
  async startEmailVerification(on: Executor, id: string, email: string, jti: string) {
    await on
      .update(users)
      .set({ email, emailVerified: false, emailVerificationJti: jti })
      .where(eq(users.id, id));
  },

  /**
   * Uses up the email-verification link `jti`: while it is the stored one, clears it and, with
   * `email`, makes that the verified address. False when the link is not the stored one.
   */
  async useEmailVerification(
    on: Executor,
    id: string,
    jti: string,
    email?: string,
  ): Promise<boolean> {
    const rows = await on
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

  async setProfile(on: Executor, id: string, change: ProfileChange): Promise<void> {
    if (Object.keys(change).length > 0) await on.update(users).set(change).where(eq(users.id, id));
  },

  async setLanguage(on: Executor, id: string, lang: string): Promise<void> {
    await on.update(users).set({ lang }).where(eq(users.id, id));
  },

  async acknowledgeDisclaimer(on: Executor, id: string): Promise<void> {
    await on.update(users).set({ disclaimerAcknowledged: true }).where(eq(users.id, id));
  },

  /** The hash and expiry of the account's API key (null, null: none). */
  async setApiKey(on: Executor, id: string, hash: string | null, expires: Date | null) {
    await on
      .update(users)
      .set({ apiKeyHash: hash, apiKeyExpires: expires })
      .where(eq(users.id, id));
  },

  /** The login bookkeeping: the last access is now. */
  async touchAccessed(on: Executor, id: string): Promise<void> {
    await on
      .update(users)
      .set({ accessed: sql`now()` })
      .where(eq(users.id, id));
  },

  async setVpnAddress(on: Executor, id: string, address: string): Promise<void> {
    await on.update(users).set({ wgAddress: address }).where(eq(users.id, id));
  },

  /**
   * The account's WireGuard key pair; with `onlyMissing` only while it has none (the first of
   * parallel writers wins, the others read its keys back).
   */
  async setVpnKeys(on: Executor, id: string, keys: VpnKeys, onlyMissing = false): Promise<void> {
    await on
      .update(users)
      .set({ wgPrivateKey: keys.privateKey, wgPublicKey: keys.publicKey })
      .where(
        and(
          eq(users.id, id),
          onlyMissing ? or(isNull(users.wgPrivateKey), isNull(users.wgPublicKey)) : undefined,
        ),
      );
  },

  /** The group leaves every account's secondary groups (the group is being deleted). */
  async leaveSecondaryGroup(on: Executor, groupId: string): Promise<void> {
    await on
      .update(users)
      .set({ secondaryGroups: sql`${users.secondaryGroups} - ${groupId}::text` })
      .where(sql`${users.secondaryGroups} ? ${groupId}`);
  },
};

export type UserWrites = typeof userWrites;
