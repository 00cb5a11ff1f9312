/**
 * The second factors of users, stored in PostgreSQL so every node sees the same state: one row
 * per user and kind (`totp`), pending until the user confirms it with a valid code; the user's
 * passkeys (./passkeys.ts, kind `passkey` when there is one); the recovery codes (SHA-256 only, each used once); and the challenges of
 * the second login step (one per step token, by its jti: passed by a valid code, then consumed
 * by the session it lets through, so a step token opens at most one session).
 */
import { and, count, eq, gt, isNotNull, isNull, lt, or, sql } from 'drizzle-orm';
import {
  recoveryCodes,
  secondFactorChallenges,
  secondFactors,
  type SecondFactorRow,
} from '../db/schema.ts';
import type { Db } from '../db/client.ts';
import type { Executor } from '../repository/entity-repository.ts';
import { randomUUID } from 'node:crypto';
import { passkeyCount, removePasskeys } from './passkeys.ts';
import {
  isRecoveryCodeShape,
  matchTotp,
  newRecoveryCodes,
  newTotpSecret,
  recoveryCodeHash,
} from './totp.ts';

export type SecondFactorKind = SecondFactorRow['kind'] | 'passkey';

/** What a user has: confirmed kinds, passkeys and unused recovery codes. */
export interface SecondFactorSummary {
  kinds: SecondFactorKind[];
  passkeys: number;
  recoveryCodesLeft: number;
}

export async function secondFactorSummary(db: Executor, userId: string) {
  const [factors, passkeys, [left]] = await Promise.all([
    db
      .select({ kind: secondFactors.kind })
      .from(secondFactors)
      .where(and(eq(secondFactors.userId, userId), isNotNull(secondFactors.confirmedAt))),
    passkeyCount(db, userId),
    db
      .select({ n: count() })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt))),
  ]);
  return {
    kinds: [
      ...factors.map((f): SecondFactorKind => f.kind),
      ...(passkeys > 0 ? ['passkey' as const] : []),
    ],
    passkeys,
    recoveryCodesLeft: left?.n ?? 0,
  } satisfies SecondFactorSummary;
}

/** The user's TOTP row (pending or confirmed), if any. */
async function totpRow(db: Executor, userId: string): Promise<SecondFactorRow | undefined> {
  const rows = await db
    .select()
    .from(secondFactors)
    .where(and(eq(secondFactors.userId, userId), eq(secondFactors.kind, 'totp')))
    .limit(1);
  return rows[0];
}

/**
 * The secret of the user's pending TOTP enrolment, made now when there is none; undefined when
 * a confirmed TOTP factor exists already.
 */
export async function pendingTotpSecret(db: Db, userId: string): Promise<string | undefined> {
  await db
    .insert(secondFactors)
    .values({ id: randomUUID(), userId, kind: 'totp', secret: newTotpSecret() })
    .onConflictDoNothing();
  const row = await totpRow(db, userId);
  return row && !row.confirmedAt ? row.secret : undefined;
}

/**
 * Confirms the pending TOTP enrolment with a code: enables the factor and replaces the user's
 * recovery codes with ten new ones, answered once. Undefined when there is no pending enrolment
 * or the code is wrong.
 */
export async function confirmTotp(
  db: Db,
  userId: string,
  code: string,
): Promise<string[] | undefined> {
  return db.transaction(async (tx) => {
    const row = await totpRow(tx, userId);
    if (!row || row.confirmedAt) return undefined;
    const step = matchTotp(row.secret, code, null);
    if (step === undefined) return undefined;
    await tx
      .update(secondFactors)
      .set({ confirmedAt: sql`now()`, lastStep: step })
      .where(eq(secondFactors.id, row.id));
    return replaceRecoveryCodes(tx, userId);
  });
}

/**
 * Replaces the user's recovery codes with ten new ones (only their hashes are stored): the codes,
 * to show once.
 */
export async function replaceRecoveryCodes(db: Executor, userId: string): Promise<string[]> {
  const codes = newRecoveryCodes();
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  await db
    .insert(recoveryCodes)
    .values(codes.map((c) => ({ codeHash: recoveryCodeHash(userId, c), userId })));
  return codes;
}

/**
 * Checks a code against the user's confirmed factors: a TOTP code whose step is later than the
 * last accepted one (recorded atomically, so two requests cannot both use a code), else an unused
 * recovery code (marked used). True when it passed.
 */
export async function useSecondFactorCode(db: Db, userId: string, code: string): Promise<boolean> {
  const row = await totpRow(db, userId);
  if (row?.confirmedAt) {
    const step = matchTotp(row.secret, code, row.lastStep ?? null);
    if (step !== undefined) {
      const taken = await db
        .update(secondFactors)
        .set({ lastStep: step })
        .where(
          and(
            eq(secondFactors.id, row.id),
            or(isNull(secondFactors.lastStep), lt(secondFactors.lastStep, step)),
          ),
        )
        .returning({ id: secondFactors.id });
      if (taken.length > 0) return true;
    }
  }
  if (!isRecoveryCodeShape(code)) return false;
  const used = await db
    .update(recoveryCodes)
    .set({ usedAt: sql`now()` })
    .where(
      and(
        eq(recoveryCodes.codeHash, recoveryCodeHash(userId, code)),
        eq(recoveryCodes.userId, userId),
        isNull(recoveryCodes.usedAt),
      ),
    )
    .returning({ userId: recoveryCodes.userId });
  return used.length > 0;
}

/** Removes the user's recovery codes when no second factor is left for them to replace. */
export async function dropUnusedRecoveryCodes(db: Executor, userId: string): Promise<void> {
  if ((await secondFactorSummary(db, userId)).kinds.length > 0) return;
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
}

/**
 * Removes every factor (passkeys included) and recovery code of the user; answers the kinds that
 * were confirmed.
 */
export async function removeSecondFactors(
  db: Executor,
  userId: string,
): Promise<SecondFactorKind[]> {
  const removed = await db
    .delete(secondFactors)
    .where(eq(secondFactors.userId, userId))
    .returning({ kind: secondFactors.kind, confirmedAt: secondFactors.confirmedAt });
  await db.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  await db.delete(secondFactorChallenges).where(eq(secondFactorChallenges.userId, userId));
  const passkeys = await removePasskeys(db, userId);
  return [
    ...removed.filter((r) => r.confirmedAt).map((r): SecondFactorKind => r.kind),
    ...(passkeys > 0 ? ['passkey' as const] : []),
  ];
}

/** Records the challenge of a new step token (expired challenges are swept on the way). */
export async function openChallenge(db: Db, userId: string, jti: string, expiresAt: Date) {
  await db.delete(secondFactorChallenges).where(lt(secondFactorChallenges.expiresAt, sql`now()`));
  await db.insert(secondFactorChallenges).values({ jti, userId, expiresAt });
}

/** The user's challenge `jti`, not expired, passed or not. */
const liveChallenge = (userId: string, jti: string, passed: boolean) =>
  and(
    eq(secondFactorChallenges.jti, jti),
    eq(secondFactorChallenges.userId, userId),
    eq(secondFactorChallenges.passed, passed),
    gt(secondFactorChallenges.expiresAt, sql`now()`),
  );

/** Marks a live challenge passed; false when it is unknown, expired, or already passed. */
export async function passChallenge(db: Db, userId: string, jti: string): Promise<boolean> {
  const rows = await db
    .update(secondFactorChallenges)
    .set({ passed: true })
    .where(liveChallenge(userId, jti, false))
    .returning({ jti: secondFactorChallenges.jti });
  return rows.length > 0;
}

/** Whether a challenge is live and not passed yet (the step still waits for its code). */
export async function challengeOpen(db: Db, userId: string, jti: string): Promise<boolean> {
  const rows = await db
    .select({ jti: secondFactorChallenges.jti })
    .from(secondFactorChallenges)
    .where(liveChallenge(userId, jti, false))
    .limit(1);
  return rows.length > 0;
}

/** Uses up a passed, live challenge; false when there is none (so a session is issued once). */
export async function consumeChallenge(db: Db, userId: string, jti: string): Promise<boolean> {
  const rows = await db
    .delete(secondFactorChallenges)
    .where(liveChallenge(userId, jti, true))
    .returning({ jti: secondFactorChallenges.jti });
  return rows.length > 0;
}
