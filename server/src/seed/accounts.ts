/**
 * The accounts side of the demo: what every seeded account looks like (a verified
 * `<username>@example.org` address, the disclaimer accepted, English), the registration codes of
 * the demo groups, the `newcomer` account, and the default category's account policy that asks
 * for the disclaimer (so only accounts that have not accepted it, newcomer and newly registered
 * ones, see it).
 */
import type { UserInsert } from '../platform/db/schema.ts';
import { defaultSettings, type AccountPolicy } from '../platform/repository/settings-repository.ts';
import type { Role } from '../../../src/generated/types.ts';

export const NEWCOMER_USERNAME = 'newcomer';

export interface EnrollmentCode {
  groupId: string;
  role: Role;
  code: string;
  /** the group's `enrollment` column */
  enrollment: { manager?: string; advanced?: string; user?: string };
}

const code = (groupId: string, role: 'manager' | 'advanced' | 'user', value: string) => ({
  groupId,
  role,
  code: value,
  enrollment: { [role]: value },
});

/** Registration codes: they register users in default-users and Class A, advanced users in default-advanced. */
export const ENROLLMENT_CODES: readonly EnrollmentCode[] = [
  code('default-users', 'user', 'WELCOME-USERS'),
  code('default-class-a', 'user', 'CLASS-A-2026'),
  code('default-advanced', 'advanced', 'WELCOME-ADVANCED'),
];

const basePolicy = defaultSettings.account_policies[0];
if (!basePolicy) throw new Error('the default settings have no account policy');

/** The code defaults for every category, and the default category asking for the disclaimer. */
export const DEMO_ACCOUNT_POLICIES: AccountPolicy[] = [
  basePolicy,
  { ...basePolicy, category: 'default', disclaimer: true },
];

/** A seeded local account of the default category. */
export function demoAccount(values: {
  id: string;
  username: string;
  name: string;
  groupId: string;
  role: Role;
  passwordHash: string;
}): UserInsert {
  return {
    id: values.id,
    uid: values.username,
    username: values.username,
    name: values.name,
    provider: 'local',
    categoryId: 'default',
    groupId: values.groupId,
    role: values.role,
    passwordHash: values.passwordHash,
    passwordHistory: [values.passwordHash],
    passwordLastUpdated: new Date(),
    email: `${values.username}@example.org`,
    emailVerified: true,
    disclaimerAcknowledged: true,
    lang: 'en',
  };
}
