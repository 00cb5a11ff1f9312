/**
 * Form logins against a real OpenLDAP directory (a private slapd, tests/support/slapd.ts): the
 * directory of a category administered through its generated resource, a first login of a Class A
 * student that registers them into the mapped group and role, the group their OU names applied at
 * each later login when the directory asks, wrong passwords that count toward
 * the lockout like local ones, usernames with filter metacharacters that match no one, a directory
 * that cannot be reached, a category attribute that matches two directories (the category
 * choice), and a service account password that no answer ever carries.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addCategory, addGroup } from '../../../test/support/fixtures.ts';
import {
  LDAP_PEOPLE,
  LDAP_PEOPLE_LIST,
  LDAP_SERVICE_DN,
  LDAP_SERVICE_PASSWORD,
  startSlapd,
  type Slapd,
} from '../../../../tests/support/slapd.ts';

let t: TestApp;
let slapd: Slapd;
let admin: string;
/** Every answer of the test: none may carry the service account's password. */
const answers: LightMyRequestResponse[] = [];

const CATEGORY = 'school';
const GROUP = 'school-class-a';

const person = (uid: string) => {
  const found = LDAP_PEOPLE_LIST.find((p) => p.uid === uid);
  if (!found) throw new Error(`no ${uid} in the test directory`);
  return found;
};

const directoryBody = (overrides: Record<string, unknown> = {}) => ({
  category_id: CATEGORY,
  label: 'School directory',
  url: slapd.url,
  bind_dn: LDAP_SERVICE_DN,
  bind_password: LDAP_SERVICE_PASSWORD,
  search_base: `ou=class-a,${LDAP_PEOPLE}`,
  filter: '(uid={username})',
  attr_email: 'mail',
  attr_groups: 'ou',
  group_id: GROUP,
  role: 'user',
  ...overrides,
});

const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
  const res = await injectWithToken(t.app, admin, {
    method,
    url: `/api/v3${url}`,
    ...(payload ? { payload } : {}),
  });
  answers.push(res);
  return res;
};

const signIn = async (username: string, password: string, category = CATEGORY) => {
  const res = await loginRequest(t.app, username, password, category);
  answers.push(res);
  return res;
};

beforeAll(async () => {
  slapd = await startSlapd();
  t = await buildTestApp(await createTestDatabase());
  await t.app.settings.set('account_policies', []);
  await addCategory(t.app, CATEGORY);
  await addGroup(t.app, GROUP, CATEGORY);
  await addCategory(t.app, 'offline');
  await addGroup(t.app, 'offline-users', 'offline');
  admin = await login(t.app, 'admin');
});
afterAll(async () => {
  await t?.close();
  await slapd?.stop();
});

describe('the LDAP directory of a category', () => {
  it('is administered as a resource whose service account password is write-only', async () => {
    const created = await api('POST', '/admin/ldap-providers', directoryBody());
    expect(created.statusCode).toBe(200);
    const { id } = created.json<{ id: string }>();
    const shown = await api('GET', `/admin/ldap-providers/${id}`);
    expect(shown.statusCode).toBe(200);
    expect(shown.json()).toMatchObject({
      category_id: CATEGORY,
      category_name: CATEGORY,
      url: slapd.url,
      bind_dn: LDAP_SERVICE_DN,
      bind_password_set: true,
      group_id: GROUP,
      role: 'user',
    });
    expect(shown.json()).not.toHaveProperty('bind_password');
    // an update without the password keeps the stored one
    expect((await api('PUT', `/admin/ldap-providers/${id}`, { label: 'Class A' })).statusCode).toBe(
      200,
    );
    const listed = await api('GET', '/admin/ldap-providers');
    expect(listed.json()).toEqual([
      expect.objectContaining({ id, label: 'Class A', bind_password_set: true }),
    ]);
    const again = await api('POST', '/admin/ldap-providers', directoryBody());
    expect(again.statusCode).toBe(409);
    expect(again.json().description_code).toBe('ldap_provider_exists');
    const badUrl = await api('POST', '/admin/ldap-providers', directoryBody({ url: 'http://x' }));
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json().description_code).toBe('ldap_url_format');
    const foreignGroup = await api(
      'POST',
      '/admin/ldap-providers',
      directoryBody({ category_id: 'offline', group_id: GROUP }),
    );
    expect(foreignGroup.statusCode).toBe(400);
    expect(foreignGroup.json().description_code).toBe('group_not_in_category');
    const audit = await t.app.database.query<{ text: string }>(
      "SELECT row_to_json(a)::text AS text FROM audit_log a WHERE target_type = 'ldap_provider'",
    );
    expect(audit.length).toBeGreaterThan(0);
    for (const row of audit) expect(row.text).not.toContain(LDAP_SERVICE_PASSWORD);
  });

  it('registers a Class A student at the first form login, in the mapped group and role', async () => {
    const ana = person('ana.garcia');
    const first = await signIn(ana.uid, ana.password);
    expect(first.statusCode).toBe(200);
    const claims = decodePayload(first.body);
    expect(claims.type).toBeUndefined();
    expect(claims.data).toMatchObject({
      provider: 'ldap',
      category_id: CATEGORY,
      group_id: GROUP,
      role_id: 'user',
      name: ana.name,
    });
    const account = await t.app.users.findByProvider(ana.uid, CATEGORY, 'ldap');
    expect(account).toMatchObject({
      username: ana.uid,
      email: `${ana.uid}@school.test`,
      groupId: GROUP,
      role: 'user',
      passwordHash: null,
    });
    // the second login is the same account, with a new session
    const second = await signIn(ana.uid, ana.password);
    expect(second.statusCode).toBe(200);
    expect(decodePayload(second.body).sub).toBe(account?.id);
    expect(decodePayload(second.body).session_id).not.toBe(claims.session_id);
  });

  it('puts the student in the group their OU names, at each login when the directory asks', async () => {
    await t.app.database.query(
      `INSERT INTO groups (id, name, category_id) VALUES ('school-lab', 'Class-A', $1)`,
      [CATEGORY],
    );
    const own = (await api('GET', '/admin/ldap-providers'))
      .json<{ id: string; category_id: string }[]>()
      .find((d) => d.category_id === CATEGORY);
    const set = await api('PUT', `/admin/ldap-providers/${own?.id ?? ''}`, {
      groups_at_each_login: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    const ana = person('ana.garcia');
    const res = await signIn(ana.uid, ana.password);
    expect(res.statusCode, res.body).toBe(200);
    // the groups attribute `ou` is `class-a`: the group of that name, whatever its case
    expect(decodePayload(res.body).data).toMatchObject({ group_id: 'school-lab' });
    const account = await t.app.users.findByProvider(ana.uid, CATEGORY, 'ldap');
    expect(account).toMatchObject({ groupId: 'school-lab', secondaryGroups: [] });
  });

  it('refuses a wrong password with our error body, and counts it toward the lockout', async () => {
    const marc = person('marc.puig');
    const wrong = await signIn(marc.uid, 'not-his-password');
    expect(wrong.statusCode).toBe(401);
    expectErrorShape(wrong.json(), 'invalid_credentials');
    for (let i = 1; i < 10; i++) expect((await signIn(marc.uid, `bad-${i}`)).statusCode).toBe(401);
    const eleventh = await signIn(marc.uid, 'bad-11');
    expect(eleventh.statusCode).toBe(429);
    expect(eleventh.headers['retry-after']).toBeDefined();
    // while banned even the right password is refused, before the directory is asked
    expect((await signIn(marc.uid, marc.password)).statusCode).toBe(429);
    expect(await t.app.users.findByProvider(marc.uid, CATEGORY, 'ldap')).toBeUndefined();
  });

  it('matches no one with filter metacharacters in the username', async () => {
    const { password } = person('joan.vila');
    for (const username of ['*', '*)(uid=*', 'joan.vila)(|(uid=*', 'joan*', '(uid=joan.vila)'])
      expect((await signIn(username, password)).statusCode, username).toBe(401);
    expect(await t.app.users.findByProvider('joan.vila', CATEGORY, 'ldap')).toBeUndefined();
  });

  it('signs in no one of another OU, nor anyone in a category without a directory', async () => {
    const laia = person('laia.roca');
    expect((await signIn(laia.uid, laia.password)).statusCode).toBe(401);
    const ana = person('ana.garcia');
    expect((await signIn(ana.uid, ana.password, 'default')).statusCode).toBe(401);
  });

  it('answers 503 ldap_unavailable when the directory cannot be reached', async () => {
    const created = await api(
      'POST',
      '/admin/ldap-providers',
      directoryBody({
        category_id: 'offline',
        group_id: 'offline-users',
        url: 'ldap://127.0.0.1:9',
      }),
    );
    expect(created.statusCode).toBe(200);
    const ana = person('ana.garcia');
    const res = await signIn(ana.uid, ana.password, 'offline');
    expect(res.statusCode).toBe(503);
    expect(res.json().description_code).toBe('ldap_unavailable');
    // the group a directory registers its new users into stays while the directory names it
    const groupDelete = await injectWithToken(t.app, admin, {
      method: 'DELETE',
      url: '/api/v3/admin/groups/offline-users',
    });
    expect(groupDelete.statusCode).toBe(428);
    expect(groupDelete.json().description_code).toBe('group_has_ldap_directory');
  });

  it('GET /authentication/providers names the enabled directories with their labels', async () => {
    const answer = async () => {
      const res = await t.app.inject({ method: 'GET', url: '/authentication/providers' });
      answers.push(res);
      return res.json<{ providers: string[]; ldap: { category_id: string; label: string }[] }>();
    };
    expect(await answer()).toEqual({
      providers: ['form'],
      ldap: [
        { category_id: 'offline', label: 'School directory' },
        { category_id: CATEGORY, label: 'Class A' },
      ],
      oidc: [],
      saml: [],
    });
    const offline = (await api('GET', '/admin/ldap-providers'))
      .json<{ id: string; category_id: string }[]>()
      .find((d) => d.category_id === 'offline');
    await api('PUT', `/admin/ldap-providers/${offline?.id ?? ''}`, { enabled: false });
    expect((await answer()).ldap).toEqual([{ category_id: CATEGORY, label: 'Class A' }]);
  });

  it('answers category-select when the category attribute matches two directories, and the chosen one logs in', async () => {
    await addCategory(t.app, 'annex');
    await addGroup(t.app, 'annex-users', 'annex');
    const own = (await api('GET', '/admin/ldap-providers'))
      .json<{ id: string; category_id: string }[]>()
      .find((d) => d.category_id === CATEGORY);
    const guessing = await api('PUT', `/admin/ldap-providers/${own?.id ?? ''}`, {
      category_attribute: 'ou',
      category_regex: '^class-',
    });
    expect(guessing.statusCode, guessing.body).toBe(200);
    const annex = await api(
      'POST',
      '/admin/ldap-providers',
      directoryBody({
        category_id: 'annex',
        group_id: 'annex-users',
        role: 'advanced',
        category_regex: '^class-a$',
      }),
    );
    expect(annex.statusCode, annex.body).toBe(200);
    // joan: the lockout test above banned marc
    const joan = person('joan.vila');
    const res = await signIn(joan.uid, joan.password);
    expect(res.statusCode, res.body).toBe(200);
    const claims = decodePayload(res.body);
    expect(claims.type).toBe('category-select');
    expect(claims.categories).toEqual([
      { id: 'annex', name: 'annex' },
      { id: CATEGORY, name: CATEGORY },
    ]);
    const chosen = await t.app.inject({
      method: 'POST',
      url: '/authentication/login?provider=form&category_id=annex',
      headers: { authorization: `Bearer ${res.body}` },
    });
    answers.push(chosen);
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(decodePayload(chosen.body).data).toMatchObject({
      provider: 'ldap',
      category_id: 'annex',
      group_id: 'annex-users',
      role_id: 'advanced',
      name: joan.name,
    });
  });

  it('never answers the service account password', () => {
    expect(answers.length).toBeGreaterThan(10);
    for (const res of answers) {
      expect(res.body).not.toContain(LDAP_SERVICE_PASSWORD);
      expect(JSON.stringify(res.headers)).not.toContain(LDAP_SERVICE_PASSWORD);
    }
  });
});
