/**
 * The users' passkeys (WebAuthn credentials) and the WebAuthn ceremonies under way, stored in
 * PostgreSQL so that a ceremony begun on one portal node finishes on any other.
 *
 * A passkey row keeps the credential id (base64url, unique), the COSE public key (base64url) and
 * the signature counter; the counter only moves forward, atomically, so two requests cannot both
 * use one signature. A challenge row is the ceremony: its single-use challenge, the origin and
 * relying party it was offered for, and for a login step the jti of the step token it passes. It
 * is deleted by the first attempt to finish it (right or wrong) and refused after `expires_at`.
 */
import { and, asc, count, eq, gt, lt, or, sql } from 'drizzle-orm';
import { randomUUID } from 'node:crypto';
import { passkeys, webauthnChallenges, type PasskeyRow } from '../db/schema.ts';
import type { Db } from '../db/client.ts';
import type { Executor } from '../repository/entity-repository.ts';

/** How long a ceremony may take, from its options to its answer (seconds). */
export const WEBAUTHN_CHALLENGE_SECONDS = 120;

export type CeremonyPurpose = 'registration' | 'authentication';

/** Where a ceremony is bound: the browser origin and the relying party id (its host name). */
export interface RelyingParty {
  origin: string;
  rpId: string;
}

export interface Ceremony extends RelyingParty {
  challenge: string;
  userId: string;
  purpose: CeremonyPurpose;
  stepJti: string | null;
}

/** The user's passkeys, oldest first. */
export function passkeysOf(db: Executor, userId: string): Promise<PasskeyRow[]> {
  return db
    .select()
    .from(passkeys)
    .where(eq(passkeys.userId, userId))
    .orderBy(asc(passkeys.createdAt));
}

/** How many passkeys the user has. */
export async function passkeyCount(db: Executor, userId: string): Promise<number> {
  const [row] = await db.select({ n: count() }).from(passkeys).where(eq(passkeys.userId, userId));
  return row?.n ?? 0;
}

/** The passkey of a credential id, if it is the user's. */
export async function passkeyByCredential(
  db: Executor,
  userId: string,
  credentialId: string,
): Promise<PasskeyRow | undefined> {
  const rows = await db
    .select()
    .from(passkeys)
    .where(and(eq(passkeys.userId, userId), eq(passkeys.credentialId, credentialId)))
    .limit(1);
  return rows[0];
}

/** Stores a new passkey; undefined when the credential is registered already. */
export async function addPasskey(
  db: Executor,
  row: {
    userId: string;
    name: string;
    credentialId: string;
    publicKey: string;
    counter: number;
    transports: string[];
  },
): Promise<string | undefined> {
  const id = randomUUID();
  const added = await db
    .insert(passkeys)
    .values({ id, ...row, name: row.name.trim() })
    .onConflictDoNothing()
    .returning({ id: passkeys.id });
  return added[0]?.id;
}

/** Renames one of the user's passkeys; false when the user has none with that id. */
export async function renamePasskey(
  db: Executor,
  userId: string,
  id: string,
  name: string,
): Promise<boolean> {
  const rows = await db
    .update(passkeys)
    .set({ name: name.trim() })
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning({ id: passkeys.id });
  return rows.length > 0;
}

/** Removes one of the user's passkeys; false when the user has none with that id. */
export async function removePasskey(db: Executor, userId: string, id: string): Promise<boolean> {
  const rows = await db
    .delete(passkeys)
    .where(and(eq(passkeys.id, id), eq(passkeys.userId, userId)))
    .returning({ id: passkeys.id });
  return rows.length > 0;
}

/** Removes every passkey and ceremony of the user; answers how many passkeys there were. */
export async function removePasskeys(db: Executor, userId: string): Promise<number> {
  const removed = await db
    .delete(passkeys)
    .where(eq(passkeys.userId, userId))
    .returning({ id: passkeys.id });
  await db.delete(webauthnChallenges).where(eq(webauthnChallenges.userId, userId));
  return removed.length;
}

/**
 * Records a signature's counter and the time of use. The counter must move forward (or stay 0
 * for an authenticator that keeps none), checked in the update itself: false when another use
 * got there first.
 */
export async function recordPasskeyUse(
  db: Executor,
  passkey: PasskeyRow,
  counter: number,
): Promise<boolean> {
  const rows = await db
    .update(passkeys)
    .set({ counter, lastUsedAt: sql`now()` })
    .where(
      and(
        eq(passkeys.id, passkey.id),
        eq(passkeys.counter, passkey.counter),
        or(lt(passkeys.counter, counter), and(eq(passkeys.counter, 0), sql`${counter} = 0`)),
      ),
    )
    .returning({ id: passkeys.id });
  return rows.length > 0;
}

/** Records a new ceremony (expired ones are swept on the way). */
export async function openCeremony(db: Db, ceremony: Ceremony): Promise<void> {
  await db.delete(webauthnChallenges).where(lt(webauthnChallenges.expiresAt, sql`now()`));
  await db.insert(webauthnChallenges).values({
    ...ceremony,
    expiresAt: new Date(Date.now() + WEBAUTHN_CHALLENGE_SECONDS * 1000),
  });
}

/**
 * Takes (deletes) the user's live ceremony of that challenge and purpose: undefined when it is
 * unknown, used, expired, or another user's or purpose's.
 */
export async function takeCeremony(
  db: Db,
  userId: string,
  purpose: CeremonyPurpose,
  challenge: string,
): Promise<Ceremony | undefined> {
  const rows = await db
    .delete(webauthnChallenges)
    .where(
      and(
        eq(webauthnChallenges.challenge, challenge),
        eq(webauthnChallenges.userId, userId),
        eq(webauthnChallenges.purpose, purpose),
        gt(webauthnChallenges.expiresAt, sql`now()`),
      ),
    )
    .returning();
  const row = rows[0];
  return row
    ? {
        challenge: row.challenge,
        userId: row.userId,
        purpose: row.purpose,
        stepJti: row.stepJti ?? null,
        origin: row.origin,
        rpId: row.rpId,
      }
    : undefined;
}
