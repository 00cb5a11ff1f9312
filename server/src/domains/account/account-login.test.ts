/**
 * The login steps from a real login to a session: disclaimer then forced password change (the
 * seeded newcomer), the sanitised disclaimer text, address verification, an expired password, and
 * the category choice for a username that exists in two categories.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  loginRequest,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';
import { start, type MailSink } from '../../../test/support/mail-sink.ts';
import { addCategory, addGroup, addUser } from '../../../test/support/fixtures.ts';
import { DEMO_ACCOUNT_POLICIES } from '../../seed/accounts.ts';
import type { AccountPolicy } from '../../platform/repository/settings-repository.ts';

let t: TestApp;
let sink: MailSink;
/** The demo policy of the default category (it asks for the disclaimer). */
const categoryPolicy = DEMO_ACCOUNT_POLICIES[1] as AccountPolicy;

beforeAll(async () => {
  sink = await start();
  t = await buildTestApp(await createTestDatabase(), { smtpUrl: sink.url });
});
afterAll(async () => {
  await t.close();
  await sink.stop();
});
beforeEach(async () => {
  await t.app.settings.set('account_policies', DEMO_ACCOUNT_POLICIES);
});

const post = (token: string, url: string, payload: Record<string, unknown> = {}) =>
  injectWithToken(t.app, token, { method: 'POST', url, payload });

const continueLogin = (token: string, categoryId = 'default') =>
  injectWithToken(t.app, token, {
    method: 'POST',
    url: `/authentication/login?provider=form&category_id=${categoryId}`,
  });

const typeOf = (jwt: string) => decodePayload(jwt).type;

describe('the newcomer: disclaimer, then a new password, then a session', () => {
  it('passes both steps in turn from a real login', async () => {
    const first = await loginRequest(t.app, 'newcomer');
    expect(first.statusCode).toBe(200);
    const disclaimerStep = first.body;
    expect(typeOf(disclaimerStep)).toBe('disclaimer-acknowledgement-required');
    const text = await injectWithToken(t.app, disclaimerStep, {
      method: 'GET',
      url: '/api/v3/disclaimer',
    });
    expect(text.statusCode).toBe(200);
    expect(text.json()).toMatchObject({ title: 'Terms of use' });
    // continuing before accepting answers the same step again
    expect(typeOf((await continueLogin(disclaimerStep)).body)).toBe(
      'disclaimer-acknowledgement-required',
    );
    expect((await post(disclaimerStep, '/authentication/acknowledge-disclaimer')).statusCode).toBe(
      200,
    );
    const second = await continueLogin(disclaimerStep);
    expect(second.statusCode).toBe(200);
    const resetStep = second.body;
    expect(typeOf(resetStep)).toBe('password-reset-required');
    const policy = await injectWithToken(t.app, resetStep, {
      method: 'GET',
      url: '/api/v3/user/expired/password-policy',
    });
    expect(policy.statusCode).toBe(200);
    expect(policy.json()).toMatchObject({ length: 8, not_username: true });
    const weak = await post(resetStep, '/authentication/reset-password', {
      password: 'Newcomer-1',
      password_confirmation: 'Newcomer-1',
    });
    expect(weak.json().description_code).toBe('password_username');
    expect(
      (
        await post(resetStep, '/authentication/reset-password', {
          password: 'Brand-new-pass-1',
          password_confirmation: 'Brand-new-pass-1',
        })
      ).statusCode,
    ).toBe(200);
    // the step token works once for the reset; it then continues the login
    expect(
      (
        await post(resetStep, '/authentication/reset-password', {
          password: 'Another-pass-2',
          password_confirmation: 'Another-pass-2',
        })
      ).statusCode,
    ).toBe(403);
    const session = await continueLogin(resetStep);
    expect(session.statusCode).toBe(200);
    expect(typeOf(session.body)).toBeUndefined();
    expect(
      (await injectWithToken(t.app, session.body, { method: 'GET', url: '/api/v3/user' }))
        .statusCode,
    ).toBe(200);
    expect((await loginRequest(t.app, 'newcomer')).statusCode).toBe(401);
    const direct = await loginRequest(t.app, 'newcomer', 'Brand-new-pass-1');
    expect(typeOf(direct.body)).toBeUndefined();
  });
});

describe('GET /api/v3/disclaimer', () => {
  it('answers the text in the user’s language, sanitised, and null without a text', async () => {
    await t.app.settings.set('disclaimer_text', {
      default: 'en',
      lang: {
        en: {
          title: 'Rules',
          body: '<p onclick="alert(1)">Be <strong>nice</strong><script>alert(2)</script></p><a href="javascript:alert(3)">x</a><a href="https://example.org/terms">terms</a>',
          footer: '<img src=x onerror=alert(4)><em>ok</em>',
        },
        es: { title: 'Normas', body: '<p>Sé amable</p>', footer: '' },
      },
    });
    const row = await t.app.users.findLocal('student30', 'default');
    await t.app.users.update(row?.id ?? '', { disclaimerAcknowledged: false });
    const step = (await loginRequest(t.app, 'student30')).body;
    const get = () => injectWithToken(t.app, step, { method: 'GET', url: '/api/v3/disclaimer' });
    expect((await get()).json()).toEqual({
      title: 'Rules',
      body: '<p>Be <strong>nice</strong></p><a rel="noopener noreferrer">x</a><a href="https://example.org/terms" rel="noopener noreferrer">terms</a>',
      footer: '<em>ok</em>',
    });
    await t.app.users.update(row?.id ?? '', { lang: 'es' });
    expect((await get()).json()).toEqual({ title: 'Normas', body: '<p>Sé amable</p>', footer: '' });
    await t.app.settings.set('disclaimer_text', { default: 'en', lang: {} });
    const none = await get();
    expect(none.statusCode).toBe(200);
    expect(none.json()).toBeNull();
    const session = (await loginRequest(t.app, 'user')).body;
    expect(
      (await injectWithToken(t.app, session, { method: 'GET', url: '/api/v3/disclaimer' }))
        .statusCode,
    ).toBe(403);
  });
});

describe('address verification at login', () => {
  it('asks for an address, mails the link, and logs in once it is verified', async () => {
    await t.app.settings.set('account_policies', [
      ...DEMO_ACCOUNT_POLICIES,
      { ...categoryPolicy, role: 'manager', disclaimer: false, email_verification: true },
    ]);
    const row = await t.app.users.findLocal('manager', 'default');
    await t.app.users.update(row?.id ?? '', { emailVerified: false });
    const step = (await loginRequest(t.app, 'manager')).body;
    expect(typeOf(step)).toBe('email-verification-required');
    const taken = await post(step, '/authentication/request-email-verification', {
      email: 'admin@example.org',
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().description_code).toBe('email_already_in_use');
    const asked = await post(step, '/authentication/request-email-verification', {
      email: 'boss@example.org',
    });
    expect(asked.statusCode).toBe(200);
    const mail = await sink.waitFor((m) => m.to.includes('boss@example.org'));
    const link = new URL(mail.links[0] ?? '');
    expect(link.pathname).toBe('/verify-email');
    expect(typeOf((await continueLogin(step)).body)).toBe('email-verification-required');
    const verified = await post(
      link.searchParams.get('token') ?? '',
      '/authentication/verify-email',
    );
    expect(verified.statusCode).toBe(200);
    expect(await t.app.users.findLocal('manager', 'default')).toMatchObject({
      email: 'boss@example.org',
      emailVerified: true,
    });
    const session = await continueLogin(step);
    expect(typeOf(session.body)).toBeUndefined();
  });
});

describe('password expiration', () => {
  it('asks a local account with an old password for a new one', async () => {
    await t.app.settings.set('account_policies', [
      { ...categoryPolicy, password: { ...categoryPolicy.password, expiration: 30 } },
    ]);
    const row = await t.app.users.findLocal('student29', 'default');
    expect(typeOf((await loginRequest(t.app, 'student29')).body)).toBeUndefined();
    await t.app.users.update(row?.id ?? '', {
      passwordLastUpdated: new Date(Date.now() - 31 * 86_400_000),
    });
    expect(typeOf((await loginRequest(t.app, 'student29')).body)).toBe('password-reset-required');
  });
});

describe('category selection', () => {
  it('lets a username in two categories choose, and logs in directly when only one matches', async () => {
    await addCategory(t.app, 'second');
    await addGroup(t.app, 'second-users', 'second');
    await addUser(t.app, {
      username: 'teacher',
      role: 'user',
      categoryId: 'second',
      groupId: 'second-users',
    });
    const anyCategory = (username: string, password = TEST_PASSWORD) =>
      t.app.inject({
        method: 'POST',
        url: '/authentication/login?provider=form',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ username, password }).toString(),
      });
    const select = await anyCategory('teacher');
    expect(select.statusCode).toBe(200);
    const claims = decodePayload(select.body);
    expect(claims).toMatchObject({
      type: 'category-select',
      username: 'teacher',
      categories: [
        { id: 'default', name: 'Default' },
        { id: 'second', name: 'second' },
      ],
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(600);
    const wrong = await continueLogin(select.body, 'missing');
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().description_code).toBe('invalid_token');
    const chosen = await continueLogin(select.body, 'second');
    expect(chosen.statusCode).toBe(200);
    expect(decodePayload(chosen.body)).toMatchObject({
      data: { category_id: 'second', group_id: 'second-users', role_id: 'user' },
    });
    const single = await anyCategory('advanced');
    expect(decodePayload(single.body)).toMatchObject({ data: { category_id: 'default' } });
    const bad = await anyCategory('teacher', 'wrong-password');
    expect(bad.statusCode).toBe(401);
    expect(bad.json().error).toBe('invalid_credentials');
    const unknown = await anyCategory('nobody-at-all', 'wrong-password');
    expect(unknown.json()).toEqual(bad.json());
    const [counter] = await t.app.database.query<{ count: number }>(
      "SELECT count FROM login_attempts WHERE key = 'acct:form:second:teacher'",
    );
    expect(counter?.count).toBe(1);
  });
});
