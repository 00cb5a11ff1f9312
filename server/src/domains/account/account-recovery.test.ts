/**
 * Forgot and reset password through real mail (loopback SMTP): the same answer for known and
 * unknown addresses, a link that works once and only while it is the newest, expiry, the rate
 * limit, and the log delivery used without SMTP_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  loginRequest,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';
import { start, type MailSink, type SinkMessage } from '../../../test/support/mail-sink.ts';
import { addCategory } from '../../../test/support/fixtures.ts';

let t: TestApp;
let sink: MailSink;

beforeAll(async () => {
  sink = await start();
  t = await buildTestApp(await createTestDatabase(), { smtpUrl: sink.url });
  await addCategory(t.app, 'other');
});
afterAll(async () => {
  await t.close();
  await sink.stop();
});

const forgot = (email: string, categoryId = 'default') =>
  t.app.inject({
    method: 'POST',
    url: '/authentication/forgot-password',
    payload: { category_id: categoryId, email },
  });

const reset = (token: string, password: string, confirmation = password) =>
  injectWithToken(t.app, token, {
    method: 'POST',
    url: '/authentication/reset-password',
    payload: { password, password_confirmation: confirmation },
  });

const tokenOf = (mail: SinkMessage) =>
  new URL(mail.links[0] ?? 'http://x').searchParams.get('token') ?? '';

const mailsTo = (address: string) => sink.messages.filter((m) => m.to.includes(address));

describe('POST /authentication/forgot-password', () => {
  it('answers the same status and body for a known and an unknown address; only the known gets mail', async () => {
    const known = await forgot('student20@example.org');
    const unknown = await forgot('nobody-here@example.org');
    const otherCategory = await forgot('nobody-here@example.org', 'other');
    expect(known.statusCode).toBe(200);
    expect(known.json()).toEqual({});
    for (const res of [unknown, otherCategory]) {
      expect(res.statusCode).toBe(known.statusCode);
      expect(res.body).toBe(known.body);
      expect(res.headers['content-type']).toBe(known.headers['content-type']);
    }
    // an unknown category is refused (categories are public; it tells nothing of accounts)
    const noCategory = await forgot('student20@example.org', 'no-such-category');
    expect(noCategory.statusCode).toBe(404);
    expect(noCategory.json().description_code).toBe('not_found');
    const mail = await sink.waitFor((m) => m.to.includes('student20@example.org'));
    expect(mail.subject).toBe('Reset your password');
    expect(new URL(mail.links[0] ?? '').pathname).toBe('/reset-password');
    expect(mail.html).toContain('/reset-password?token=');
    await t.app.mailer.idle();
    expect(mailsTo('nobody-here@example.org')).toHaveLength(0);
    expect(mailsTo('student20@example.org')).toHaveLength(1);
  });

  it('mails a link that resets the password once and ends the user’s sessions', async () => {
    const session = await login(t.app, 'student21');
    await forgot('student21@example.org');
    const mail = await sink.waitFor((m) => m.to.includes('student21@example.org'));
    const token = tokenOf(mail);
    expect(decodePayload(token)).toMatchObject({ type: 'password-reset', kid: 'isardvdi' });
    const claims = decodePayload(token);
    expect((claims.exp as number) - (claims.iat as number)).toBeLessThanOrEqual(3600);
    expect(typeof claims.jti).toBe('string');
    const mismatch = await reset(token, 'New-password-21', 'Other-password-21');
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().description_code).toBe('sameAs');
    const done = await reset(token, 'New-password-21');
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({});
    const replay = await reset(token, 'Third-password-21');
    expect(replay.statusCode).toBe(403);
    expect(replay.json().description_code).toBe('invalid_token');
    expect(
      (await injectWithToken(t.app, session, { method: 'GET', url: '/api/v3/user' })).statusCode,
    ).toBe(401);
    expect((await loginRequest(t.app, 'student21')).statusCode).toBe(401);
    expect((await loginRequest(t.app, 'student21', 'New-password-21')).statusCode).toBe(200);
  });

  it('voids the first link when a second one is mailed', async () => {
    await forgot('student22@example.org');
    const first = await sink.waitFor((m) => m.to.includes('student22@example.org'));
    await forgot('student22@example.org');
    const second = await sink.waitFor((m) => m.to.includes('student22@example.org') && m !== first);
    const old = await reset(tokenOf(first), 'New-password-22');
    expect(old.statusCode).toBe(403);
    expect(old.json().description_code).toBe('invalid_token');
    expect((await reset(tokenOf(second), 'New-password-22')).statusCode).toBe(200);
  });

  it('refuses an expired link with 401 token_expired', async () => {
    const row = await t.app.users.findLocal('student23', 'default');
    await t.app.users.update(row?.id ?? '', { passwordResetJti: 'expired-link' });
    const expired = await t.app.tokens.signSpecial('password-reset', row?.id ?? '', -120, {
      jti: 'expired-link',
    });
    const res = await reset(expired, 'New-password-23');
    expect(res.statusCode).toBe(401);
    expect(res.json().description_code).toBe('token_expired');
    expect((await loginRequest(t.app, 'student23')).statusCode).toBe(200);
  });

  it('refuses a login token and other token types on reset-password', async () => {
    const session = await login(t.app, 'student24');
    const res = await reset(session, 'New-password-24');
    expect(res.statusCode).toBe(403);
    expect(res.json().description_code).toBe('invalid_token');
    const verification = await t.app.tokens.signSpecial('email-verification', 'x', 600, {
      jti: 'j',
      email: 'x@example.org',
    });
    expect((await reset(verification, 'New-password-24')).statusCode).toBe(403);
    const missing = await t.app.inject({
      method: 'POST',
      url: '/authentication/reset-password',
      payload: { password: 'a', password_confirmation: 'a' },
    });
    expect(missing.statusCode).toBe(401);
    expect((await loginRequest(t.app, 'student24')).statusCode).toBe(200);
  });

  it('stops mailing one address after 10 requests, answering 200 {} all the same', async () => {
    const address = 'student25@example.org';
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await forgot(address));
    for (const res of answers) {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({});
    }
    await t.app.mailer.idle();
    expect(mailsTo(address)).toHaveLength(10);
  });

  it('sends nothing for an unverified address', async () => {
    const row = await t.app.users.findLocal('student26', 'default');
    await t.app.users.update(row?.id ?? '', { emailVerified: false });
    expect((await forgot('student26@example.org')).json()).toEqual({});
    await t.app.mailer.idle();
    expect(mailsTo('student26@example.org')).toHaveLength(0);
  });
});

describe('mail without SMTP_URL', () => {
  it('writes the recipient, the subject and the link on its own line to the log', async () => {
    const lines: string[] = [];
    const logged = await buildTestApp(
      await createTestDatabase(),
      { logLevel: 'info', logFormat: 'pretty' },
      { logSink: { write: (chunk: string) => lines.push(chunk) } },
    );
    try {
      expect(logged.app.mailer.delivery).toBe('log');
      const res = await logged.app.inject({
        method: 'POST',
        url: '/authentication/forgot-password',
        payload: { category_id: 'default', email: 'user@example.org' },
      });
      expect(res.statusCode).toBe(200);
      await logged.app.mailer.idle();
      const text = lines.join('');
      expect(text).toContain('mail to user@example.org: "Reset your password"');
      const link = /^ {4}(http:\/\/\S+\/reset-password\?token=\S+)$/m.exec(text)?.[1] ?? '';
      const token = new URL(link).searchParams.get('token') ?? '';
      expect(decodePayload(token).type).toBe('password-reset');
      const done = await injectWithToken(logged.app, token, {
        method: 'POST',
        url: '/authentication/reset-password',
        payload: { password: 'Logged-password-1', password_confirmation: 'Logged-password-1' },
      });
      expect(done.statusCode).toBe(200);
      expect(
        (
          await logged.app.inject({
            method: 'POST',
            url: '/authentication/login?provider=form&category_id=default',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            payload: `username=user&password=${TEST_PASSWORD}`,
          })
        ).statusCode,
      ).toBe(401);
    } finally {
      await logged.close();
    }
  });
});
