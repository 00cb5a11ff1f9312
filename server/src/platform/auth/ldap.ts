/**
 * A user's password checked against an LDAP directory: bind as the service account, search the
 * user under the base with the configured filter (the username escaped by the client library's
 * filter escaping, never pasted in raw), then bind as the entry found with the given password.
 *
 * Exactly one entry must match (none or several: undefined); an empty password never binds (a directory takes an empty simple
 * bind as anonymous). A wrong password or an unknown user answers undefined; a directory that
 * cannot be reached, or refuses the service account, throws LdapUnavailableError.
 */
import { Client, Filter, InvalidCredentialsError, SizeLimitExceededError } from 'ldapts';

export interface LdapSettings {
  url: string;
  /** upgrade an ldap:// connection with StartTLS before any bind */
  starttls: boolean;
  bindDn: string;
  bindPassword: string;
  searchBase: string;
  /** an LDAP filter where `{username}` stands for the escaped username */
  filter: string;
  attributes: {
    username: string;
    name: string;
    email: string | null;
    groups: string | null;
    photo: string | null;
    /** the attribute whose values guess the person's category */
    category?: string | null;
  };
  /** milliseconds for the connection and for each operation (default 5 s) */
  timeoutMs?: number;
}

/** The directory's person, read from the attributes the settings map. */
export interface LdapPerson {
  dn: string;
  username: string;
  name: string;
  email: string | null;
  groups: string[];
  photo: string | null;
  /** the values of the category attribute (none when the settings name none) */
  categoryValues: string[];
}

/** The directory could not answer (down, TLS failure, service account refused). */
export class LdapUnavailableError extends Error {
  constructor(cause: unknown) {
    super(`LDAP directory unavailable: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'LdapUnavailableError';
  }
}

/** The filter of one username: every `{username}` replaced by the escaped value. */
export function userFilter(template: string, username: string): string {
  return template.split('{username}').join(Filter.escape(username));
}

type Value = string | string[] | Buffer | Buffer[];

const texts = (value: Value | undefined): string[] => {
  if (value === undefined) return [];
  const list = Array.isArray(value) ? value : [value];
  return list.map((v) => (typeof v === 'string' ? v : v.toString('utf8')));
};

const first = (entry: Record<string, Value>, attribute: string | null): string | null =>
  attribute ? (texts(entry[attribute])[0] ?? null) : null;

async function withClient<T>(settings: LdapSettings, work: (client: Client) => Promise<T>) {
  const timeout = settings.timeoutMs ?? 5000;
  const client = new Client({ url: settings.url, timeout, connectTimeout: timeout });
  try {
    if (settings.starttls) await client.startTLS({});
    return await work(client);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** The person whose password this is, else undefined (see the file comment). */
export async function ldapAuthenticate(
  settings: LdapSettings,
  username: string,
  password: string,
): Promise<LdapPerson | undefined> {
  if (password.length === 0 || username.length === 0) return undefined;
  const { attributes: a } = settings;
  const wanted = [a.username, a.name, a.email, a.groups, a.photo, a.category ?? null].filter(
    (x): x is string => x !== null,
  );
  let found: { dn: string } & Record<string, Value>;
  try {
    const entries = await withClient(settings, async (client) => {
      await client.bind(settings.bindDn, settings.bindPassword);
      const { searchEntries } = await client.search(settings.searchBase, {
        scope: 'sub',
        filter: userFilter(settings.filter, username),
        attributes: wanted,
        sizeLimit: 2,
      });
      return searchEntries;
    });
    if (entries.length !== 1 || !entries[0]) return undefined;
    found = entries[0];
  } catch (error) {
    // several matches are no one: the username must name one entry
    if (error instanceof SizeLimitExceededError) return undefined;
    throw new LdapUnavailableError(error);
  }
  try {
    await withClient(settings, (client) => client.bind(found.dn, password));
  } catch (error) {
    if (error instanceof InvalidCredentialsError) return undefined;
    throw new LdapUnavailableError(error);
  }
  return {
    dn: found.dn,
    username: first(found, a.username) ?? username,
    name: first(found, a.name) ?? username,
    email: first(found, a.email),
    groups: a.groups ? texts(found[a.groups]) : [],
    photo: first(found, a.photo),
    categoryValues: a.category ? texts(found[a.category]) : [],
  };
}
