/**
 * Login providers declared in the config file: read with their secrets by reference (an
 * environment variable or a file, never written in the file), written at boot through the
 * administration area's services (created, then updated over at the next boot), an entry the
 * service refuses skipped, and no secret in any answer or audit entry.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addCategory, addGroup } from '../../../test/support/fixtures.ts';
import { idpMetadataAt, keyPair } from '../../../../tests/support/saml-idp.ts';
import {
  applyConfigProviders,
  readConfigProviders,
  readConfigProvidersFile,
} from './config-providers.ts';

const BIND_PASSWORD = 'directory-service-secret';
const dir = mkdtempSync(join(tmpdir(), 'config-providers-'));
const configPath = join(dir, 'portal.json');
const sp = keyPair();
const keyLine = sp.privateKey.split('\n')[1] ?? '';
let t: TestApp;
let admin: string;

/** The file's `providers`, the directory's password given by `bindPassword`. */
const providers = (label: string, bindPassword: object) => ({
  ldap: [
    {
      category_id: 'college',
      label,
      url: 'ldap://127.0.0.1:1',
      bind_dn: 'cn=portal,dc=school,dc=test',
      bind_password: bindPassword,
      search_base: 'dc=school,dc=test',
      filter: '(uid={username})',
      group_id: 'college-sso',
    },
  ],
  saml: [
    {
      category_id: 'college',
      label: 'College account',
      idp_metadata: idpMetadataAt('http://127.0.0.1:1'),
      sp_entity_id: 'http://portal.test/saml',
      sp_certificate: sp.certificate,
      sp_private_key: { file: 'sp-key.pem' },
      group_id: 'college-sso',
    },
  ],
  oidc: [
    {
      category_id: 'no-such-category',
      label: 'Elsewhere',
      issuer: 'http://127.0.0.1:1',
      client_id: 'portal',
      client_secret: { file: 'bind-password' },
      group_id: 'college-sso',
    },
  ],
});

const api = async (url: string) => {
  const res = await injectWithToken(t.app, admin, { method: 'GET', url: `/api/v3${url}` });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).not.toContain(BIND_PASSWORD);
  expect(res.body).not.toContain(keyLine);
  return res.json<Record<string, unknown>[]>();
};

beforeAll(async () => {
  writeFileSync(join(dir, 'sp-key.pem'), sp.privateKey);
  writeFileSync(join(dir, 'bind-password'), `${BIND_PASSWORD}-2\n`);
  t = await buildTestApp(await createTestDatabase(), { portalConfigPath: configPath });
  await addCategory(t.app, 'college');
  await addGroup(t.app, 'college-sso', 'college');
  admin = await login(t.app, 'admin');
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('login providers in the config file', () => {
  it('refuses a secret written in the file, naming the entry but not the secret', () => {
    const file = { providers: providers('School directory', { env: 'NOT_SET_ANYWHERE' }) };
    expect(() => readConfigProviders(file, configPath, {})).toThrow(
      'providers.ldap[0].bind_password: the environment variable NOT_SET_ANYWHERE is not set',
    );
    const plain = { providers: { ldap: [{ ...file.providers.ldap[0], bind_password: 'p4ss' }] } };
    let message = '';
    try {
      readConfigProviders(plain, configPath, {});
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/providers\.ldap\[0\]\.bind_password: a secret is \{ "env"/);
    expect(message).not.toContain('p4ss');
  });

  it('writes them at boot through the administration services, over again at the next boot', async () => {
    const env = { LDAP_BIND_PASSWORD: BIND_PASSWORD };
    const file = { providers: providers('School directory', { env: 'LDAP_BIND_PASSWORD' }) };
    const first = readConfigProviders(file, configPath, env);
    // the entry of a category that does not exist is skipped, the others load
    expect(await applyConfigProviders(t.app.db, first, t.app.log)).toBe(2);
    expect(await api('/admin/ldap-providers')).toEqual([
      expect.objectContaining({
        category_id: 'college',
        label: 'School directory',
        bind_password_set: true,
      }),
    ]);
    expect(await api('/admin/saml-providers')).toEqual([
      expect.objectContaining({ category_id: 'college', sp_private_key_set: true }),
    ]);
    expect(await api('/admin/oidc-providers')).toEqual([]);

    // the next boot reads the file (the password now from a file) and updates the same provider
    writeFileSync(
      configPath,
      JSON.stringify({ providers: providers('Class A', { file: 'bind-password' }) }),
    );
    expect(
      await applyConfigProviders(t.app.db, readConfigProvidersFile(configPath), t.app.log),
    ).toBe(2);
    const [directory] = await api('/admin/ldap-providers');
    expect(directory).toMatchObject({ label: 'Class A' });
    const [stored] = await t.app.database.query<{ bind_password: string }>(
      'SELECT bind_password FROM ldap_providers',
    );
    expect(stored?.bind_password).toBe(`${BIND_PASSWORD}-2`);

    const audit = await t.app.database.query<{ text: string; actor_name: string }>(
      "SELECT row_to_json(a)::text AS text, actor_name FROM audit_log a WHERE target_type IN ('ldap_provider', 'saml_provider')",
    );
    expect(audit.map((a) => a.actor_name)).toEqual(audit.map(() => 'config file'));
    // two created at the first boot, the same two updated at the next
    expect(audit.length).toBe(4);
    for (const row of audit) {
      expect(row.text).not.toContain(BIND_PASSWORD);
      expect(row.text).not.toContain(keyLine);
    }
  });
});
