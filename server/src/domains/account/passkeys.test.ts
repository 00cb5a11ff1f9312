/**
 * Passkeys through the built app, with a software authenticator (test/support/soft-authenticator):
 * two passkeys added from the profile (one renamed, one removed), a login whose second step is
 * passed by a passkey, the enrolment a policy forces at the login done with a passkey (recovery
 * codes once, then the session as after an authenticator app's enrolment), the recovery codes of
 * a first passkey (each used once, counted in the lockout, renewed from the profile), then the
 * refusals, each with our error body and no session: a replayed assertion, a
 * wrong origin, a counter that goes backwards, an expired challenge and a used one; five refusals
 * lock the step like wrong codes; an admin's factor reset removes the passkeys and the codes.
 */
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { addCategory, addGroup, addUser, userRow } from '../../../test/support/fixtures.ts';
import { ORIGIN, RP_ID, SoftKey } from '../../../test/support/soft-authenticator.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase(), { publicUrl: ORIGIN });
  // a category whose account policy requires a second factor, and a user of it without one
  await addCategory(t.app, 'sf');
  await addGroup(t.app, 'sf-users', 'sf');
  await addUser(t.app, { username: 'pupil', role: 'user', categoryId: 'sf', groupId: 'sf-users' });
  const admin = await login(t.app, 'admin');
  const policy = await call(admin, 'PUT', '/api/v3/admin/settings/second-factor', {
    category: 'sf',
    role: 'all',
    required: true,
  });
  expect(policy.statusCode).toBe(200);
  t.app.settings.invalidate();
});
afterAll(async () => {
  await t.close();
});

const call = (
  token: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
) =>
  injectWithToken(t.app, token, {
    method,
    url,
    headers: { origin: ORIGIN },
    ...(payload ? { payload } : {}),
  });

const continueLogin = (token: string, categoryId = 'default') =>
  call(token, 'POST', `/authentication/login?provider=form&category_id=${categoryId}`);

/** A password login that stops at the second step; answers its token. */
async function passwordStep(username: string, categoryId = 'default'): Promise<string> {
  const res = await loginRequest(t.app, username, undefined, categoryId);
  expect(res.statusCode).toBe(200);
  return res.body;
}

/** The challenge of a second step's passkey options. */
async function stepChallenge(step: string): Promise<string> {
  const options = await call(step, 'POST', '/authentication/second-factor/passkey/options', {});
  expect(options.statusCode).toBe(200);
  return options.json<{ challenge: string }>().challenge;
}

const answerStep = (step: string, response: object) =>
  call(step, 'POST', '/authentication/second-factor/passkey', { response });

/** A refusal with our error body, after which the step token opens no session. */
async function expectRefused(step: string, response: object) {
  const refused = await answerStep(step, response);
  expect(refused.statusCode).toBe(400);
  expectErrorShape(refused.json(), 'bad_request');
  expect(refused.json()).toMatchObject({ description_code: 'passkey_invalid' });
  expect((await continueLogin(step)).statusCode).toBe(403);
}

describe('passkeys', () => {
  const key = new SoftKey();
  let usedChallenge = '';
  let recoveryCodes: string[] = [];

  it('are added from the profile (several, named), renamed and removed', async () => {
    const token = await login(t.app, 'user');
    const enrol = async (soft: SoftKey, name: string) => {
      const started = await call(
        token,
        'POST',
        '/authentication/passkeys/registration-options',
        {},
      );
      expect(started.statusCode).toBe(200);
      const options = started.json<{ challenge: string; rp: { id: string } }>();
      expect(options.rp.id).toBe(RP_ID);
      const answer = soft.attest(options.challenge);
      const done = await call(token, 'POST', '/authentication/passkeys', {
        name,
        response: answer,
      });
      expect(done.statusCode).toBe(200);
      // the challenge worked once
      const again = await call(token, 'POST', '/authentication/passkeys', {
        name,
        response: answer,
      });
      expect(again.statusCode).toBe(400);
      expect(again.json()).toMatchObject({ description_code: 'passkey_invalid' });
      return done.json<{ id: string; recovery_codes?: string[] }>();
    };
    const { id: first, recovery_codes: codes } = await enrol(key, 'Laptop');
    // the first second factor comes with ten recovery codes, shown once
    expect(codes).toHaveLength(10);
    recoveryCodes = codes ?? [];
    const { id: second, recovery_codes: none } = await enrol(new SoftKey(), 'Phone');
    expect(none).toBeUndefined();
    expect((await call(token, 'GET', '/api/v3/user/profile')).json()).toMatchObject({
      second_factor: { totp: false, passkeys: 2, recovery_codes_left: 10 },
    });
    const renamed = await call(token, 'PUT', `/authentication/passkeys/${first}`, {
      name: 'Work laptop',
    });
    expect(renamed.statusCode).toBe(200);
    expect((await call(token, 'DELETE', `/authentication/passkeys/${second}`)).statusCode).toBe(
      200,
    );
    const list = await call(token, 'GET', '/authentication/passkeys');
    expect(list.json()).toEqual([
      { id: first, name: 'Work laptop', created_at: expect.any(Number), last_used_at: null },
    ]);
  });

  it('pass the second login step; the step token then opens one session', async () => {
    const step = await passwordStep('user');
    expect(decodePayload(step).type).toBe('second-factor-required');
    const methods = await call(step, 'GET', '/authentication/second-factor/methods');
    expect(methods.json()).toEqual({ passkey: true, totp: false });
    usedChallenge = await stepChallenge(step);
    expect((await answerStep(step, key.assert(usedChallenge, 1))).statusCode).toBe(200);
    const session = await continueLogin(step);
    expect(session.statusCode).toBe(200);
    expect(decodePayload(session.body).type).toBeUndefined();
    expect((await continueLogin(step)).statusCode).toBe(403);
  });

  it('come with recovery codes: each passes the step once, counted in the lockout, renewed from the profile', async () => {
    const user = await userRow(t.app, 'user');
    const useCode = (step: string, code: string) =>
      call(step, 'POST', '/authentication/second-factor/verify', { one_time_code: code });
    const [code = '', kept = ''] = recoveryCodes;
    const first = await passwordStep('user');
    expect((await useCode(first, code)).statusCode).toBe(200);
    const session = (await continueLogin(first)).body;
    const renewed = await call(session, 'POST', '/authentication/second-factor/recovery-codes', {});
    expect(renewed.statusCode).toBe(200);
    const [fresh = '', ...others] = renewed.json<{ recovery_codes: string[] }>().recovery_codes;
    expect(others).toHaveLength(9);

    // a used code, a code renewed away and three wrong ones: five wrong codes lock the step
    const step = await passwordStep('user');
    const reused = await useCode(step, code);
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toMatchObject({ description_code: 'second_factor_code_invalid' });
    for (const wrong of [kept, 'AAAAA-AAAAA', 'BBBBB-BBBBB', 'CCCCC-CCCCC'])
      expect((await useCode(step, wrong)).statusCode).toBe(400);
    expect((await useCode(step, fresh)).statusCode).toBe(429);
    await t.app.loginThrottle.succeed(`second-factor:${user.id}`);
    expect((await useCode(step, fresh)).statusCode).toBe(200);
    expect((await continueLogin(step)).statusCode).toBe(200);

    // without a second factor there are no codes to renew
    const admin = await login(t.app, 'admin');
    const refused = await call(admin, 'POST', '/authentication/second-factor/recovery-codes', {});
    expect(refused.statusCode).toBe(409);
    expectErrorShape(refused.json(), 'conflict');
  });

  it('enrol at the login a policy requires it at: recovery codes once, then the session', async () => {
    const step = await passwordStep('pupil', 'sf');
    expect(decodePayload(step).type).toBe('second-factor-enrolment-required');
    // the page offers the authenticator app too
    const offer = await call(step, 'GET', '/authentication/second-factor/enrolment');
    expect(offer.json()).toMatchObject({ secret: expect.any(String) });
    // options of another login's step do not serve this one
    const other = await passwordStep('pupil', 'sf');
    const otherOptions = await call(
      other,
      'POST',
      '/authentication/second-factor/enrolment/passkey/options',
      {},
    );
    const pupilKey = new SoftKey();
    const stray = await call(step, 'POST', '/authentication/second-factor/enrolment/passkey', {
      name: 'Phone',
      response: pupilKey.attest(otherOptions.json<{ challenge: string }>().challenge),
    });
    expect(stray.statusCode).toBe(400);
    expect(stray.json()).toMatchObject({ description_code: 'passkey_invalid' });

    const started = await call(
      step,
      'POST',
      '/authentication/second-factor/enrolment/passkey/options',
      {},
    );
    expect(started.statusCode).toBe(200);
    const { challenge } = started.json<{ challenge: string }>();
    const done = await call(step, 'POST', '/authentication/second-factor/enrolment/passkey', {
      name: 'Phone',
      response: pupilKey.attest(challenge),
    });
    expect(done.statusCode).toBe(200);
    expect(done.json<{ recovery_codes: string[] }>().recovery_codes).toHaveLength(10);
    const opened = await continueLogin(step, 'sf');
    expect(opened.statusCode).toBe(200);
    expect(decodePayload(opened.body).type).toBeUndefined();
    // the step token opened its session; once more it is only a login that asks for the passkey
    const again = await continueLogin(step, 'sf');
    expect(decodePayload(again.body).type).toBe('second-factor-required');
    const next = await passwordStep('pupil', 'sf');
    expect(decodePayload(next).type).toBe('second-factor-required');
    const signed = await answerStep(next, pupilKey.assert(await stepChallenge(next), 1));
    expect(signed.statusCode).toBe(200);
  });

  it('refuse a replay, another origin, a counter going back, an expired or used challenge', async () => {
    // the assertion that passed, sent again in a new login
    const replayed = await passwordStep('user');
    await stepChallenge(replayed);
    await expectRefused(replayed, key.assert(usedChallenge, 1));

    const step = await passwordStep('user');
    await expectRefused(step, key.assert(await stepChallenge(step), 2, 'https://evil.example.org'));
    await expectRefused(step, key.assert(await stepChallenge(step), 0));
    const expiring = await stepChallenge(step);
    await t.app.db.execute(
      sql`UPDATE webauthn_challenges SET expires_at = now() - interval '1 second' WHERE challenge = ${expiring}`,
    );
    await expectRefused(step, key.assert(expiring, 3));
    // a fresh signature over the challenge of the login that passed
    await expectRefused(step, key.assert(usedChallenge, 4));

    // five refusals lock the step as five wrong codes do
    const locked = await call(step, 'POST', '/authentication/second-factor/passkey/options', {});
    expect(locked.statusCode).toBe(429);
    expect(locked.headers['retry-after']).toBeDefined();
  });

  it('are removed by an admin’s factor reset, audited', async () => {
    const user = await userRow(t.app, 'user');
    await t.app.loginThrottle.succeed(`second-factor:${user.id}`);
    const admin = await login(t.app, 'admin');
    const reset = await call(admin, 'DELETE', `/api/v3/admin/users/${user.id}/second-factors`);
    expect(reset.statusCode).toBe(200);
    const [entry] = (await call(admin, 'GET', '/api/v3/admin/audit')).json<
      { action: string; before: object }[]
    >();
    expect(entry).toMatchObject({
      action: 'adminUsers.resetSecondFactors',
      before: { second_factors: ['passkey'] },
    });
    const session = await passwordStep('user');
    expect(decodePayload(session).type).toBeUndefined();
    expect((await call(session, 'GET', '/api/v3/user/profile')).json()).toMatchObject({
      second_factor: { passkeys: 0, recovery_codes_left: 0 },
    });
  });
});
