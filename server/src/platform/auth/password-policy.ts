/**
 * Account policies and the password rules they carry.
 *
 * Which policy applies to a user: among the policies whose provider is the user's or "all", the
 * most specific by category and role wins, in this order: the user's category and role, the
 * category with role "all", "all" categories with the role, then "all" and "all". Within one of
 * those steps a policy naming the provider beats one for "all" providers. No match: no policy.
 *
 * A new password is checked rule by rule and the first broken rule is the answer (400, its code and
 * `params.num`): length, then upper-case letters, lower-case letters, digits and special
 * characters (each a real count: `uppercase: 3` needs three upper-case letters), then the last
 * `old_passwords` passwords, then the username (case-insensitive) inside the password, then a
 * known-common password (common-passwords.ts; every policy refuses them).
 */
import { ApiError } from '../http/api-error.ts';
import { verifyPassword } from './passwords.ts';
import { isCommonPassword } from './common-passwords.ts';
import type { AccountPolicy, PasswordPolicy } from '../repository/settings-repository.ts';

export type { AccountPolicy, PasswordPolicy };

/** The characters that count as special. */
export const SPECIAL_CHARACTERS = `!@#$%^&*()-_=+[]{}|;:'",.<>/?`;

export interface PolicySubject {
  categoryId: string;
  role: string;
  provider: string;
}

const ALL = 'all';

/** The account policy of a user, or undefined when none matches. */
export function policyFor(
  policies: readonly AccountPolicy[],
  who: PolicySubject,
): AccountPolicy | undefined {
  const steps: [string, string][] = [
    [who.categoryId, who.role],
    [who.categoryId, ALL],
    [ALL, who.role],
    [ALL, ALL],
  ];
  for (const [category, role] of steps) {
    const matches = policies.filter(
      (p) =>
        p.category === category &&
        p.role === role &&
        (p.provider === who.provider || p.provider === ALL),
    );
    const exact = matches.find((p) => p.provider === who.provider);
    const found = exact ?? matches[0];
    if (found) return found;
  }
  return undefined;
}

const count = (password: string, test: (ch: string) => boolean) =>
  [...password].filter(test).length;

const isUpper = (ch: string) => /\p{Lu}/u.test(ch);
const isLower = (ch: string) => /\p{Ll}/u.test(ch);
const isDigit = (ch: string) => /[0-9]/.test(ch);
const isSpecial = (ch: string) => SPECIAL_CHARACTERS.includes(ch);

const broken = (code: string, message: string, num?: number) =>
  new ApiError('bad_request', message, code, num === undefined ? null : { num });

/** The hashes the check compares against: the newest `old_passwords` of the history. */
export function recentHashes(history: readonly string[], oldPasswords: number): string[] {
  return oldPasswords > 0 ? history.slice(-oldPasswords) : [];
}

/** The history after a change: the new hash appended, trimmed to the last `old_passwords`. */
export function nextHistory(
  history: readonly string[],
  newHash: string,
  oldPasswords: number,
): string[] {
  return recentHashes([...history, newHash], oldPasswords);
}

/** Throws the first rule `password` breaks (see the file comment); resolves when it passes. */
export async function checkPassword(
  policy: PasswordPolicy | undefined,
  password: string,
  context: { username: string; history: readonly string[] },
): Promise<void> {
  if (!policy) return;
  const length = [...password].length;
  if (policy.length > 0 && length < policy.length)
    throw broken(
      'password_character_length',
      `The password needs at least ${policy.length} characters`,
      policy.length,
    );
  const counted: [number, (ch: string) => boolean, string, string][] = [
    [policy.uppercase, isUpper, 'password_uppercase', 'upper-case letters'],
    [policy.lowercase, isLower, 'password_lowercase', 'lower-case letters'],
    [policy.digits, isDigit, 'password_digits', 'digits'],
    [
      policy.special_characters,
      isSpecial,
      'password_special_characters',
      `special characters (${SPECIAL_CHARACTERS})`,
    ],
  ];
  for (const [needed, test, code, what] of counted)
    if (needed > 0 && count(password, test) < needed)
      throw broken(code, `The password needs at least ${needed} ${what}`, needed);
  for (const hash of recentHashes(context.history, policy.old_passwords))
    if (await verifyPassword(hash, password))
      throw broken(
        'password_already_used',
        `The password was one of the last ${policy.old_passwords} passwords`,
        policy.old_passwords,
      );
  if (
    policy.not_username &&
    context.username !== '' &&
    password.toLowerCase().includes(context.username.toLowerCase())
  )
    throw broken('password_username', 'The password may not contain the username');
  if (isCommonPassword(password, context.username))
    throw broken(
      'password_common',
      'The password is one of the most common ones (or one with digits added): choose another one',
    );
}

/** Whether a local password last set at `lastUpdated` has outlived the policy's expiration. */
export function passwordExpired(
  policy: PasswordPolicy | undefined,
  lastUpdated: Date | null,
  now = Date.now(),
): boolean {
  if (!policy || !(policy.expiration > 0)) return false;
  if (!lastUpdated) return true;
  return now - lastUpdated.getTime() > policy.expiration * 86_400_000;
}
