/**
 * The LDAP half of a form login: when the category's directory is enabled, the username and
 * password are checked there (platform/auth/ldap.ts). A person the portal knows (provider `ldap`,
 * the directory's username as uid, same category) gets their name refreshed; a first login
 * registers the person into the group and role the directory maps. A directory that cannot
 * answer is a 503 `ldap_unavailable`, not a wrong password.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import {
  ldapAuthenticate,
  LdapUnavailableError,
  type LdapPerson,
} from '../../platform/auth/ldap.ts';
import type { UserRow } from '../../platform/db/schema.ts';
import { enabledLdapDirectory, type LdapDirectory } from '../directory/index.ts';
import { languageOf } from './languages.ts';

/** The provider name of the accounts a directory registers. */
export const LDAP_PROVIDER = 'ldap';

async function check(
  request: FastifyRequest,
  directory: LdapDirectory,
  username: string,
  password: string,
) {
  try {
    return await ldapAuthenticate(
      {
        url: directory.url,
        starttls: directory.starttls,
        bindDn: directory.bindDn,
        bindPassword: directory.bindPassword,
        searchBase: directory.searchBase,
        filter: directory.filter,
        attributes: {
          username: directory.attrUsername,
          name: directory.attrName,
          email: directory.attrEmail,
          groups: directory.attrGroups,
          photo: directory.attrPhoto,
        },
      },
      username,
      password,
    );
  } catch (error) {
    if (!(error instanceof LdapUnavailableError)) throw error;
    request.log.warn({ category: directory.categoryId, reason: error.message }, 'LDAP login');
    throw new ApiError(
      'service_unavailable',
      'The directory cannot be reached',
      'ldap_unavailable',
      null,
      { headers: { 'retry-after': '30' } },
    );
  }
}

async function register(
  app: FastifyInstance,
  directory: LdapDirectory,
  person: LdapPerson,
  request: FastifyRequest,
): Promise<UserRow | undefined> {
  const created = await app.users.create({
    id: randomUUID(),
    uid: person.username,
    username: person.username,
    name: person.name,
    provider: LDAP_PROVIDER,
    categoryId: directory.categoryId,
    groupId: directory.groupId,
    role: directory.role,
    active: true,
    email: person.email,
    // the directory vouches for its addresses
    emailVerified: person.email !== null,
    photo: person.photo,
    lang: languageOf(request.headers['accept-language']),
  });
  // a concurrent first login of the same person made the account: use that one
  return (
    created ??
    (await app.users.findByProvider(person.username, directory.categoryId, LDAP_PROVIDER))
  );
}

/**
 * The account the directory of the category signs in with this username and password: undefined
 * when no directory is enabled there, or it does not know the pair.
 */
export async function ldapSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  username: string,
  password: string,
  categoryId: string,
): Promise<UserRow | undefined> {
  const directory = await enabledLdapDirectory(app.db, categoryId);
  if (!directory) return undefined;
  const person = await check(request, directory, username, password);
  if (!person) return undefined;
  const known = await app.users.findByProvider(person.username, categoryId, LDAP_PROVIDER);
  if (!known) return register(app, directory, person, request);
  if (known.name !== person.name) {
    await app.users.setProfile(known.id, { name: person.name });
    return { ...known, name: person.name };
  }
  return known;
}
