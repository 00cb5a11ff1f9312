/**
 * The account a directory (LDAP), OpenID Connect or SAML sign-in leads to, once the provider vouched for
 * the person: the category, then the account in it.
 *
 * The category: a provider that names a category attribute (claim) guesses it. Every enabled
 * provider of the same kind and connection (the same issuer and client, the same directory
 * address, the same identity provider and service provider entity) whose category regex matches one of the attribute's values offers its category, with
 * its group and role: one offer is that category, several answer a `category-select` token listing
 * them (the login continues with the chosen one and that token), none is `user_disallowed`. A
 * provider without a category attribute signs in to its own category.
 *
 * The account: the person's account of that provider (uid, category) gets their name refreshed,
 * and their groups when the provider applies its group attribute at each sign-in (./sso-groups.ts).
 * An unknown person is registered into the mapped role and into the groups their group attribute
 * names (./sso-groups.ts), else the mapped group, or, when the provider requires
 * a registration code, gets a `register` token (carrying the group attribute's values): the
 * register page takes a code of that category, whose role the account gets, and the groups the
 * attribute names by the same rule (the code's group in place of the mapped one); the same token
 * then logs the account in once.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { inArray } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { categories, type UserRow } from '../../platform/db/schema.ts';
import type { SpecialClaims } from '../../platform/auth/tokens.ts';
import type { Role } from '../../../../src/generated/types.ts';
import {
  ACCOUNT_TOKEN_SECONDS,
  CATEGORY_SELECT_SECONDS,
  newJti,
  type RegisterClaims,
} from './account-tokens.ts';
import { languageOf } from '../../platform/lib/languages.ts';
import { placementOf, replaceGroups } from './sso-groups.ts';

/** The providers whose accounts this module signs in. */
export const SSO_PROVIDERS = ['ldap', 'oidc', 'saml'] as const;
export type SsoProvider = (typeof SSO_PROVIDERS)[number];

export const isSsoProvider = (value: unknown): value is SsoProvider =>
  (SSO_PROVIDERS as readonly unknown[]).includes(value);

/** The person as the provider describes them. */
export interface SsoPerson {
  uid: string;
  username: string;
  name: string;
  email: string | null;
  photo: string | null;
  /** the values of the provider's group attribute; undefined when it has none */
  groups?: string[];
}

/** What a provider of a category maps a sign-in to. */
export interface SsoMapping {
  categoryId: string;
  groupId: string;
  role: Role;
  registrationCodeRequired: boolean;
  categoryRegex: string | null;
  /** the group attribute's groups apply at every sign-in, not only at the registration */
  groupsAtEachLogin: boolean;
}

/** What a provider's row maps a sign-in to: the mapping's fields of any provider kind's row. */
export const mappingOf = (row: SsoMapping): SsoMapping => ({
  categoryId: row.categoryId,
  groupId: row.groupId,
  role: row.role,
  registrationCodeRequired: row.registrationCodeRequired,
  categoryRegex: row.categoryRegex,
  groupsAtEachLogin: row.groupsAtEachLogin,
});

/** A login step's token instead of an account (category-select, register). */
export interface SsoStep {
  token: string;
  seconds: number;
}

export type SsoOutcome = { user: UserRow } | { step: SsoStep };

const disallowed = () => new ApiError('user_disallowed', undefined, 'user_disallowed');
const invalidToken = () =>
  new ApiError('forbidden', 'Token not valid for this operation.', 'invalid_token');

/** Whether the expression matches one of the values (an expression that does not compile: no). */
export function regexMatches(regex: string | null, values: readonly string[]): boolean {
  if (!regex) return false;
  let pattern: RegExp;
  try {
    pattern = new RegExp(regex);
  } catch {
    return false;
  }
  return values.some((value) => pattern.test(value));
}

/** The texts of a claim or attribute value (a text, or a list of texts). */
export function textsOf(value: unknown): string[] {
  const list: unknown[] = Array.isArray(value) ? value : [value];
  return list.filter((v): v is string => typeof v === 'string' && v !== '');
}

/** The account of the person in the mapping's category, or the register step it needs. */
async function accountIn(
  app: FastifyInstance,
  request: FastifyRequest,
  provider: SsoProvider,
  person: SsoPerson,
  mapping: SsoMapping,
): Promise<SsoOutcome> {
  const placement = () => placementOf(app, mapping.categoryId, mapping.groupId, person.groups);
  const found = await app.users.findByProvider(person.uid, mapping.categoryId, provider);
  if (found) {
    const known = mapping.groupsAtEachLogin
      ? await replaceGroups(app, found, await placement())
      : found;
    if (known.name === person.name) return { user: known };
    await app.users.setProfile(known.id, { name: person.name });
    return { user: { ...known, name: person.name } };
  }
  if (mapping.registrationCodeRequired) {
    const token = await app.tokens.signSpecial('register', person.uid, ACCOUNT_TOKEN_SECONDS, {
      jti: newJti(),
      provider,
      uid: person.uid,
      category_id: mapping.categoryId,
      username: person.username,
      name: person.name,
      email: person.email,
      photo: person.photo,
      ...(person.groups ? { groups: person.groups } : {}),
    });
    return { step: { token, seconds: ACCOUNT_TOKEN_SECONDS } };
  }
  const created = await app.users.create({
    id: randomUUID(),
    uid: person.uid,
    username: person.username,
    name: person.name,
    provider,
    categoryId: mapping.categoryId,
    ...((await placement()) ?? { groupId: mapping.groupId }),
    role: mapping.role,
    active: true,
    email: person.email,
    // the provider vouches for the addresses it gives
    emailVerified: person.email !== null,
    photo: person.photo,
    lang: languageOf(request.headers['accept-language']),
  });
  // a concurrent first login of the same person made the account: use that one
  const account =
    created ?? (await app.users.findByProvider(person.uid, mapping.categoryId, provider));
  if (!account)
    throw new ApiError('conflict', 'That username already exists', 'username_exists', {
      username: person.username,
    });
  return { user: account };
}

/**
 * Where the sign-in of a person goes: `own` is the mapping of the provider signed in through;
 * with `guess`, the category values pick among `offers` (see the file comment).
 */
export async function ssoSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  provider: SsoProvider,
  person: SsoPerson,
  own: SsoMapping,
  guess?: { values: string[]; offers: SsoMapping[] },
): Promise<SsoOutcome> {
  if (!guess) return accountIn(app, request, provider, person, own);
  const matches = guess.offers.filter((offer) => regexMatches(offer.categoryRegex, guess.values));
  const [only] = matches;
  if (!only) throw disallowed();
  if (matches.length === 1) return accountIn(app, request, provider, person, only);
  const named = await app.db
    .select({ id: categories.id, name: categories.name })
    .from(categories)
    .where(
      inArray(
        categories.id,
        matches.map((m) => m.categoryId),
      ),
    )
    .orderBy(categories.name);
  const token = await app.tokens.signSpecial(
    'category-select',
    person.username,
    CATEGORY_SELECT_SECONDS,
    { username: person.username, categories: named, provider, person },
  );
  return { step: { token, seconds: CATEGORY_SELECT_SECONDS } };
}

/** The person a category-select token of a provider's sign-in carries; undefined for a form's. */
export function ssoChoiceOf(
  claims: SpecialClaims,
): { provider: SsoProvider; person: SsoPerson } | undefined {
  const provider: unknown = claims.provider;
  const person: unknown = claims.person;
  if (!isSsoProvider(provider)) return undefined;
  if (!person || typeof person !== 'object') throw invalidToken();
  const field = (key: string): unknown => Reflect.get(person, key);
  const text = (key: string) => {
    const value = field(key);
    if (typeof value !== 'string' || value === '') throw invalidToken();
    return value;
  };
  const optional = (key: string) => {
    const value = field(key);
    return typeof value === 'string' ? value : null;
  };
  const groups = field('groups');
  return {
    provider,
    person: {
      uid: text('uid'),
      username: text('username'),
      name: text('name'),
      email: optional('email'),
      photo: optional('photo'),
      ...(Array.isArray(groups) ? { groups: textsOf(groups) } : {}),
    },
  };
}

/**
 * The category chosen from a provider's category-select token: the account there, through the
 * mapping of that category's provider (still enabled), or the register step it needs.
 */
export async function continueSsoChoice(
  app: FastifyInstance,
  request: FastifyRequest,
  choice: { provider: SsoProvider; person: SsoPerson },
  mapping: SsoMapping | undefined,
): Promise<SsoOutcome> {
  if (!mapping) throw disallowed();
  return accountIn(app, request, choice.provider, choice.person, mapping);
}

/**
 * The account a provider's register step makes with a registration code of its category: the
 * code's role, and the groups the person's group attribute names (./sso-groups.ts, the code's
 * group the fallback main group), else the code's group; it keeps the step's jti until the login
 * that token continues uses it.
 */
export async function registerSsoAccount(
  app: FastifyInstance,
  request: FastifyRequest,
  claims: RegisterClaims & { provider: SsoProvider },
  enrollment: { groupId: string; role: Role },
): Promise<string> {
  if (await app.users.findByProvider(claims.uid, claims.category_id, claims.provider))
    throw new ApiError('conflict', 'The account exists already', 'conflict');
  const created = await app.users.create({
    id: randomUUID(),
    uid: claims.uid,
    username: claims.username,
    name: claims.name,
    provider: claims.provider,
    categoryId: claims.category_id,
    ...((await placementOf(app, claims.category_id, enrollment.groupId, claims.groups)) ?? {
      groupId: enrollment.groupId,
    }),
    role: enrollment.role,
    active: true,
    email: claims.email,
    emailVerified: claims.email !== null,
    emailVerificationJti: claims.jti,
    photo: claims.photo,
    lang: languageOf(request.headers['accept-language']),
  });
  if (!created)
    throw new ApiError('conflict', 'That username already exists', 'username_exists', {
      username: claims.username,
    });
  return created.id;
}
