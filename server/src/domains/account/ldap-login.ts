/**
 * The LDAP half of a form login: when the category's directory is enabled, the username and
 * password are checked there (platform/auth/ldap.ts). The person is the account of provider
 * `ldap` whose uid is the directory's username, in the directory's category or the one its
 * category attribute guesses (./sso-accounts.ts: registration, a code, the choice among several
 * categories). A directory that cannot answer is a 503 `ldap_unavailable`, not a wrong password.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { ldapAuthenticate, LdapUnavailableError } from '../../platform/auth/ldap.ts';
import { enabledLdapDirectory, ldapSiblings, type LdapDirectory } from '../directory/index.ts';
import { mappingOf, ssoSignIn, type SsoMapping, type SsoOutcome } from './sso-accounts.ts';

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
          category: directory.categoryAttribute,
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

/**
 * Where the directory of the category signs in this username and password (an account, or the
 * login step it needs: ./sso-accounts.ts): undefined when no directory is enabled there, or it
 * does not know the pair.
 */
export async function ldapSignIn(
  app: FastifyInstance,
  request: FastifyRequest,
  username: string,
  password: string,
  categoryId: string,
): Promise<SsoOutcome | undefined> {
  const directory = await enabledLdapDirectory(app.db, categoryId);
  if (!directory) return undefined;
  const person = await check(request, directory, username, password);
  if (!person) return undefined;
  const guess = directory.categoryAttribute
    ? {
        values: person.categoryValues,
        offers: (await ldapSiblings(app.db, directory.url)).map(mappingOf),
      }
    : undefined;
  return ssoSignIn(
    app,
    request,
    LDAP_PROVIDER,
    {
      ...person,
      uid: person.username,
      groups: directory.attrGroups ? person.groups : undefined,
    },
    mappingOf(directory),
    guess,
  );
}

/** The mapping of the category's enabled directory, for a sign-in continued there. */
export async function ldapMapping(
  app: FastifyInstance,
  categoryId: string,
): Promise<SsoMapping | undefined> {
  const directory = await enabledLdapDirectory(app.db, categoryId);
  return directory ? mappingOf(directory) : undefined;
}
