/**
 * SAML 2.0 sign-in against a real identity provider (samlify in that role on loopback,
 * tests/support/saml-idp.ts): the provider of a category administered through its generated
 * resource (metadata read from its address on save, a write-only private key), our metadata, a
 * first sign-in that registers the person into the mapped group and role and opens a session like
 * a form login, the groups its group attribute names, the category-select step when its category
 * attribute matches two providers, single logout through the identity provider, the identity
 * provider's own signed logout request ending the person's sessions (an unsigned or wrongly signed
 * one refused with our error body), assertions encrypted to our published encryption certificate
 * (then required), and the refusals
 * (a relay state used twice, an assertion accepted before, an answer altered after signing, an
 * answer that does not follow the SAML schemas, another audience, an expired assertion, an answer
 * to another request), each answered with our error body and leaving no session.
 */
import { inflateRawSync } from 'node:zlib';
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
import {
  keyPair,
  SAML_ACCOUNTS,
  startSamlIdp,
  type AnswerValues,
  type PostedAnswer,
  type SamlIdp,
} from '../../../../tests/support/saml-idp.ts';

const PORTAL = 'http://portal.test';
const ACS = `${PORTAL}/authentication/saml/acs`;
const CATEGORY = 'college';
const GROUP = 'college-sso';
const SP_ENTITY = `${PORTAL}/saml`;

let t: TestApp;
let idp: SamlIdp;
let admin: string;
let providerId = '';
/** The login token of the first sign-in (the logout case ends its session). */
let firstToken = '';
const ours = keyPair();
/** Our encryption certificate and key (the last case). */
const encryption = keyPair();
/** Every answer of the test: none may carry our private key. */
const answers: LightMyRequestResponse[] = [];
const [ines] = SAML_ACCOUNTS as [(typeof SAML_ACCOUNTS)[0]];

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

/** The login button's start: the identity provider's address and the cookie that binds it. */
const begin = async (redirect = '/desktops') => {
  const res = await t.app.inject({
    method: 'GET',
    url: `/authentication/login/saml?provider=${providerId}&redirect=${encodeURIComponent(redirect)}`,
  });
  answers.push(res);
  expect(res.statusCode, res.body).toBe(302);
  const cookie = String(res.headers['set-cookie']).split(';')[0] ?? '';
  return { location: String(res.headers.location), cookie };
};

/** The browser posting the identity provider's answer to our assertion consumer service. */
const post = async (answer: PostedAnswer, cookie: string) => {
  expect(answer.action).toBe(ACS);
  const res = await t.app.inject({
    method: 'POST',
    url: '/authentication/saml/acs',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    payload: new URLSearchParams({
      SAMLResponse: answer.SAMLResponse,
      RelayState: answer.RelayState,
    }).toString(),
  });
  answers.push(res);
  return res;
};

/** A whole sign-in, the answer changed by `tamper` before the identity provider signs it. */
const signIn = async (tamper?: (values: AnswerValues) => AnswerValues) => {
  const { location, cookie } = await begin();
  if (tamper) idp.tamperNext(tamper);
  const answer = await idp.signIn(location, ines.username, ines.password);
  return { answer, cookie, res: await post(answer, cookie) };
};

const tokenOf = (res: LightMyRequestResponse) =>
  /authorization=([^;]+)/.exec(String(res.headers['set-cookie']))?.[1] ?? '';

const expectRefused = async (res: LightMyRequestResponse, code: string, before: number) => {
  expect(res.statusCode, res.body).toBe(401);
  expectErrorShape(res.json(), 'invalid_token');
  expect(res.json().description_code).toBe(code);
  expect(res.headers.location).toBeUndefined();
  expect(String(res.headers['set-cookie'] ?? '')).not.toContain('authorization=');
  expect(await sessionCount()).toBe(before);
};

beforeAll(async () => {
  idp = await startSamlIdp({ wantSignedRequests: true });
  t = await buildTestApp(await createTestDatabase(), { publicUrl: PORTAL });
  await t.app.settings.set('account_policies', []);
  await addCategory(t.app, CATEGORY);
  await addGroup(t.app, GROUP, CATEGORY);
  admin = await login(t.app, 'admin');
});
afterAll(async () => {
  await t?.close();
  await idp?.stop();
  const secrets = [ours, encryption].map((pair) => pair.privateKey.split('\n')[1] ?? '');
  for (const res of answers) for (const secret of secrets) expect(res.body).not.toContain(secret);
});

describe('the SAML provider of a category', () => {
  it('is administered as a resource: metadata read from its address, a write-only key', async () => {
    const body = {
      category_id: CATEGORY,
      label: 'College account',
      idp_metadata_url: idp.metadataUrl,
      sp_entity_id: SP_ENTITY,
      sp_certificate: ours.certificate,
      sp_private_key: ours.privateKey,
      attr_username: 'uid',
      group_id: GROUP,
      role: 'advanced',
    };
    const bad = await api('POST', '/admin/saml-providers', {
      ...body,
      idp_metadata: '<EntityDescriptor/>',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().description_code).toBe('saml_metadata_invalid');
    const created = await api('POST', '/admin/saml-providers', body);
    expect(created.statusCode, created.body).toBe(200);
    providerId = created.json<{ id: string }>().id;
    // an edit that leaves the metadata empty keeps the stored one
    const kept = await api('PUT', `/admin/saml-providers/${providerId}`, { idp_metadata: '' });
    expect(kept.statusCode, kept.body).toBe(200);
    const shown = await api('GET', `/admin/saml-providers/${providerId}`);
    expect(shown.json()).toMatchObject({
      category_name: CATEGORY,
      idp_entity_id: idp.entityId,
      idp_metadata: idp.metadata,
      idp_slo: true,
      sp_private_key_set: true,
      attr_name: 'displayName',
      attr_email: 'mail',
    });
    expect(shown.json()).not.toHaveProperty('sp_private_key');
    const again = await api('POST', '/admin/saml-providers', body);
    expect(again.json().description_code).toBe('saml_provider_exists');
    const audit = await t.app.database.query<{ text: string }>(
      "SELECT row_to_json(a)::text AS text FROM audit_log a WHERE target_type = 'saml_provider'",
    );
    expect(audit.length).toBeGreaterThan(0);
    for (const row of audit) expect(row.text).not.toContain(body.sp_private_key.split('\n')[1]);
    const providers = await t.app.inject({ method: 'GET', url: '/authentication/providers' });
    expect(providers.json().saml).toEqual([
      { id: providerId, category_id: CATEGORY, label: 'College account', icon: null },
    ]);
    const groupDelete = await injectWithToken(t.app, admin, {
      method: 'DELETE',
      url: `/api/v3/admin/groups/${GROUP}`,
    });
    expect(groupDelete.json().description_code).toBe('group_has_saml_provider');
  });

  it('publishes our metadata and sends the browser with a signed request and a relay state', async () => {
    const metadata = await t.app.inject({
      method: 'GET',
      url: `/authentication/saml/metadata?provider=${providerId}`,
    });
    expect(metadata.statusCode).toBe(200);
    expect(metadata.headers['content-type']).toMatch(/^application\/samlmetadata\+xml/);
    expect(metadata.body).toContain(`entityID="${SP_ENTITY}"`);
    expect(metadata.body).toContain(`Location="${ACS}"`);
    idp.trust(metadata.body);
    const { location, cookie } = await begin();
    const sso = new URL(location);
    expect(`${sso.origin}${sso.pathname}`).toBe(`${idp.url}/sso`);
    expect(sso.searchParams.get('SAMLRequest')).toBeTruthy();
    expect(sso.searchParams.get('Signature')).toBeTruthy();
    expect(cookie).toBe(`saml_state=${sso.searchParams.get('RelayState')}`);
    const unknown = await t.app.inject({
      method: 'GET',
      url: '/authentication/login/saml?provider=nope',
    });
    expect(unknown.statusCode).toBe(400);
    expectErrorShape(unknown.json(), 'bad_request');
  });

  it('registers the person at the first sign-in and opens a session as a form login does', async () => {
    const before = await sessionCount();
    const { res, answer, cookie } = await signIn((v) => ({ ...v, AssertionID: 'once' }));
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe('/desktops');
    expect(decodePayload(tokenOf(res)).data).toMatchObject({
      provider: 'saml',
      category_id: CATEGORY,
      group_id: GROUP,
      role_id: 'advanced',
      name: ines.name,
    });
    expect(await sessionCount()).toBe(before + 1);
    const account = await t.app.users.findByProvider(ines.nameId, CATEGORY, 'saml');
    expect(account).toMatchObject({ username: ines.username, email: ines.email, groupId: GROUP });
    firstToken = tokenOf(res);
    // the same answer posted again: its relay state is used up
    await expectRefused(await post(answer, cookie), 'saml_state_invalid', before + 1);
  });

  it('refuses an assertion accepted before, in an answer to a new request', async () => {
    const before = await sessionCount();
    const again = await signIn((v) => ({ ...v, AssertionID: 'once' }));
    await expectRefused(again.res, 'saml_response_invalid', before);
  });

  it('refuses an answer altered after it was signed', async () => {
    const before = await sessionCount();
    const { location, cookie } = await begin();
    const answer = await idp.signIn(location, ines.username, ines.password);
    const xml = Buffer.from(answer.SAMLResponse, 'base64').toString('utf8');
    const altered = xml.replace(ines.nameId, 'admin@idp.test');
    expect(altered).not.toBe(xml);
    const res = await post(
      { ...answer, SAMLResponse: Buffer.from(altered).toString('base64') },
      cookie,
    );
    await expectRefused(res, 'saml_response_invalid', before);
  });

  it('refuses an answer that does not follow the SAML schemas, its assertion still signed', async () => {
    const before = await sessionCount();
    const { location, cookie } = await begin();
    const answer = await idp.signIn(location, ines.username, ines.password);
    const xml = Buffer.from(answer.SAMLResponse, 'base64').toString('utf8');
    // an element the protocol schema allows nowhere, outside the signed assertion
    const altered = xml.replace(
      /(<\/(?:\w+:)?Status>)/,
      '$1<x:Unknown xmlns:x="urn:test:unknown"/>',
    );
    expect(altered).not.toBe(xml);
    const res = await post(
      { ...answer, SAMLResponse: Buffer.from(altered).toString('base64') },
      cookie,
    );
    await expectRefused(res, 'saml_response_invalid', before);
  });

  it.each([
    ['another audience', (v: AnswerValues) => ({ ...v, Audience: 'https://elsewhere.test' })],
    [
      'an expiry past the clock skew',
      (v: AnswerValues) => {
        const past = new Date(Date.now() - 120_000).toISOString();
        return { ...v, ConditionsNotOnOrAfter: past, SubjectConfirmationDataNotOnOrAfter: past };
      },
    ],
    ['an answer to another request', (v: AnswerValues) => ({ ...v, InResponseTo: '_other' })],
  ])('refuses %s, leaving no session', async (_name, tamper) => {
    const before = await sessionCount();
    await expectRefused((await signIn(tamper)).res, 'saml_response_invalid', before);
  });

  it('puts the person in the groups its group attribute names, at each sign-in when asked', async () => {
    await t.app.database.query(
      `INSERT INTO groups (id, name, category_id) VALUES ('college-staff', 'College Staff', $1), ('college-lab', 'Lab', $1)`,
      [CATEGORY],
    );
    const set = await api('PUT', `/admin/saml-providers/${providerId}`, {
      attr_groups: 'groups',
      groups_at_each_login: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    const { res } = await signIn();
    expect(res.statusCode, res.body).toBe(302);
    // the first value names "College Staff" by its distinguished name, the second no group
    expect(decodePayload(tokenOf(res)).data).toMatchObject({ group_id: 'college-staff' });
    const account = await t.app.users.findByProvider(ines.nameId, CATEGORY, 'saml');
    expect(account).toMatchObject({ groupId: 'college-staff', secondaryGroups: ['college-lab'] });
  });

  it('answers category-select when the category attribute matches two providers, and the chosen one logs in', async () => {
    await addCategory(t.app, 'annex');
    await addGroup(t.app, 'annex-sso', 'annex');
    const sibling = await api('POST', '/admin/saml-providers', {
      category_id: 'annex',
      label: 'Annex account',
      idp_metadata: idp.metadata,
      sp_entity_id: SP_ENTITY,
      category_regex: '^college-lab$',
      group_id: 'annex-sso',
      role: 'user',
    });
    expect(sibling.statusCode, sibling.body).toBe(200);
    const guessing = await api('PUT', `/admin/saml-providers/${providerId}`, {
      category_attribute: 'groups',
      category_regex: 'lab',
    });
    expect(guessing.statusCode, guessing.body).toBe(200);
    const before = await sessionCount();
    const { res } = await signIn();
    expect(res.statusCode, res.body).toBe(302);
    const token = tokenOf(res);
    const claims = decodePayload(token);
    expect(claims.type).toBe('category-select');
    expect(claims.categories).toEqual([
      { id: 'annex', name: 'annex' },
      { id: CATEGORY, name: CATEGORY },
    ]);
    expect(await sessionCount()).toBe(before);
    const chosen = await t.app.inject({
      method: 'POST',
      url: '/authentication/login?provider=form&category_id=annex',
      headers: { authorization: `Bearer ${token}` },
    });
    answers.push(chosen);
    expect(chosen.statusCode, chosen.body).toBe(200);
    expect(decodePayload(chosen.body).data).toMatchObject({
      provider: 'saml',
      category_id: 'annex',
      group_id: 'annex-sso',
      role_id: 'user',
      name: ines.name,
    });
  });

  it('logs out through the identity provider, which sends the browser back to the login page', async () => {
    const logout = await t.app.inject({
      method: 'POST',
      url: '/authentication/logout',
      headers: { authorization: `Bearer ${firstToken}` },
    });
    const redirect = String(logout.json().redirect);
    expect(redirect.startsWith(`${idp.url}/slo?SAMLRequest=`)).toBe(true);
    const back = await fetch(redirect, { redirect: 'manual' });
    const slo = new URL(String(back.headers.get('location')));
    expect(`${slo.origin}${slo.pathname}`).toBe(`${PORTAL}/authentication/saml/slo`);
    const home = await t.app.inject({ method: 'GET', url: `${slo.pathname}${slo.search}` });
    expect(home.statusCode).toBe(302);
    expect(home.headers.location).toBe('/login');
  });

  it("ends the person's sessions at the identity provider's signed logout request, and answers it signed", async () => {
    /** A session of the person in a category its attribute offers. */
    const sessionIn = async (categoryId: string) => {
      const { res } = await signIn();
      const chosen = await t.app.inject({
        method: 'POST',
        url: `/authentication/login?provider=form&category_id=${categoryId}`,
        headers: { authorization: `Bearer ${tokenOf(res)}` },
      });
      expect(chosen.statusCode, chosen.body).toBe(200);
      return chosen.body;
    };
    const sessions = [await sessionIn(CATEGORY), await sessionIn('annex')];
    const statuses = () =>
      Promise.all(
        sessions.map(
          async (token) =>
            (await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' }))
              .statusCode,
        ),
      );
    const slo = async (location: string) => {
      const at = new URL(location);
      expect(`${at.origin}${at.pathname}`).toBe(`${PORTAL}/authentication/saml/slo`);
      const res = await t.app.inject({ method: 'GET', url: `${at.pathname}${at.search}` });
      answers.push(res);
      return res;
    };
    // a request without a signature, or signed with a key the identity provider does not publish
    for (const signature of ['unsigned', 'foreign'] as const) {
      const refused = await slo(idp.logoutRequest(ines.nameId, signature));
      expect(refused.statusCode, refused.body).toBe(401);
      expectErrorShape(refused.json(), 'invalid_token');
      expect(refused.json().description_code).toBe('saml_logout_invalid');
    }
    expect(await statuses()).toEqual([200, 200]);

    const location = idp.logoutRequest(ines.nameId, 'signed');
    const samlRequest = new URL(location).searchParams.get('SAMLRequest') ?? '';
    const requestId = /\sID="([^"]+)"/.exec(
      inflateRawSync(Buffer.from(samlRequest, 'base64')).toString(),
    )?.[1];
    const done = await slo(location);
    expect(done.statusCode, done.body).toBe(302);
    const back = String(done.headers.location);
    expect(back.startsWith(`${idp.url}/slo?SAMLResponse=`)).toBe(true);
    expect(idp.logoutResponseOf(back)).toEqual({
      inResponseTo: requestId,
      status: 'urn:oasis:names:tc:SAML:2.0:status:Success',
      signed: true,
      relayState: 'idp-logout',
    });
    expect(await statuses()).toEqual([401, 401]);
  });
  it('takes assertions encrypted to our published encryption certificate, and then only those', async () => {
    const set = await api('PUT', `/admin/saml-providers/${providerId}`, {
      category_attribute: null,
      sp_encryption_certificate: encryption.certificate,
      sp_encryption_private_key: encryption.privateKey,
    });
    expect(set.statusCode, set.body).toBe(200);
    const shown = await api('GET', `/admin/saml-providers/${providerId}`);
    expect(shown.json()).toMatchObject({
      sp_encryption_certificate: encryption.certificate,
      sp_encryption_key_set: true,
    });
    expect(shown.json()).not.toHaveProperty('sp_encryption_private_key');
    const metadata = await t.app.inject({
      method: 'GET',
      url: `/authentication/saml/metadata?provider=${providerId}`,
    });
    const published = encryption.certificate.split('\n').slice(1, -2).join('');
    expect(metadata.body).toMatch(/<(\w+:)?KeyDescriptor use="encryption">/);
    expect(metadata.body.replace(/\s/g, '')).toContain(published);
    idp.trust(metadata.body);

    idp.encryptNext();
    const encrypted = await signIn();
    expect(Buffer.from(encrypted.answer.SAMLResponse, 'base64').toString()).toContain(
      'EncryptedAssertion',
    );
    expect(encrypted.res.statusCode, encrypted.res.body).toBe(302);
    expect(decodePayload(tokenOf(encrypted.res)).data).toMatchObject({
      provider: 'saml',
      category_id: CATEGORY,
    });
    // an assertion in the clear is refused once we take encrypted ones
    const before = await sessionCount();
    await expectRefused((await signIn()).res, 'saml_response_invalid', before);
  });
});
