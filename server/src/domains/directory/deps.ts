/**
 * What the administration service needs from its host: the database, the account policies (for
 * the password rules) and a way to end a user's sessions. The server passes its repositories; the
 * command line passes plain queries on the same database.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../platform/db/client.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type { Actor } from '../../platform/auth/actor.ts';
import type {
  AccountPolicy,
  PasswordPolicy,
} from '../../platform/repository/settings-repository.ts';
import { policyFor } from '../../platform/auth/password-policy.ts';
import { SPECIAL_CHARACTERS } from '../../platform/auth/password-policy.ts';

export interface AdminDeps {
  db: Db;
  accountPolicies(): Promise<readonly AccountPolicy[]>;
  /** Called after the write committed: ends the user's sessions, or (revoke false) only forgets cached roles. */
  sessionsChanged(userId: string, revoke: boolean): Promise<void>;
  /**
   * The server's only: moves what the user owns (running desktops stopped first) into one
   * recycle-bin entry of the actor and runs `inside` in the same transaction. Without it (the
   * command line cannot stop a desktop) a user who owns items cannot be deleted.
   */
  recycleUserItems?(
    actor: Actor,
    user: UserRow,
    inside: (tx: Executor) => Promise<void>,
  ): Promise<void>;
}

export async function passwordPolicyOf(
  deps: AdminDeps,
  who: { categoryId: string; role: string; provider: string },
): Promise<PasswordPolicy | undefined> {
  return policyFor(await deps.accountPolicies(), who)?.password;
}

const pick = (alphabet: string, n: number) =>
  Array.from(randomBytes(n), (b) => alphabet[b % alphabet.length] ?? '').join('');

/** A random password that meets the policy (at least 16 characters, every class it counts). */
export function generatePassword(policy: PasswordPolicy | undefined): string {
  const upper = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
  const lower = 'abcdefghijkmnopqrstuvwxyz';
  const digits = '23456789';
  const parts = [
    pick(upper, Math.max(2, policy?.uppercase ?? 0)),
    pick(lower, Math.max(2, policy?.lowercase ?? 0)),
    pick(digits, Math.max(2, policy?.digits ?? 0)),
    pick(SPECIAL_CHARACTERS.replace(/["'\\`,]/g, ''), Math.max(1, policy?.special_characters ?? 0)),
  ].join('');
  const length = Math.max(16, policy?.length ?? 0);
  const rest = pick(upper + lower + digits, Math.max(0, length - parts.length));
  // shuffle so the classes are not in blocks
  const chars = [...(parts + rest)];
  for (let i = chars.length - 1; i > 0; i--) {
    const j = (randomBytes(1)[0] ?? 0) % (i + 1);
    [chars[i], chars[j]] = [chars[j] ?? '', chars[i] ?? ''];
  }
  return chars.join('');
}
