/** argon2id password hashing (OWASP parameters m=19456 KiB, t=2, p=1); long inputs refused before hashing. */
import { hash, verify } from '@node-rs/argon2';
import { ApiError } from '../http/api-error.ts';
import { createPasswordGate } from './password-gate.ts';

// @node-rs/argon2 declares Algorithm as an ambient const enum, unusable with isolatedModules: 2 = Argon2id.
const ARGON2ID = 2;
const options = { algorithm: ARGON2ID, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
export const MAX_PASSWORD_BYTES = 1024;
/** Every hash and comparison of this process runs through one bounded pool. */
let gate = createPasswordGate();

/**
 * Sets the pool's waiting budget (the app's config); calls already running finish as they are.
 * Answers the undo, which puts the pool before it back: an app that closes gives back the process's
 * default, so a later app or caller in the same process never inherits a closed app's budget.
 */
export function configurePasswordGate(options: { budgetMs: number }): () => void {
  const before = gate;
  const configured = createPasswordGate(options);
  gate = configured;
  return () => {
    if (gate === configured) gate = before;
  };
}

function checkLength(password: string): void {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) {
    throw new ApiError('bad_request', 'Password too long', 'password_too_long', {
      num: MAX_PASSWORD_BYTES,
    });
  }
}

export async function hashPassword(password: string): Promise<string> {
  checkLength(password);
  return gate.run(() => hash(password, options as Parameters<typeof hash>[1]));
}

let dummyHash: Promise<string> | undefined;

/** Compares; with no stored hash it still spends the same time (no user enumeration by timing). */
export async function verifyPassword(
  stored: string | null | undefined,
  password: string,
): Promise<boolean> {
  checkLength(password);
  if (!stored) {
    if (!dummyHash) {
      const made = hashPassword('dummy-password-for-timing');
      dummyHash = made;
      // A refused first hash (busy) is made again by the next call.
      made.catch(() => {
        if (dummyHash === made) dummyHash = undefined;
      });
    }
    const dummy = await dummyHash;
    await gate
      .run(() => verify(dummy, password))
      .catch((error: unknown) => {
        if (error instanceof ApiError) throw error;
        return false;
      });
    return false;
  }
  try {
    return await gate.run(() => verify(stored, password));
  } catch (error) {
    if (error instanceof ApiError) throw error;
    return false;
  }
}
