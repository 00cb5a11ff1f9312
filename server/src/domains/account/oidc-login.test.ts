/**
 * OpenID Connect sign-in against a real provider (oidc-provider on loopback,
 * tests/support/oidc-idp.ts): the provider of a category administered through its generated
 * resource with a write-only secret, a first sign-in that registers the person into the mapped
 * group and role and opens a session like a form login, and the refusals (a state used twice or
 * from another browser, an ID token with another nonce, for another audience or expired, an address
 * outside the allowed domains, the provider's own error), each sending the browser back to the
 * login page with its code and leaving no session; and the starts a client address may make.
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
  type TestApp,
} from '../../../test/support/helper.ts';
import { addCategory, addGroup } from '../../../test/support/fixtures.ts';
import { OIDC_STARTS } from '../../platform/auth/attempt-windows.ts';
import {
  OIDC_ACCOUNTS,
  OIDC_CLIENT_ID,
  OIDC_CLIENT_SECRET,
  startOidcIdp,
  type OidcIdp,
} from '../../../../tests/support/oidc-idp.ts';

const PORTAL = 'http://portal.test';
const CATEGORY = 'school';
const GROUP = 'school-sso';

let t: TestApp;
let idp: OidcIdp;
let admin: string;
/** Every answer of the test: none may carry the client secret. */
const answers: LightMyRequestResponse[] = [];

const [nora, pau] = OIDC_ACCOUNTS as [(typeof OIDC_ACCOUNTS)[0], (typeof OIDC_ACCOUNTS)[0]];

const api = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) => {
  const res = await injectWithToken(t.app, admin, {
    method,
    url: `/api/v3${url}`,
    ...(payload ? { payload } : {}),
  });
  answers.push(res);
  return res;
};

const sessionCount = async () =>
  Number(
    (await t.app.database.query<{ n: string }>('SELECT count(*)::text AS n FROM sessions'))[0]?.n,
  );

/** The login button's start: the provider's address and the cookie that binds the sign-in. */
const begin = async (redirect = '/desktops') => {
  const res = await t.app.inject({
    method: 'GET',
    url: `/authentication/login/oidc?category_id=${CATEGORY}&redirect=${encodeURIComponent(redirect)}`,
  });
  answers.push(res);
  expect(res.statusCode, res.body).toBe(302);
  const location = new URL(String(res.headers.location));
  const cookie = String(res.headers['set-cookie']).split(';')[0] ?? '';
  return { location, cookie };
};

/** The browser coming back from the provider to our callback. */
const callback = async (url: string, cookie: string) => {
  const back = new URL(url);
  const res = await t.app.inject({
    method: 'GET',
    url: `${back.pathname}${back.search}`,
    headers: cookie ? { cookie } : {},
  });
  answers.push(res);
  return res;
};

/** A whole sign-in of an account: the callback's answer. */
const signIn = async (account = nora) => {
  const { location, cookie } = await begin();
  return callback(
    await idp.signIn(location.toString(), account.username, account.password),
    cookie,
  );
};

/** A refusal sends the browser back to the login page with its code, and opens no session. */
const expectRefused = (res: LightMyRequestResponse, code: string) => {
  expect(res.statusCode, res.body).toBe(302);
  expect(res.headers.location).toBe(`/login?error=${code}`);
  expect(String(res.headers['set-cookie'] ?? '')).not.toContain('authorization=');
};

beforeAll(async () => {
  idp = await startOidcIdp([`${PORTAL}/authentication/callback`]);
  t = await buildTestApp(await createTestDatabase(), { publicUrl: PORTAL });
  await t.app.settings.set('account_policies', []);
  await addCategory(t.app, CATEGORY);
  await addGroup(t.app, GROUP, CATEGORY);
  admin = await login(t.app, 'admin');
});
afterAll(async () => {
  await t?.close();
  await idp?.stop();
  for (const res of answers) expect(res.body).not.toContain(OIDC_CLIENT_SECRET);
});

describe('the OpenID Connect provider of a category', () => {
  it('is administered as a resource whose client secret is write-only', async () => {
    const body = {
      category_id: CATEGORY,
      label: 'School account',
      icon: '/favicon.svg',
      issuer: `${idp.issuer}/`,
      client_id: OIDC_CLIENT_ID,
      client_secret: OIDC_CLIENT_SECRET,
      allowed_domains: 'school.test',
      group_id: GROUP,
      role: 'advanced',
    };
    const created = await api('POST', '/admin/oidc-providers', body);
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json<{ id: string }>();
    const shown = await api('GET', `/admin/oidc-providers/${id}`);
    expect(shown.json()).toMatchObject({
      category_name: CATEGORY,
      issuer: idp.issuer,
      client_id: OIDC_CLIENT_ID,
      client_secret_set: true,
      scopes: 'openid profile email',
      claim_username: 'preferred_username',
      claim_email: 'email',
    });
    expect(shown.json()).not.toHaveProperty('client_secret');
    expect((await api('POST', '/admin/oidc-providers', body)).json().description_code).toBe(
      'oidc_provider_exists',
    );
    const badIssuer = await api('POST', '/admin/oidc-providers', { ...body, issuer: 'ftp://x' });
    expect(badIssuer.statusCode).toBe(400);
    const noOpenid = await api('PUT', `/admin/oidc-providers/${id}`, { scopes: 'profile email' });
    expect(noOpenid.statusCode).toBe(400);
    const audit = await t.app.database.query<{ text: string }>(
      "SELECT row_to_json(a)::text AS text FROM audit_log a WHERE target_type = 'oidc_provider'",
    );
    expect(audit.length).toBeGreaterThan(0);
    for (const row of audit) expect(row.text).not.toContain(OIDC_CLIENT_SECRET);
    const providers = await t.app.inject({ method: 'GET', url: '/authentication/providers' });
    expect(providers.json().oidc).toEqual([
      { category_id: CATEGORY, label: 'School account', icon: '/favicon.svg' },
    ]);
    // the group a provider registers its new users into stays while the provider names it
    const groupDelete = await injectWithToken(t.app, admin, {
      method: 'DELETE',
      url: `/api/v3/admin/groups/${GROUP}`,
    });
    expect(groupDelete.statusCode).toBe(428);
    expect(groupDelete.json().description_code).toBe('group_has_oidc_provider');
  });

  it('sends the browser to the issuer with a single-use state, a nonce and PKCE S256', async () => {
    const { location, cookie } = await begin();
    expect(`${location.origin}${location.pathname}`).toBe(`${idp.issuer}/auth`);
    const q = location.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe(OIDC_CLIENT_ID);
    expect(q.get('redirect_uri')).toBe(`${PORTAL}/authentication/callback`);
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    expect(cookie).toBe(`oidc_state=${q.get('state')}`);
    // the login operation starts the same sign-in
    const posted = await t.app.inject({
      method: 'POST',
      url: `/authentication/login?provider=oidc&category_id=${CATEGORY}&redirect=//evil.test`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: '',
    });
    expect(posted.statusCode).toBe(302);
    expect(String(posted.headers.location)).toMatch(new RegExp(`^${idp.issuer}/auth\\?`));
    // a category without a provider has no such sign-in
    const other = await t.app.inject({
      method: 'GET',
      url: '/authentication/login/oidc?category_id=default',
    });
    expect(other.statusCode).toBe(400);
    expectErrorShape(other.json(), 'bad_request');
  });

  it('answers too_many_requests to a client address past its starts, counted in the database', async () => {
    const start = (remoteAddress: string) =>
      t.app.inject({
        method: 'GET',
        url: `/authentication/login/oidc?category_id=${CATEGORY}`,
        remoteAddress,
      });
    const starts = await Promise.all(
      Array.from({ length: OIDC_STARTS.max }, () => start('192.0.2.50')),
    );
    expect(starts.map((res) => res.statusCode)).toEqual(starts.map(() => 302));
    const refused = await start('192.0.2.50');
    expect(refused.statusCode).toBe(429);
    expectErrorShape(refused.json(), 'too_many_requests');
    expect(refused.headers['retry-after']).toBeDefined();
    const [row] = await t.app.database.query<{ count: number }>(
      "SELECT count FROM login_attempts WHERE key = 'oidc-start:192.0.2.50'",
    );
    expect(row?.count).toBe(OIDC_STARTS.max + 1);
    // another address still starts
    expect((await start('192.0.2.51')).statusCode).toBe(302);
  });

  it('registers the person at the first sign-in and opens a session as a form login does', async () => {
    const before = await sessionCount();
    const res = await signIn();
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/desktops');
    const jwt = /authorization=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1] ?? '';
    expect(decodePayload(jwt).data).toMatchObject({
      provider: 'oidc',
      category_id: CATEGORY,
      group_id: GROUP,
      role_id: 'advanced',
      name: nora.name,
    });
    expect(await sessionCount()).toBe(before + 1);
    const account = await t.app.users.findByProvider(nora.sub, CATEGORY, 'oidc');
    expect(account).toMatchObject({ username: nora.username, email: nora.email, groupId: GROUP });
    // the login token works on the API
    const me = await injectWithToken(t.app, jwt, { method: 'GET', url: '/api/v3/user' });
    expect(me.json()).toMatchObject({ username: nora.username });
    // a second sign-in is the same account
    const again = await signIn();
    const second = /authorization=([^;]+)/.exec(String(again.headers['set-cookie']))?.[1] ?? '';
    expect(decodePayload(second).sub).toBe(account?.id);
  });

  it('refuses a state used twice or brought back by another browser, leaving no session', async () => {
    const { location, cookie } = await begin();
    const back = await idp.signIn(location.toString(), nora.username, nora.password);
    const stolen = await callback(back, '');
    expectRefused(stolen, 'oidc_state_invalid');
    const before = await sessionCount();
    // the refusal used the state up: its own browser cannot use it either
    expectRefused(await callback(back, cookie), 'oidc_state_invalid');
    const fresh = await begin();
    const freshBack = await idp.signIn(fresh.location.toString(), nora.username, nora.password);
    expect((await callback(freshBack, fresh.cookie)).statusCode).toBe(302);
    expectRefused(await callback(freshBack, fresh.cookie), 'oidc_state_invalid');
    expect(await sessionCount()).toBe(before + 1);
  });

  it("logs out through the provider's end-session endpoint, back to the login page", async () => {
    const res = await signIn();
    const jwt = /authorization=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1] ?? '';
    const logout = await injectWithToken(t.app, jwt, {
      method: 'POST',
      url: '/authentication/logout',
    });
    answers.push(logout);
    expect(logout.statusCode, logout.body).toBe(200);
    const redirect = new URL(logout.json<{ redirect: string }>().redirect);
    expect(`${redirect.origin}${redirect.pathname}`).toBe(`${idp.issuer}/session/end`);
    expect(redirect.searchParams.get('post_logout_redirect_uri')).toBe(`${PORTAL}/login`);
    expect(redirect.searchParams.get('client_id')).toBe(OIDC_CLIENT_ID);
    expect(decodePayload(redirect.searchParams.get('id_token_hint') ?? '')).toMatchObject({
      iss: idp.issuer,
      sub: nora.sub,
      aud: OIDC_CLIENT_ID,
    });
    // the provider takes the request: it asks the person to confirm the logout
    const confirm = await fetch(redirect);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('logout');
    // the session is over; a form account's logout stays local
    expect(
      (await injectWithToken(t.app, jwt, { method: 'GET', url: '/api/v3/user' })).statusCode,
    ).toBe(401);
    const local = await injectWithToken(t.app, admin, {
      method: 'POST',
      url: '/authentication/logout',
    });
    expect(local.json()).toEqual({});
    admin = await login(t.app, 'admin');
  });

  it('accepts an ID token the provider signed again unchanged (the checks below are on claims)', async () => {
    idp.tamperNextIdToken((claims) => claims);
    expect((await signIn()).statusCode).toBe(302);
  });

  it.each([
    ['another nonce', (c: Record<string, unknown>) => ({ ...c, nonce: 'not-the-nonce' })],
    ['another audience', (c: Record<string, unknown>) => ({ ...c, aud: 'someone-else' })],
    [
      'an expiry past the clock skew',
      (c: Record<string, unknown>) => {
        const now = Math.floor(Date.now() / 1000);
        return { ...c, iat: now - 600, exp: now - 120 };
      },
    ],
  ])('refuses an ID token with %s, leaving no session', async (_name, change) => {
    const before = await sessionCount();
    idp.tamperNextIdToken(change);
    const res = await signIn();
    expectRefused(res, 'oidc_token_invalid');
    expect(await sessionCount()).toBe(before);
  });

  it('refuses an answer that names another issuer, leaving no session', async () => {
    const before = await sessionCount();
    const { location, cookie } = await begin();
    const back = new URL(await idp.signIn(location.toString(), nora.username, nora.password));
    expect(back.searchParams.get('iss')).toBe(idp.issuer);
    back.searchParams.set('iss', 'https://sso.elsewhere.test');
    expectRefused(await callback(back.toString(), cookie), 'oidc_token_invalid');
    expect(await sessionCount()).toBe(before);
  });

  it("refuses the provider's own error answer with login_failed, leaving no session", async () => {
    const before = await sessionCount();
    const { location, cookie } = await begin();
    const state = location.searchParams.get('state') ?? '';
    const denied = `${PORTAL}/authentication/callback?state=${state}&error=access_denied`;
    expectRefused(await callback(denied, cookie), 'login_failed');
    expect(await sessionCount()).toBe(before);
  });

  it('refuses an address outside the allowed domains with user_disallowed', async () => {
    const before = await sessionCount();
    const res = await signIn(pau);
    expectRefused(res, 'user_disallowed');
    expect(await sessionCount()).toBe(before);
    expect(await t.app.users.findByProvider(pau.sub, CATEGORY, 'oidc')).toBeUndefined();
  });

  it('registers the person into the groups its groups claim names', async () => {
    await t.app.database.query(
      `INSERT INTO groups (id, name, category_id) VALUES ('school-staff', 'Staff', $1), ('school-lab', 'Lab', $1)`,
      [CATEGORY],
    );
    const list = await api('GET', '/admin/oidc-providers');
    const own = list.json<{ id: string }[]>()[0]?.id ?? '';
    const set = await api('PUT', `/admin/oidc-providers/${own}`, {
      claim_groups: 'teams',
      allowed_domains: null,
    });
    expect(set.statusCode, set.body).toBe(200);
    idp.tamperNextIdToken((claims) => ({
      ...claims,
      teams: ['staff', 'no-such-team', 'school-lab'],
    }));
    const res = await signIn(pau);
    expect(res.statusCode, res.body).toBe(302);
    const account = await t.app.users.findByProvider(pau.sub, CATEGORY, 'oidc');
    // the first value names the group "Staff", whatever its case; the others are secondary
    expect(account).toMatchObject({ groupId: 'school-staff', secondaryGroups: ['school-lab'] });
  });
});

describe('the category a sign-in guesses from a claim, and the registration code', () => {
  const ACADEMY = 'academy';
  const GROUP2 = 'academy-sso';
  const CODE_GROUP = 'academy-coded';
  let ownId: string;
  let siblingId: string;

  /** A sign-in whose ID token carries these values of the category claim. */
  const signInWith = (schools: string[], account = nora) => {
    idp.tamperNextIdToken((claims) => ({ ...claims, schools }));
    return signIn(account);
  };
  const cookieToken = (res: LightMyRequestResponse) =>
    /authorization=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1] ?? '';
  /** The login call continuing with a step's token. */
  const continueWith = (token: string, categoryId: string) =>
    t.app.inject({
      method: 'POST',
      url: `/authentication/login?provider=form&category_id=${categoryId}`,
      headers: { authorization: `Bearer ${token}` },
    });

  beforeAll(async () => {
    await addCategory(t.app, ACADEMY);
    await addGroup(t.app, GROUP2, ACADEMY);
    await addGroup(t.app, CODE_GROUP, ACADEMY);
    await t.app.database.query(
      `UPDATE groups SET enrollment = '{"advanced":"ACADEMY-CODE"}'::jsonb WHERE id = $1`,
      [CODE_GROUP],
    );
    const list = await api('GET', '/admin/oidc-providers');
    ownId = list.json<{ id: string }[]>()[0]?.id ?? '';
  });

  it('takes a category regex that compiles, and a sibling of the same issuer and client', async () => {
    const bad = await api('PUT', `/admin/oidc-providers/${ownId}`, { category_regex: '(' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().description_code).toBe('category_regex_invalid');
    const own = await api('PUT', `/admin/oidc-providers/${ownId}`, {
      category_attribute: 'schools',
      category_regex: '^school$',
      allowed_domains: null,
    });
    expect(own.statusCode, own.body).toBe(200);
    const sibling = await api('POST', '/admin/oidc-providers', {
      category_id: ACADEMY,
      label: 'School 2 account',
      issuer: idp.issuer,
      client_id: OIDC_CLIENT_ID,
      client_secret: OIDC_CLIENT_SECRET,
      category_regex: '^(school|academy)$',
      group_id: GROUP2,
      role: 'user',
    });
    expect(sibling.statusCode, sibling.body).toBe(200);
    siblingId = sibling.json<{ id: string }>().id;
    expect((await api('GET', `/admin/oidc-providers/${siblingId}`)).json()).toMatchObject({
      category_attribute: null,
      category_regex: '^(school|academy)$',
      registration_code_required: false,
    });
  });

  it('signs in to the one category whose regex matches, registering the person there', async () => {
    const res = await signInWith(['academy']);
    expect(res.statusCode, res.body).toBe(302);
    expect(decodePayload(cookieToken(res)).data).toMatchObject({
      provider: 'oidc',
      category_id: ACADEMY,
      group_id: GROUP2,
      role_id: 'user',
    });
  });

  it('answers category-select for several matches, and the chosen one logs in', async () => {
    const res = await signInWith(['school', 'other']);
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/desktops');
    const token = cookieToken(res);
    const claims = decodePayload(token);
    expect(claims.type).toBe('category-select');
    expect(claims.categories).toEqual([
      { id: ACADEMY, name: ACADEMY },
      { id: CATEGORY, name: CATEGORY },
    ]);
    expect((await continueWith(token, 'default')).statusCode).toBe(403);
    const chosen = await continueWith(token, CATEGORY);
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(decodePayload(chosen.body).data).toMatchObject({
      category_id: CATEGORY,
      group_id: GROUP,
      name: nora.name,
    });
  });

  it('refuses a person whose claim matches no category with user_disallowed', async () => {
    const before = await sessionCount();
    expectRefused(await signInWith(['elsewhere']), 'user_disallowed');
    expectRefused(await signInWith([]), 'user_disallowed');
    expect(await sessionCount()).toBe(before);
  });

  it('asks an unknown person for a registration code of the category, whose group they join', async () => {
    const coded = await api('PUT', `/admin/oidc-providers/${siblingId}`, {
      registration_code_required: true,
    });
    expect(coded.statusCode, coded.body).toBe(200);
    const res = await signInWith(['academy'], pau);
    expect(res.statusCode, res.body).toBe(302);
    const token = cookieToken(res);
    expect(decodePayload(token)).toMatchObject({
      type: 'register',
      provider: 'oidc',
      category_id: ACADEMY,
      username: pau.username,
    });
    expect(await t.app.users.findByProvider(pau.sub, ACADEMY, 'oidc')).toBeUndefined();
    const register = (code: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v3/user/register',
        headers: { authorization: `Bearer ${token}` },
        payload: { code },
      });
    expect((await register('NOT-A-CODE')).json().description_code).toBe('code_not_found');
    const made = await register('ACADEMY-CODE');
    expect(made.statusCode, made.body).toBe(200);
    const login = await continueWith(token, ACADEMY);
    expect(login.statusCode, login.body).toBe(200);
    expect(decodePayload(login.body).data).toMatchObject({
      provider: 'oidc',
      category_id: ACADEMY,
      group_id: CODE_GROUP,
      role_id: 'advanced',
      name: pau.name,
    });
    // the step logs in once; the person's next sign-in is their account's
    expect((await continueWith(token, ACADEMY)).statusCode).toBe(403);
    const again = await signInWith(['academy'], pau);
    expect(decodePayload(cookieToken(again)).data).toMatchObject({ group_id: CODE_GROUP });
  });

  it('places a person registered with a code in the groups its groups claim names', async () => {
    const COLLEGE = 'college';
    await addCategory(t.app, COLLEGE);
    await addGroup(t.app, 'college-sso', COLLEGE);
    await addGroup(t.app, 'college-coded', COLLEGE);
    await t.app.database.query(
      `INSERT INTO groups (id, name, category_id) VALUES ('college-lab', 'Lab', $1)`,
      [COLLEGE],
    );
    await t.app.database.query(
      `UPDATE groups SET enrollment = '{"advanced":"COLLEGE-CODE"}'::jsonb WHERE id = 'college-coded'`,
    );
    const college = await api('POST', '/admin/oidc-providers', {
      category_id: COLLEGE,
      label: 'College account',
      issuer: idp.issuer,
      client_id: OIDC_CLIENT_ID,
      client_secret: OIDC_CLIENT_SECRET,
      category_regex: '^college$',
      group_id: 'college-sso',
      role: 'user',
      registration_code_required: true,
      claim_groups: 'teams',
    });
    expect(college.statusCode, college.body).toBe(200);
    idp.tamperNextIdToken((claims) => ({
      ...claims,
      schools: ['college'],
      teams: ['no-such-team', 'lab', 'college-coded'],
    }));
    const token = cookieToken(await signIn(pau));
    expect(decodePayload(token)).toMatchObject({ type: 'register', category_id: COLLEGE });
    const made = await t.app.inject({
      method: 'POST',
      url: '/api/v3/user/register',
      headers: { authorization: `Bearer ${token}` },
      payload: { code: 'COLLEGE-CODE' },
    });
    expect(made.statusCode, made.body).toBe(200);
    // the code's role; the claim's groups as at an auto-registration (the code's group the fallback)
    expect(await t.app.users.findByProvider(pau.sub, COLLEGE, 'oidc')).toMatchObject({
      role: 'advanced',
      groupId: 'college-lab',
      secondaryGroups: ['college-coded'],
    });
  });
});
