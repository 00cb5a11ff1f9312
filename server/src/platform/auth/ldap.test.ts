/** The LDAP client's filter of a username and the checks made before any directory is asked. */
import { describe, expect, it } from 'vitest';
import { ldapAuthenticate, userFilter } from './ldap.ts';

describe('the LDAP user filter', () => {
  const template = '(&(objectClass=person)(uid={username}))';

  it('puts the username where the template says', () => {
    expect(userFilter(template, 'ana.garcia')).toBe('(&(objectClass=person)(uid=ana.garcia))');
    expect(userFilter('(|(uid={username})(mail={username}))', 'ana')).toBe(
      '(|(uid=ana)(mail=ana))',
    );
  });

  it('escapes every filter metacharacter of the username', () => {
    expect(userFilter(template, '*')).toBe('(&(objectClass=person)(uid=\\2a))');
    expect(userFilter(template, '*)(uid=*')).toBe(
      '(&(objectClass=person)(uid=\\2a\\29\\28uid=\\2a))',
    );
    expect(userFilter(template, 'a\\b')).toBe('(&(objectClass=person)(uid=a\\5cb))');
    expect(userFilter(template, '(&)')).toBe('(&(objectClass=person)(uid=\\28&\\29))');
  });
});

describe('ldapAuthenticate', () => {
  it('never asks the directory for an empty password or username', async () => {
    // a directory that does not exist: reaching it would throw
    const settings = {
      url: 'ldap://127.0.0.1:9',
      starttls: false,
      bindDn: 'cn=portal',
      bindPassword: 'x',
      searchBase: 'dc=test',
      filter: '(uid={username})',
      attributes: { username: 'uid', name: 'cn', email: null, groups: null, photo: null },
    };
    await expect(ldapAuthenticate(settings, 'ana', '')).resolves.toBeUndefined();
    await expect(ldapAuthenticate(settings, '', 'secret')).resolves.toBeUndefined();
    await expect(ldapAuthenticate(settings, 'ana', 'secret')).rejects.toThrow(/LDAP directory/);
  });
});
