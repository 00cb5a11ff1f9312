import { describe, expect, it } from 'vitest';
import { hashPassword } from './passwords.ts';
import { ApiError } from '../http/api-error.ts';
import {
  checkPassword,
  nextHistory,
  passwordExpired,
  policyFor,
  type AccountPolicy,
  type PasswordPolicy,
} from './password-policy.ts';
import { COMMON_PASSWORD_COUNT } from './common-passwords.ts';

const password = (overrides: Partial<PasswordPolicy> = {}): PasswordPolicy => ({
  length: 0,
  uppercase: 0,
  lowercase: 0,
  digits: 0,
  special_characters: 0,
  old_passwords: 0,
  not_username: false,
  expiration: 0,
  ...overrides,
});

const policy = (
  category: string,
  role: string,
  provider: string,
  length: number,
): AccountPolicy => ({
  category,
  role,
  provider,
  password: password({ length }),
  email_verification: false,
  disclaimer: false,
});

const who = { categoryId: 'c1', role: 'user', provider: 'local' };

describe('policyFor', () => {
  it('takes the most specific match: category and role, category, role, then all', () => {
    const all = policy('all', 'all', 'all', 1);
    const role = policy('all', 'user', 'all', 2);
    const category = policy('c1', 'all', 'all', 3);
    const exact = policy('c1', 'user', 'all', 4);
    expect(policyFor([all, role, category, exact], who)).toBe(exact);
    expect(policyFor([all, role, category], who)).toBe(category);
    expect(policyFor([all, role], who)).toBe(role);
    expect(policyFor([all], who)).toBe(all);
    expect(policyFor([policy('c2', 'user', 'all', 5), policy('c1', 'admin', 'all', 6)], who)).toBe(
      undefined,
    );
  });

  it('needs the provider to be the user’s or all, and prefers the named provider', () => {
    const saml = policy('c1', 'user', 'saml', 1);
    const any = policy('c1', 'user', 'all', 2);
    const local = policy('c1', 'user', 'local', 3);
    expect(policyFor([saml], who)).toBeUndefined();
    expect(policyFor([saml, any], who)).toBe(any);
    expect(policyFor([any, local], who)).toBe(local);
  });
});

async function codeOf(p: PasswordPolicy, value: string, history: string[] = []) {
  try {
    await checkPassword(p, value, { username: 'Alice', history });
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { status: err.statusCode, code: err.descriptionCode, params: err.params };
  }
}

describe('checkPassword', () => {
  it('answers the first broken rule with its code and count', async () => {
    const p = password({
      length: 8,
      uppercase: 2,
      lowercase: 2,
      digits: 2,
      special_characters: 2,
      not_username: true,
    });
    expect(await codeOf(p, 'Ab1!')).toEqual({
      status: 400,
      code: 'password_character_length',
      params: { num: 8 },
    });
    expect(await codeOf(p, 'Abcdefgh12!?')).toMatchObject({
      code: 'password_uppercase',
      params: { num: 2 },
    });
    expect(await codeOf(p, 'ABCDEFGh12!?')).toMatchObject({ code: 'password_lowercase' });
    expect(await codeOf(p, 'ABcdefgh1!?')).toMatchObject({
      code: 'password_digits',
      params: { num: 2 },
    });
    expect(await codeOf(p, 'ABcdefgh12!x')).toMatchObject({
      code: 'password_special_characters',
      params: { num: 2 },
    });
    expect(await codeOf(p, 'ABxALICEz12!?')).toEqual({
      status: 400,
      code: 'password_username',
      params: null,
    });
    expect(await codeOf(p, 'ABqmvwzt12!?')).toBeNull();
  });

  it('refuses a known-common password under any policy: a list entry, with digits or punctuation added, letters swapped for digits, or the username with digits', async () => {
    const p = password();
    for (const common of [
      'password',
      'password123',
      'Password1!',
      'P@ssw0rd',
      'qwerty123',
      'Summer2024!',
      'iloveyou!!',
      '12345678',
      'azertyuiop',
      'qwertzuiop',
      'aaaaaaaa',
      '1q2w3e4r5t',
    ])
      expect(await codeOf(p, common), common).toEqual({
        status: 400,
        code: 'password_common',
        params: null,
      });
    const named = await checkPassword(p, 'alice1990!', { username: 'alice', history: [] }).then(
      () => null,
      (err: ApiError) => err.descriptionCode,
    );
    expect(named).toBe('password_common');
    for (const fine of [
      'correct-horse-battery',
      'Tr0ub4dor&3',
      'ABqmvwzt12!?',
      'test-password-123',
    ])
      expect(await codeOf(p, fine), fine).toBeNull();
    expect(COMMON_PASSWORD_COUNT).toBeGreaterThan(1000);
  });

  it('refuses one of the last old_passwords passwords and forgets older ones', async () => {
    const [h1, h2, h3] = await Promise.all(['first-1', 'second-2', 'third-3'].map(hashPassword));
    const history = [h1 ?? '', h2 ?? '', h3 ?? ''];
    const p = password({ old_passwords: 2 });
    expect(await codeOf(p, 'third-3', history)).toMatchObject({
      code: 'password_already_used',
      params: { num: 2 },
    });
    expect(await codeOf(p, 'second-2', history)).toMatchObject({ code: 'password_already_used' });
    expect(await codeOf(p, 'first-1', history)).toBeNull();
    expect(await codeOf(password(), 'third-3', history)).toBeNull();
  });

  it('accepts anything without a policy', async () => {
    await expect(checkPassword(undefined, 'x', { username: 'x', history: [] })).resolves.toBe(
      undefined,
    );
  });
});

describe('nextHistory and passwordExpired', () => {
  it('keeps the last old_passwords hashes, none when the policy keeps none', () => {
    expect(nextHistory(['a', 'b', 'c'], 'd', 2)).toEqual(['c', 'd']);
    expect(nextHistory(['a'], 'b', 5)).toEqual(['a', 'b']);
    expect(nextHistory(['a', 'b'], 'c', 0)).toEqual([]);
  });

  it('expires a password older than the expiration days, or never set', () => {
    const p = password({ expiration: 30 });
    const now = Date.UTC(2026, 0, 31);
    expect(passwordExpired(p, new Date(Date.UTC(2026, 0, 2)), now)).toBe(false);
    expect(passwordExpired(p, new Date(Date.UTC(2025, 11, 31)), now)).toBe(true);
    expect(passwordExpired(p, null, now)).toBe(true);
    expect(passwordExpired(password(), null, now)).toBe(false);
    expect(passwordExpired(undefined, null, now)).toBe(false);
  });
});
