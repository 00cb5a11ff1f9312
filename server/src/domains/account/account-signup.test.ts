/**
 * Sign-up by mail and registration with a code (loopback SMTP): the same answer whether the
 * username or address is taken, the code errors, and the happy path from the mail to a session.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  type TestApp,
} from '../../../test/support/helper.ts';
import { start, type MailSink, type SinkMessage } from '../../../test/support/mail-sink.ts';
import { addCategory } from '../../../test/support/fixtures.ts';
import { groups } from '../../platform/db/schema.ts';

let t: TestApp;
let sink: MailSink;

beforeAll(async () => {
  sink = await start();
  t = await buildTestApp(await createTestDatabase(), { smtpUrl: sink.url });
  await addCategory(t.app, 'other');
  await t.app.db.insert(groups).values({
    id: 'other-users',
    categoryId: 'other',
    name: 'other-users',
    enrollment: { user: 'OTHER-CODE' },
  });
});
afterAll(async () => {
  await t.close();
  await sink.stop();
});

const signup = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'POST', url: '/authentication/register', payload: body, headers });

const tokenOf = (mail: SinkMessage) =>
  new URL(mail.links[0] ?? 'http://x').searchParams.get('token') ?? '';

const register = (
  token: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
) =>
  injectWithToken(t.app, token, {
    method: 'POST',
    url: '/api/v3/user/register',
    payload: body,
    headers,
  });

const loginWith = (token: string, categoryId = 'default') =>
  injectWithToken(t.app, token, {
    method: 'POST',
    url: `/authentication/login?provider=form&category_id=${categoryId}`,
  });

/** A register token as the sign-up mail carries it. */
const registerToken = (username: string, email: string, categoryId = 'default') =>
  t.app.tokens.signSpecial('register', username, 600, {
    jti: `jti-${username}`,
    category_id: categoryId,
    username,
    name: username,
    email,
    provider: 'local',
  });

describe('POST /authentication/register (sign-up)', () => {
  it('answers the same for a free and a taken username or address; the mails differ', async () => {
    const free = await signup({
      category_id: 'default',
      username: 'fresh01',
      name: 'Fresh One',
      email: 'fresh01@example.org',
    });
    const takenName = await signup({
      category_id: 'default',
      username: 'user',
      name: 'Not User',
      email: 'someone-else@example.org',
    });
    const takenAddress = await signup({
      category_id: 'default',
      username: 'fresh02',
      name: 'Fresh Two',
      email: 'admin@example.org',
    });
    const noCategory = await signup({
      category_id: 'missing',
      username: 'fresh03',
      name: 'Fresh Three',
      email: 'fresh03@example.org',
    });
    expect(free.statusCode).toBe(200);
    expect(free.json()).toEqual({});
    for (const res of [takenName, takenAddress, noCategory]) {
      expect(res.statusCode).toBe(free.statusCode);
      expect(res.body).toBe(free.body);
    }
    const link = await sink.waitFor((m) => m.to.includes('fresh01@example.org'));
    expect(link.subject).toBe('Finish creating your account');
    expect(new URL(link.links[0] ?? '').pathname).toBe('/register');
    expect(decodePayload(tokenOf(link))).toMatchObject({
      type: 'register',
      category_id: 'default',
      username: 'fresh01',
      name: 'Fresh One',
      email: 'fresh01@example.org',
      provider: 'local',
    });
    const notice = await sink.waitFor((m) => m.to.includes('someone-else@example.org'));
    expect(notice.subject).toBe('About your sign-up request');
    expect(new URL(notice.links[0] ?? '').pathname).toBe('/forgot-password');
    expect(notice.text).not.toContain('token=');
    await sink.waitFor((m) => m.to.includes('admin@example.org'));
    await t.app.mailer.idle();
    expect(sink.messages.filter((m) => m.to.includes('fresh03@example.org'))).toHaveLength(0);
  });
});

describe('POST /api/v3/user/register', () => {
  it('answers 404 code_not_found, 404 for another category’s code, 409 for an existing account', async () => {
    const token = await registerToken('coded01', 'coded01@example.org');
    const unknown = await register(token, {
      code: 'NO-SUCH-CODE',
      password: 'Coded-pass-1',
      password_confirmation: 'Coded-pass-1',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().description_code).toBe('code_not_found');
    const elsewhere = await register(token, {
      code: 'OTHER-CODE',
      password: 'Coded-pass-1',
      password_confirmation: 'Coded-pass-1',
    });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.json().description_code).toBe('code_not_found');
    const existing = await register(await registerToken('user', 'user2@example.org'), {
      code: 'WELCOME-USERS',
      password: 'Coded-pass-1',
      password_confirmation: 'Coded-pass-1',
    });
    expect(existing.statusCode).toBe(409);
    expect(existing.json().error).toBe('conflict');
    const noPassword = await register(token, { code: 'WELCOME-USERS' });
    expect(noPassword.statusCode).toBe(400);
    expect(noPassword.json().description_code).toBe('missing_required_data');
    const mismatch = await register(token, {
      code: 'WELCOME-USERS',
      password: 'Coded-pass-1',
      password_confirmation: 'Coded-pass-2',
    });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json().description_code).toBe('sameAs');
    const weak = await register(token, {
      code: 'WELCOME-USERS',
      password: 'short',
      password_confirmation: 'short',
    });
    expect(weak.statusCode).toBe(400);
    expect(weak.json().description_code).toBe('password_character_length');
    const login = await t.app.inject({
      method: 'POST',
      url: '/api/v3/user/register',
      payload: { code: 'WELCOME-USERS' },
    });
    expect(login.statusCode).toBe(401);
    expect(await t.app.users.findLocal('coded01', 'default')).toBeUndefined();
  });

  it("another category's valid code answers exactly like an unknown code (no existence oracle)", async () => {
    const token = await registerToken('oracle01', 'oracle01@example.org');
    const body = (code: string) => ({
      code,
      password: 'Coded-pass-1',
      password_confirmation: 'Coded-pass-1',
    });
    const unknown = await register(token, body('NO-SUCH-CODE'));
    const elsewhere = await register(token, body('OTHER-CODE'));
    expect(elsewhere.statusCode).toBe(unknown.statusCode);
    expect(elsewhere.json()).toEqual(unknown.json());
    expect(unknown.json().description_code).toBe('code_not_found');
  });

  it('allows 10 wrong registration codes per 10 minutes per address, then 429 with Retry-After, even for a right code', async () => {
    const token = await registerToken('guess01', 'guess01@example.org');
    const body = (code: string) => ({
      code,
      password: 'Coded-pass-1',
      password_confirmation: 'Coded-pass-1',
    });
    const send = (code: string, remoteAddress: string) =>
      t.app.inject({
        method: 'POST',
        url: '/api/v3/user/register',
        payload: body(code),
        headers: { authorization: `Bearer ${token}` },
        remoteAddress,
      });
    for (let i = 0; i < 10; i++) {
      const res = await send(`GUESS-${i}`, '203.0.113.9');
      expect(res.statusCode, `attempt ${i + 1}`).toBe(404);
    }
    for (const code of ['GUESS-10', 'WELCOME-USERS']) {
      const res = await send(code, '203.0.113.9');
      expect(res.statusCode, code).toBe(429);
      expect(res.json().error).toBe('too_many_requests');
      const retryAfter = Date.parse(String(res.headers['retry-after']));
      expect(retryAfter).toBeGreaterThan(Date.now());
      expect(retryAfter).toBeLessThanOrEqual(Date.now() + 10 * 60_000 + 1000);
    }
    expect(await t.app.users.findLocal('guess01', 'default')).toBeUndefined();
    // Another address is not held back by this one's guesses.
    const other = await send('NO-SUCH-CODE', '203.0.113.10');
    expect(other.statusCode).toBe(404);
  });

  it('registers from the mailed link and logs in with the same token, once', async () => {
    await signup(
      { category_id: 'default', username: 'newbie', name: 'New Bie', email: 'newbie@example.org' },
      { 'accept-language': 'xx, fr-FR;q=0.9, en;q=0.8' },
    );
    const mail = await sink.waitFor((m) => m.to.includes('newbie@example.org'));
    expect(mail.subject).toBe('Terminez la création de votre compte');
    const token = tokenOf(mail);
    const before = await loginWith(token);
    expect(before.statusCode).toBe(401);
    expect(before.json().description_code).toBe('invalid_token');
    const res = await register(
      token,
      { code: 'CLASS-A-2026', password: 'Joined-pass-1', password_confirmation: 'Joined-pass-1' },
      { 'accept-language': 'fr-FR,fr;q=0.9' },
    );
    expect(res.statusCode).toBe(200);
    const id = res.json().id as string;
    const row = await t.app.users.byId(id);
    expect(row).toMatchObject({
      uid: 'newbie',
      username: 'newbie',
      name: 'New Bie',
      provider: 'local',
      categoryId: 'default',
      groupId: 'default-class-a',
      role: 'user',
      email: 'newbie@example.org',
      emailVerified: true,
      lang: 'fr',
      active: true,
      disclaimerAcknowledged: false,
    });
    const again = await register(token, {
      code: 'CLASS-A-2026',
      password: 'Joined-pass-1',
      password_confirmation: 'Joined-pass-1',
    });
    expect(again.statusCode).toBe(409);
    // the default category's demo policy asks a new account to accept the disclaimer first
    const first = await loginWith(token);
    expect(first.statusCode).toBe(200);
    const step = first.body;
    expect(decodePayload(step)).toMatchObject({
      type: 'disclaimer-acknowledgement-required',
      user_id: id,
    });
    expect(
      (
        await injectWithToken(t.app, step, {
          method: 'POST',
          url: '/authentication/acknowledge-disclaimer',
          payload: {},
        })
      ).statusCode,
    ).toBe(200);
    const session = await loginWith(step);
    expect(session.statusCode).toBe(200);
    expect(decodePayload(session.body)).toMatchObject({
      sub: id,
      data: { role_id: 'user', group_id: 'default-class-a', category_id: 'default' },
    });
    const replay = await loginWith(token);
    expect(replay.statusCode).toBe(403);
    expect(replay.json().description_code).toBe('invalid_token');
  });

  it('gives an advanced role from an advanced code', async () => {
    const token = await registerToken('adv01', 'adv01@example.org');
    const res = await register(token, {
      code: 'WELCOME-ADVANCED',
      password: 'Advanced-pass-1',
      password_confirmation: 'Advanced-pass-1',
    });
    expect(res.statusCode).toBe(200);
    expect(await t.app.users.byId(res.json().id as string)).toMatchObject({
      role: 'advanced',
      groupId: 'default-advanced',
      lang: null,
    });
  });
});
