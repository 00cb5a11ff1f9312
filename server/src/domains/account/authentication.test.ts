import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  signWithWrongKey,
  unsignedToken,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';
import { sleep } from '../../../test/support/wait.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
});
afterAll(async () => t.close());

describe('POST /authentication/login', () => {
  it('answers the raw JWT as text/plain with the bearer header, the hand-off cookie and no-store', async () => {
    const res = await loginRequest(t.app, 'user');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.headers.authorization).toBe(`Bearer ${res.body}`);
    expect(res.headers['set-cookie']).toBe(
      `authorization=${res.body}; Path=/; Max-Age=300; SameSite=Strict`,
    );
    const claims = decodePayload(res.body);
    expect(claims).toMatchObject({
      kid: 'isardvdi',
      data: {
        provider: 'form',
        role_id: 'user',
        category_id: 'default',
        group_id: 'default-users',
      },
    });
    expect(typeof claims.session_id).toBe('string');
    expect(claims.sub).toBe((claims.data as { user_id: string }).user_id);
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
    expect(JSON.parse(Buffer.from(res.body.split('.')[0] ?? '', 'base64url').toString())).toEqual({
      alg: 'HS256',
      typ: 'JWT',
      kid: 'initial',
    });
  });

  it('issues a token that lives the whole expiration even when a second ends during the login', async () => {
    // Each reading of the clock moves it on by 0.7 s, from the middle of a second: the session's
    // expiry and the token's issue time are read in different seconds unless they share one reading.
    let clock = Math.floor(Date.now() / 1000) * 1000 + 500;
    const now = vi.spyOn(Date, 'now').mockImplementation(() => (clock += 700));
    try {
      const res = await loginRequest(t.app, 'user');
      expect(res.statusCode).toBe(200);
      const claims = decodePayload(res.body);
      expect((claims.exp as number) - (claims.iat as number)).toBe(300);
      expect(claims.nbf).toBe(claims.iat);
    } finally {
      now.mockRestore();
    }
  });

  it('accepts multipart/form-data as the old frontend sends it', async () => {
    const boundary = '----vdiboundary';
    const payload = [
      `--${boundary}\r\nContent-Disposition: form-data; name="username"\r\n\r\nadmin\r\n`,
      `--${boundary}\r\nContent-Disposition: form-data; name="password"\r\n\r\n${TEST_PASSWORD}\r\n`,
      `--${boundary}--\r\n`,
    ].join('');
    const res = await t.app.inject({
      method: 'POST',
      url: '/authentication/login?provider=form&category_id=default',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload,
    });
    expect(res.statusCode).toBe(200);
    expect(decodePayload(res.body)).toMatchObject({ data: { role_id: 'admin' } });
  });

  it('gives the same 401 body for a wrong password and for an unknown user', async () => {
    const wrong = await loginRequest(t.app, 'user', 'wrong-password');
    const unknown = await loginRequest(t.app, 'nobody-here', 'wrong-password');
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expectErrorShape(wrong.json(), 'invalid_credentials');
    expect(unknown.json()).toEqual(wrong.json());
  });

  it('answers 403 user_disabled for a disabled account with the right password', async () => {
    const advanced = await t.app.users.findLocal('advanced', 'default');
    await t.app.users.update(advanced?.id ?? '', { active: false });
    try {
      const res = await loginRequest(t.app, 'advanced');
      expect(res.statusCode).toBe(403);
      expectErrorShape(res.json(), 'user_disabled');
      expect(res.json().description_code).toBe('user_disabled');
    } finally {
      await t.app.users.update(advanced?.id ?? '', { active: true });
    }
  });

  it('bans after 10 failures: the 11th gets 429 with a future Retry-After date, and so does the right password', async () => {
    for (let i = 0; i < 10; i++)
      expect((await loginRequest(t.app, 'manager', `bad-${i}`)).statusCode).toBe(401);
    const eleventh = await loginRequest(t.app, 'manager', 'bad-11');
    expect(eleventh.statusCode).toBe(429);
    expectErrorShape(eleventh.json(), 'too_many_requests');
    const retry = eleventh.headers['retry-after'];
    expect(typeof retry).toBe('string');
    expect(String(retry)).toMatch(
      /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
    );
    expect(new Date(String(retry)).getTime()).toBeGreaterThan(Date.now());
    const right = await loginRequest(t.app, 'manager');
    expect(right.statusCode).toBe(429);
    expect(right.headers['retry-after']).toBeDefined();
    // the ban lives in the database: another node (or a restart) sees it
    const rows = await t.app.database.query<{ count: number }>(
      "SELECT count FROM login_attempts WHERE key LIKE 'acct:%manager'",
    );
    expect(rows[0]?.count).toBe(11);
  });

  it('clears the failure counter on success', async () => {
    await loginRequest(t.app, 'admin', 'bad');
    await login(t.app, 'admin');
    const rows = await t.app.database.query(
      "SELECT 1 FROM login_attempts WHERE key LIKE 'acct:%:admin'",
    );
    expect(rows).toHaveLength(0);
  });

  it('rejects an unknown provider and unknown form fields with 400 and a field error map', async () => {
    const badProvider = await t.app.inject({
      method: 'POST',
      url: '/authentication/login?provider=ldap',
      payload: 'username=a&password=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(badProvider.statusCode).toBe(400);
    expectErrorShape(badProvider.json(), 'bad_request');
    expect(badProvider.json().errors).toEqual({ '/provider': 'enum' });
    const extra = await t.app.inject({
      method: 'POST',
      url: '/authentication/login?provider=form',
      payload: 'username=a&password=b&role=admin',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(extra.statusCode).toBe(400);
    expect(extra.json().errors).toEqual({ '/role': 'additionalProperties' });
  });

  it('refuses passwords over 1024 bytes with 400 before hashing', async () => {
    const res = await loginRequest(t.app, 'user', 'x'.repeat(1025));
    expect(res.statusCode).toBe(400);
    expectErrorShape(res.json(), 'bad_request');
  });

  it('continues a disclaimer flow: disclaimer token, acknowledge, then a login token', async () => {
    // The demo policy of the default category asks for the disclaimer; `user` has not accepted it.
    const row = await t.app.users.findLocal('user', 'default');
    await t.app.users.update(row?.id ?? '', { disclaimerAcknowledged: false });
    const first = await loginRequest(t.app, 'user');
    expect(first.statusCode).toBe(200);
    const special = first.body;
    expect(decodePayload(special)).toMatchObject({
      type: 'disclaimer-acknowledgement-required',
      kid: 'isardvdi',
    });
    // a special token is not a login token
    const user = await injectWithToken(t.app, special, { method: 'GET', url: '/api/v3/user' });
    expect(user.statusCode).toBe(403);
    expectErrorShape(user.json(), 'forbidden');
    expect(user.json().description).toBe('Token not valid for this operation.');
    const ack = await injectWithToken(t.app, special, {
      method: 'POST',
      url: '/authentication/acknowledge-disclaimer',
    });
    expect(ack.statusCode).toBe(200);
    const next = await injectWithToken(t.app, special, {
      method: 'POST',
      url: '/authentication/login?provider=form&category_id=default',
    });
    expect(next.statusCode).toBe(200);
    expect(decodePayload(next.body).type).toBeUndefined();
    expect(decodePayload(next.body).session_id).toBeDefined();
  });

  it('answers 401 invalid_token for a register token whose account does not exist yet', async () => {
    const register = await t.app.tokens.signSpecial('register', 'someone', 600, {
      jti: 'a-link-id',
      category_id: 'default',
      username: 'someone',
      name: 'Someone',
      email: 'someone@example.org',
      provider: 'local',
    });
    const res = await injectWithToken(t.app, register, {
      method: 'POST',
      url: '/authentication/login?provider=form&category_id=default',
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().description_code).toBe('invalid_token');
  });
});

describe('POST /authentication/renew and /logout', () => {
  it('renews into a new token whose exp never passes the session max_time', async () => {
    const token = await login(t.app, 'user');
    const before = decodePayload(token);
    await sleep(1100);
    const res = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/authentication/renew',
      payload: {},
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const renewed = res.json().token as string;
    const claims = decodePayload(renewed);
    expect(claims.session_id).toBe(before.session_id);
    expect(claims.exp as number).toBeGreaterThan(before.exp as number);
    const [row] = await t.app.database.query<{ max_at: Date }>(
      'SELECT max_at FROM sessions WHERE id = $1',
      [claims.session_id],
    );
    expect(claims.exp as number).toBeLessThanOrEqual(
      Math.floor(new Date(row?.max_at ?? 0).getTime() / 1000),
    );
    expect(
      (await injectWithToken(t.app, renewed, { method: 'GET', url: '/api/v3/user' })).statusCode,
    ).toBe(200);
  });

  it('renews an expired but authentic token while the window is open, and caps exp at max_time', async () => {
    const token = await login(t.app, 'user');
    const sid = String(decodePayload(token).session_id);
    await t.app.database.query(
      "UPDATE sessions SET max_at = now() + interval '100 seconds' WHERE id = $1",
      [sid],
    );
    const expired = await t.app.tokens.signLogin({
      sessionId: sid,
      userId: String(decodePayload(token).sub),
      exp: Math.floor(Date.now() / 1000) - 600,
      data: decodePayload(token).data as never,
    });
    expect(
      (await injectWithToken(t.app, expired, { method: 'GET', url: '/api/v3/user' })).statusCode,
    ).toBe(401);
    const res = await injectWithToken(t.app, expired, {
      method: 'POST',
      url: '/authentication/renew',
    });
    expect(res.statusCode).toBe(200);
    const exp = decodePayload(res.json().token).exp as number;
    expect(exp).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 101);
  });

  it('refuses to renew after max_time or after the renew window with 401 invalid_session', async () => {
    const token = await login(t.app, 'user');
    const sid = String(decodePayload(token).session_id);
    await t.app.database.query(
      "UPDATE sessions SET max_renew_at = now() - interval '1 second' WHERE id = $1",
      [sid],
    );
    const res = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/authentication/renew',
    });
    expect(res.statusCode).toBe(401);
    expectErrorShape(res.json(), 'invalid_session');
    const token2 = await login(t.app, 'user');
    await t.app.database.query(
      "UPDATE sessions SET max_at = now() - interval '1 second' WHERE id = $1",
      [decodePayload(token2).session_id],
    );
    expect(
      (await injectWithToken(t.app, token2, { method: 'POST', url: '/authentication/renew' }))
        .statusCode,
    ).toBe(401);
  });

  it('logout revokes the session: the same token gets 401 on /api/v3/user and on renew', async () => {
    const token = await login(t.app, 'user');
    expect(
      (await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' })).statusCode,
    ).toBe(200);
    const out = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/authentication/logout',
      payload: {},
    });
    expect(out.statusCode).toBe(200);
    expect(out.json()).toEqual({});
    const user = await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' });
    expect(user.statusCode).toBe(401);
    expectErrorShape(user.json(), 'unauthorized');
    const renew = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/authentication/renew',
    });
    expect(renew.statusCode).toBe(401);
    expect(renew.json().error).toBe('invalid_session');
  });

  it('GET /authentication/check answers {} for a live session and 401 without a token', async () => {
    const token = await login(t.app, 'user');
    expect(
      (await injectWithToken(t.app, token, { method: 'GET', url: '/authentication/check' })).json(),
    ).toEqual({});
    expect((await t.app.inject({ method: 'GET', url: '/authentication/check' })).statusCode).toBe(
      401,
    );
  });

  it('GET /authentication/providers lists form', async () => {
    expect(
      (await t.app.inject({ method: 'GET', url: '/authentication/providers' })).json(),
    ).toEqual({ providers: ['form'], ldap: [], oidc: [], saml: [] });
  });
});

describe('bad tokens', () => {
  const routes = [
    '/api/v3/user',
    '/api/v3/user/config',
    '/api/v3/user/desktops',
    '/api/v3/check',
    '/authentication/check',
  ];

  it('answers 401 with the error body for missing, expired, tampered, alg:none and wrong-key tokens', async () => {
    const token = await login(t.app, 'user');
    const claims = decodePayload(token);
    const [header, , signature] = token.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, data: { ...(claims.data as object), role_id: 'admin' } })).toString('base64url')}.${signature}`;
    const expired = await t.app.tokens.signLogin({
      sessionId: String(claims.session_id),
      userId: String(claims.sub),
      exp: Math.floor(Date.now() / 1000) - 61 - 60,
      data: claims.data as never,
    });
    const bad = {
      expired,
      tampered,
      none: unsignedToken({ ...claims, data: { ...(claims.data as object), role_id: 'admin' } }),
      wrongKey: await signWithWrongKey(claims),
      garbage: 'not-a-jwt',
    };
    for (const url of routes) {
      const missing = await t.app.inject({ method: 'GET', url });
      expect(missing.statusCode, `${url} missing`).toBe(401);
      expectErrorShape(missing.json(), 'unauthorized');
      for (const [name, jwt] of Object.entries(bad)) {
        const res = await injectWithToken(t.app, jwt, { method: 'GET', url });
        expect(res.statusCode, `${url} ${name}`).toBe(401);
        expectErrorShape(res.json(), 'unauthorized');
      }
    }
  });

  it('never accepts the cookie as a credential', async () => {
    const token = await login(t.app, 'user');
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v3/user',
      headers: { cookie: `authorization=${token}; vdiportal_session=${token}` },
    });
    expect(res.statusCode).toBe(401);
  });

  it('answers 403 for a special token type on a normal route', async () => {
    const special = await t.app.tokens.signSpecial('password-reset-required', 'x', 600);
    for (const url of ['/api/v3/user', '/api/v3/user/desktops']) {
      const res = await injectWithToken(t.app, special, { method: 'GET', url });
      expect(res.statusCode).toBe(403);
      expectErrorShape(res.json(), 'forbidden');
    }
  });

  it('answers 401 once the user is disabled, for a token issued before', async () => {
    const token = await login(t.app, 'advanced');
    const u = await t.app.users.findLocal('advanced', 'default');
    await t.app.users.update(u?.id ?? '', { active: false });
    try {
      expect(
        (await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' })).statusCode,
      ).toBe(401);
    } finally {
      await t.app.users.update(u?.id ?? '', { active: true });
    }
  });
});
