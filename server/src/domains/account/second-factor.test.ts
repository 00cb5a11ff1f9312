/**
 * The second factor through the built app: enrolling an authenticator app from the profile (the
 * factor is on only after a valid code; ten recovery codes once), the second login step (the
 * session only after the code; the step token opens one session), a replayed code refused, a
 * recovery code working once, five wrong codes locking the step, a policy that requires a second
 * factor (set by the admin) sending a user without one to enrolment at the login, the admin's
 * audited reset, and disabling from the profile with the password.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addCategory, addGroup, addUser, userRow } from '../../../test/support/fixtures.ts';
import { totpCode } from '../../platform/auth/totp.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  await addCategory(t.app, 'sf');
  await addGroup(t.app, 'sf-users', 'sf');
  await addUser(t.app, { username: 'pupil', role: 'user', categoryId: 'sf', groupId: 'sf-users' });
  // The admin turns the second factor on for the category's policy (made from the default one).
  const admin = await login(t.app, 'admin');
  const set = await call(admin, 'PUT', '/api/v3/admin/settings/second-factor', {
    category: 'sf',
    role: 'all',
    required: true,
  });
  expect(set.statusCode).toBe(200);
  t.app.settings.invalidate();
  const shown = await call(admin, 'GET', '/api/v3/admin/settings');
  expect(shown.json()).toMatchObject({ second_factor: [{ category: 'sf', role: 'all' }] });
});
afterAll(async () => {
  await t.close();
});

const call = (
  token: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
) => injectWithToken(t.app, token, { method, url, ...(payload ? { payload } : {}) });

const continueLogin = (token: string, categoryId = 'default') =>
  call(token, 'POST', `/authentication/login?provider=form&category_id=${categoryId}`);

const typeOf = (jwt: string) => decodePayload(jwt).type;

/** A code of the next time step: accepted once after the current step's code was used. */
const nextCode = (secret: string) => totpCode(secret, Date.now() + 30_000);

/** Enrols `username` from the profile; answers the secret and the recovery codes. */
async function enrol(username: string) {
  const token = await login(t.app, username);
  const started = await call(token, 'GET', '/authentication/second-factor/totp');
  expect(started.statusCode).toBe(200);
  const { secret, uri } = started.json<{ secret: string; uri: string }>();
  expect(uri).toBe(
    `otpauth://totp/VDI%20portal:${username}?secret=${secret}&issuer=VDI+portal&algorithm=SHA1&digits=6&period=30`,
  );
  const wrong = await call(token, 'POST', '/authentication/second-factor/totp', {
    one_time_code: totpCode(secret, Date.now() - 120_000),
  });
  expect(wrong.statusCode).toBe(400);
  expect(wrong.json()).toMatchObject({ description_code: 'second_factor_code_invalid' });
  const done = await call(token, 'POST', '/authentication/second-factor/totp', {
    one_time_code: totpCode(secret),
  });
  expect(done.statusCode).toBe(200);
  const codes = done.json<{ recovery_codes: string[] }>().recovery_codes;
  return { token, secret, codes };
}

/** A password login that stops at the second step; answers its token. */
async function passwordStep(username: string, categoryId = 'default') {
  const res = await loginRequest(t.app, username, undefined, categoryId);
  expect(res.statusCode).toBe(200);
  return res.body;
}

describe('a second factor enrolled from the profile', () => {
  let secret = '';
  let codes: string[] = [];

  it('is on only after a valid code, with ten recovery codes shown once', async () => {
    const enrolled = await enrol('user');
    ({ secret, codes } = enrolled);
    expect(codes).toHaveLength(10);
    const profile = await call(enrolled.token, 'GET', '/api/v3/user/profile');
    expect(profile.json()).toMatchObject({
      second_factor: { totp: true, required: false, recovery_codes_left: 10 },
    });
    const again = await call(enrolled.token, 'GET', '/authentication/second-factor/totp');
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ description_code: 'second_factor_exists' });
  });

  it('asks for a code before the session; the step token opens one session', async () => {
    const step = await passwordStep('user');
    expect(typeOf(step)).toBe('second-factor-required');
    // without the code the step does not continue
    expect((await continueLogin(step)).statusCode).toBe(403);
    const code = nextCode(secret);
    const passed = await call(step, 'POST', '/authentication/second-factor/verify', {
      one_time_code: code,
    });
    expect(passed.statusCode).toBe(200);
    const session = await continueLogin(step);
    expect(session.statusCode).toBe(200);
    expect(decodePayload(session.body)).toMatchObject({ data: { user_id: expect.any(String) } });
    expect(typeOf(session.body)).toBeUndefined();
    expect((await continueLogin(step)).statusCode).toBe(403);

    // the same code again, in a new login, is refused (a code works once)
    const replay = await passwordStep('user');
    const refused = await call(replay, 'POST', '/authentication/second-factor/verify', {
      one_time_code: code,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ description_code: 'second_factor_code_invalid' });
  });

  it('takes a recovery code once', async () => {
    const recovery = (codes[0] ?? '').toLowerCase();
    const step = await passwordStep('user');
    const used = await call(step, 'POST', '/authentication/second-factor/verify', {
      one_time_code: recovery,
    });
    expect(used.statusCode).toBe(200);
    expect((await continueLogin(step)).statusCode).toBe(200);
    const again = await passwordStep('user');
    const refused = await call(again, 'POST', '/authentication/second-factor/verify', {
      one_time_code: recovery,
    });
    expect(refused.statusCode).toBe(400);
  });

  it('locks the second step after five wrong codes, even for the right one', async () => {
    const { secret: own } = await enrol('advanced');
    const step = await passwordStep('advanced');
    const wrong = totpCode(own, Date.now() - 300_000);
    for (let i = 0; i < 5; i += 1) {
      const res = await call(step, 'POST', '/authentication/second-factor/verify', {
        one_time_code: wrong,
      });
      expect(res.statusCode).toBe(400);
    }
    const locked = await call(step, 'POST', '/authentication/second-factor/verify', {
      one_time_code: nextCode(own),
    });
    expect(locked.statusCode).toBe(429);
    expect(Date.parse(String(locked.headers['retry-after']))).toBeGreaterThan(Date.now());
    expect((await continueLogin(step)).statusCode).toBe(403);
  });

  it('is reset by an admin, audited, and the next login needs no code', async () => {
    const admin = await login(t.app, 'admin');
    const advanced = await userRow(t.app, 'advanced');
    const shown = await call(admin, 'GET', `/api/v3/admin/users/${advanced.id}`);
    expect(shown.json()).toMatchObject({ second_factor: true });
    const reset = await call(admin, 'DELETE', `/api/v3/admin/users/${advanced.id}/second-factors`);
    expect(reset.statusCode).toBe(200);
    const [entry] = (await call(admin, 'GET', '/api/v3/admin/audit')).json<
      { action: string; target_id: string; before: object; after: object }[]
    >();
    expect(entry).toMatchObject({
      action: 'adminUsers.resetSecondFactors',
      target_id: advanced.id,
      before: { second_factors: ['totp'] },
      after: { second_factors: [] },
    });
    expect(JSON.stringify(entry)).not.toContain('secret');
    // the lockout counted codes, not the password: the reset account logs in at once
    await t.app.loginThrottle.succeed(`second-factor:${advanced.id}`);
    expect(typeOf(await passwordStep('advanced'))).toBeUndefined();
  });

  it('is disabled from the profile with the password', async () => {
    const step = await passwordStep('user');
    await call(step, 'POST', '/authentication/second-factor/verify', {
      one_time_code: codes[1] ?? '',
    });
    const token = (await continueLogin(step)).body;
    const wrong = await call(token, 'POST', '/authentication/second-factor/disable', {
      current_password: 'not-the-password',
    });
    expect(wrong.statusCode).toBe(401);
    const off = await call(token, 'POST', '/authentication/second-factor/disable', {
      current_password: 'test-password-123',
    });
    expect(off.statusCode).toBe(200);
    expect(typeOf(await passwordStep('user'))).toBeUndefined();
  });
});

describe('a policy that requires a second factor', () => {
  it('sends a user without one to enrolment, then asks for a code at each login', async () => {
    const step = await passwordStep('pupil', 'sf');
    expect(typeOf(step)).toBe('second-factor-enrolment-required');
    // a step token is not a session
    expect((await call(step, 'GET', '/api/v3/user/profile')).statusCode).toBe(403);
    const started = await call(step, 'GET', '/authentication/second-factor/enrolment');
    expect(started.statusCode).toBe(200);
    const { secret } = started.json<{ secret: string }>();
    // not confirmed yet: the login answers the enrolment step again
    expect(typeOf((await continueLogin(step, 'sf')).body)).toBe('second-factor-enrolment-required');
    const confirmed = await call(step, 'POST', '/authentication/second-factor/enrolment', {
      one_time_code: totpCode(secret),
    });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.json<{ recovery_codes: string[] }>().recovery_codes).toHaveLength(10);
    const session = await continueLogin(step, 'sf');
    expect(session.statusCode).toBe(200);
    expect(typeOf(session.body)).toBeUndefined();
    const profile = await call(session.body, 'GET', '/api/v3/user/profile');
    expect(profile.json()).toMatchObject({ second_factor: { totp: true, required: true } });
    expect(typeOf(await passwordStep('pupil', 'sf'))).toBe('second-factor-required');
  });
});
