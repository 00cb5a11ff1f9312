/**
 * The profile's account operations on a real database, with mail through a loopback SMTP server:
 * password changes under the account policy (every code), sessions ended on request, the address
 * change and its verification link, language, password policy and the profile page's data.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';
import { start, type MailSink } from '../../../test/support/mail-sink.ts';
import {
  defaultSettings,
  type AccountPolicy,
} from '../../platform/repository/settings-repository.ts';

let t: TestApp;
let sink: MailSink;
const base = defaultSettings.account_policies[0] as AccountPolicy;

beforeAll(async () => {
  sink = await start();
  t = await buildTestApp(await createTestDatabase(), { smtpUrl: sink.url });
});
afterAll(async () => {
  await t.close();
  await sink.stop();
});
beforeEach(async () => {
  await t.app.settings.set('account_policies', [base]);
});

const updateUser = (token: string, payload: Record<string, unknown>) =>
  injectWithToken(t.app, token, { method: 'PUT', url: '/api/v3/user', payload });

const tokenOf = (link: string | undefined) =>
  new URL(link ?? 'http://x').searchParams.get('token') ?? '';

describe('PUT /api/v3/user: password', () => {
  it('answers every password-policy code in order, with real counts', async () => {
    await t.app.settings.set('account_policies', [
      {
        ...base,
        password: {
          length: 12,
          uppercase: 2,
          lowercase: 2,
          digits: 2,
          special_characters: 2,
          old_passwords: 2,
          not_username: true,
          expiration: 0,
        },
      },
    ]);
    const token = await login(t.app, 'student01');
    const change = (password: string, current = TEST_PASSWORD) =>
      updateUser(token, { current_password: current, password, password_confirmation: password });
    const cases: [string, string, Record<string, unknown> | null][] = [
      ['Ab1!', 'password_character_length', { num: 12 }],
      ['Abcdefghij12!?', 'password_uppercase', { num: 2 }],
      ['ABCDEFGHIj12!?', 'password_lowercase', { num: 2 }],
      ['ABcdefghij1!?', 'password_digits', { num: 2 }],
      ['ABcdefghij12!x', 'password_special_characters', { num: 2 }],
      ['ABxxStudent01yy!?', 'password_username', null],
    ];
    for (const [password, code, params] of cases) {
      const res = await change(password);
      expect(res.statusCode, password).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
      expect(res.json().description_code, password).toBe(code);
      expect(res.json().params, password).toEqual(params);
    }
    const first = 'First-Pass-12!?';
    expect((await change(first)).statusCode).toBe(200);
    const reuse = await change(first, first);
    expect(reuse.statusCode).toBe(400);
    expect(reuse.json()).toMatchObject({
      description_code: 'password_already_used',
      params: { num: 2 },
    });
  });

  it('refuses a known-common password (password123 and the like) with 400 password_common and keeps the old one', async () => {
    const token = await login(t.app, 'student03');
    for (const password of ['password123', 'Qwerty123!', 'P@ssw0rd2024', 'Summer2024!']) {
      const res = await updateUser(token, {
        current_password: TEST_PASSWORD,
        password,
        password_confirmation: password,
      });
      expect(res.statusCode, password).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
      expect(res.json().description_code, password).toBe('password_common');
    }
    expect((await loginRequest(t.app, 'student03')).statusCode).toBe(200);
  });

  it('refuses a wrong current password with 403 wrong_password_entered and changes nothing', async () => {
    const token = await login(t.app, 'student02');
    const res = await updateUser(token, {
      current_password: 'not-the-password',
      password: 'Another-pass-1',
      password_confirmation: 'Another-pass-1',
    });
    expect(res.statusCode).toBe(403);
    expectErrorShape(res.json(), 'forbidden');
    expect(res.json().description_code).toBe('wrong_password_entered');
    expect((await loginRequest(t.app, 'student02')).statusCode).toBe(200);
  });

  it('refuses a confirmation that differs with 400 sameAs on the confirmation field', async () => {
    const token = await login(t.app, 'student03');
    const res = await updateUser(token, {
      current_password: TEST_PASSWORD,
      password: 'Another-pass-1',
      password_confirmation: 'Another-pass-2',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().description_code).toBe('sameAs');
    expect(res.json().errors).toEqual({ '/password_confirmation': 'sameAs' });
    const missing = await updateUser(token, { password: 'Another-pass-1' });
    expect(missing.statusCode).toBe(400);
  });

  it('keeps other sessions when asked, ends them by default, and never ends the caller’s', async () => {
    const mine = await login(t.app, 'student04');
    const other = await login(t.app, 'student04');
    const user = (token: string) =>
      injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' });
    const kept = await updateUser(mine, {
      current_password: TEST_PASSWORD,
      password: 'Second-pass-1',
      password_confirmation: 'Second-pass-1',
      end_other_sessions: false,
    });
    expect(kept.statusCode).toBe(200);
    expect((await user(other)).statusCode).toBe(200);
    expect((await user(mine)).statusCode).toBe(200);
    const ended = await updateUser(mine, {
      current_password: 'Second-pass-1',
      password: 'Third-pass-1',
      password_confirmation: 'Third-pass-1',
    });
    expect(ended.statusCode).toBe(200);
    expect((await user(other)).statusCode).toBe(401);
    expect((await user(mine)).statusCode).toBe(200);
    // the old passwords no longer log in, the new one does
    expect((await loginRequest(t.app, 'student04')).statusCode).toBe(401);
    expect((await loginRequest(t.app, 'student04', 'Second-pass-1')).statusCode).toBe(401);
    expect((await loginRequest(t.app, 'student04', 'Third-pass-1')).statusCode).toBe(200);
    const row = await t.app.users.findLocal('student04', 'default');
    expect(row?.passwordResetRequired).toBe(false);
    expect(row?.passwordLastUpdated?.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });

  it('updates the name and pushes users_data without secrets', async () => {
    const token = await login(t.app, 'student05');
    const published: unknown[] = [];
    t.app.events.subscribe((event) => {
      if (event.name === 'profile.updated') published.push(event.payload);
    });
    const res = await updateUser(token, { name: 'Renamed Student' });
    expect(res.statusCode).toBe(200);
    expect((await t.app.users.findLocal('student05', 'default'))?.name).toBe('Renamed Student');
    expect(published.at(-1)).toMatchObject({ name: 'Renamed Student', username: 'student05' });
    expect(JSON.stringify(published.at(-1))).not.toMatch(/argon2|jti|password|key/i);
  });
});

describe('PUT /api/v3/user: email', () => {
  it('stores the new address unverified and mails a link to it that verifies it once', async () => {
    const token = await login(t.app, 'student06');
    const res = await updateUser(token, {
      email: 'student06.new@example.org',
      current_password: TEST_PASSWORD,
    });
    expect(res.statusCode).toBe(200);
    let row = await t.app.users.findLocal('student06', 'default');
    expect(row).toMatchObject({ email: 'student06.new@example.org', emailVerified: false });
    const mail = await sink.waitFor((m) => m.to.includes('student06.new@example.org'));
    expect(mail.subject).toBe('Confirm your email address');
    const link = mail.links[0] ?? '';
    expect(new URL(link).pathname).toBe('/verify-email');
    const verifyToken = tokenOf(link);
    expect(decodePayload(verifyToken)).toMatchObject({
      type: 'email-verification',
      email: 'student06.new@example.org',
      user_id: row?.id,
    });
    const verify = () =>
      injectWithToken(t.app, verifyToken, {
        method: 'POST',
        url: '/authentication/verify-email',
        payload: {},
      });
    expect((await verify()).statusCode).toBe(200);
    row = await t.app.users.findLocal('student06', 'default');
    expect(row).toMatchObject({ emailVerified: true, emailVerificationJti: null });
    const again = await verify();
    expect(again.statusCode).toBe(403);
    expect(again.json().description_code).toBe('invalid_token');
  });

  it('needs the current password to change the address', async () => {
    const token = await login(t.app, 'student07');
    const missing = await updateUser(token, { email: 'student07.x@example.org' });
    expect(missing.statusCode).toBe(400);
    const wrong = await updateUser(token, {
      email: 'student07.x@example.org',
      current_password: 'not-the-password',
    });
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().description_code).toBe('wrong_password_entered');
    expect((await t.app.users.findLocal('student07', 'default'))?.email).toBe(
      'student07@example.org',
    );
  });

  it('refuses an address another account of the category has verified, and the same address', async () => {
    const token = await login(t.app, 'student07');
    const taken = await updateUser(token, {
      email: 'student08@example.org',
      current_password: TEST_PASSWORD,
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().description_code).toBe('email_already_in_use');
    const same = await updateUser(token, {
      email: 'STUDENT07@example.org',
      current_password: TEST_PASSWORD,
    });
    expect(same.statusCode).toBe(400);
    expect(same.json().description_code).toBe('email_unchanged');
  });

  it('mails a fresh link on request that voids the previous one, in the user’s language', async () => {
    const token = await login(t.app, 'student09');
    expect(
      (
        await injectWithToken(t.app, token, {
          method: 'POST',
          url: '/api/v3/user/email-verification',
          payload: {},
        })
      ).json().description_code,
    ).toBe('email_already_verified');
    expect(
      (
        await injectWithToken(t.app, token, {
          method: 'PUT',
          url: '/api/v3/user/language/es',
        })
      ).statusCode,
    ).toBe(200);
    await updateUser(token, { email: 'student09.b@example.org', current_password: TEST_PASSWORD });
    const first = await sink.waitFor((m) => m.to.includes('student09.b@example.org'));
    expect(first.subject).toBe('Confirma tu dirección de correo');
    const resend = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/api/v3/user/email-verification',
      payload: {},
    });
    expect(resend.statusCode).toBe(200);
    const second = await sink.waitFor(
      (m) => m.to.includes('student09.b@example.org') && m !== first,
    );
    const verify = (link: string | undefined) =>
      injectWithToken(t.app, tokenOf(link), {
        method: 'POST',
        url: '/authentication/verify-email',
        payload: {},
      });
    expect((await verify(first.links[0])).statusCode).toBe(403);
    expect((await verify(second.links[0])).statusCode).toBe(200);
  });
});

describe('language, password policy and profile', () => {
  it('stores the language and shows it in GET /user and the profile', async () => {
    const token = await login(t.app, 'student10');
    const res = await injectWithToken(t.app, token, {
      method: 'PUT',
      url: '/api/v3/user/language/ca',
    });
    expect(res.statusCode).toBe(200);
    const user = await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' });
    expect(user.json().lang).toBe('ca');
    const profile = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/user/profile',
    });
    expect(profile.json().language).toBe('ca');
    const bad = await injectWithToken(t.app, token, {
      method: 'PUT',
      url: '/api/v3/user/language/xx',
    });
    expect(bad.statusCode).toBe(400);
  });

  it('answers the applicable password policy, or false without one', async () => {
    const token = await login(t.app, 'student11');
    const get = () =>
      injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user/password-policy' });
    expect((await get()).json()).toEqual(base.password);
    await t.app.settings.set('account_policies', [{ ...base, category: 'elsewhere' }]);
    const none = await get();
    expect(none.statusCode).toBe(200);
    expect(none.json()).toBe(false);
  });

  it('shows the profile page data and no secret', async () => {
    const token = await login(t.app, 'user');
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/user/profile',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      username: 'user',
      email: 'user@example.org',
      email_verified: true,
      provider: 'local',
      role_name: 'User',
      category_name: 'Default',
      group_name: 'default-users',
      secondary_groups_names: [],
      restriction_applied: expect.any(String),
      api_key: { exists: false, expires: 0 },
      vpn_address: null,
      migration: { export: true, import: true },
      show_change_email_button: true,
      mail_delivery: 'smtp',
      password_policy: base.password,
    });
    expect(body.used.desktops).toBe(3);
    expect(body.used).toMatchObject({
      deployments_total: 0,
      deployment_desktops: 0,
      started_deployment_desktops: 0,
    });
    const text = res.body;
    for (const secret of [
      'argon2',
      'password_hash',
      'history',
      'jti',
      'private',
      'wg_',
      'api_key_hash',
    ])
      expect(text, secret).not.toContain(secret);
  });
});
