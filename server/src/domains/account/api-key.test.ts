import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect } from 'socket.io-client';
import { eq } from 'drizzle-orm';
import { users } from '../../platform/db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { userRow } from '../../../test/support/fixtures.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
});
afterAll(async () => {
  await t.close();
});

async function createKey(token: string, minutes = 60) {
  return injectWithToken(t.app, token, {
    method: 'PUT',
    url: '/authentication/api-key',
    payload: { expiration_minutes: minutes },
  });
}

async function keyFor(username: string, minutes = 60): Promise<string> {
  const res = await createKey(await login(t.app, username), minutes);
  expect(res.statusCode).toBe(200);
  return (res.json() as { api_key: string }).api_key;
}

const me = (token: string) => injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user' });

describe('API keys', () => {
  it('makes a key shown once, stores only its SHA-256 and the expiry, and the key calls the API as its owner', async () => {
    const before = Date.now();
    const key = await keyFor('advanced', 90);
    expect(key).toMatch(/^vdik_[A-Za-z0-9_-]{43}$/);
    const row = await userRow(t.app, 'advanced');
    expect(row.apiKeyHash).toBe(createHash('sha256').update(key).digest('hex'));
    const stored = await t.app.database.query<{ row: unknown }>(
      'SELECT to_jsonb(u) AS row FROM users u WHERE id = $1',
      [row.id],
    );
    expect(JSON.stringify(stored[0]?.row)).not.toContain(key.slice(5));
    const expires = row.apiKeyExpires?.getTime() ?? 0;
    expect(expires).toBeGreaterThanOrEqual(before + 90 * 60_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 90 * 60_000 + 1000);

    const res = await me(key);
    expect(res.statusCode).toBe(200);
    expect((res.json() as { username: string }).username).toBe('advanced');

    const state = await injectWithToken(t.app, await login(t.app, 'advanced'), {
      method: 'GET',
      url: '/api/v3/user/api_key',
    });
    expect(state.json()).toEqual({ exists: true, expires: Math.floor(expires / 1000) });
  });

  it('refuses to make a key for a plain user (403) and validates the expiry range', async () => {
    const userToken = await login(t.app, 'user');
    const refused = await createKey(userToken);
    expect(refused.statusCode).toBe(403);
    expectErrorShape(refused.json(), 'forbidden');
    expect((await userRow(t.app, 'user')).apiKeyHash).toBeNull();

    const advanced = await login(t.app, 'advanced');
    expect((await createKey(advanced, 0)).statusCode).toBe(400);
    expect((await createKey(advanced, 525601)).statusCode).toBe(400);
    expect((await createKey(advanced, 525600)).statusCode).toBe(200);
  });

  it('lets a key do exactly what its role may: an advanced key is refused an admin-only call', async () => {
    const advancedKey = await keyFor('advanced');
    const res = await injectWithToken(t.app, advancedKey, {
      method: 'GET',
      url: '/api/v3/admin/reservables',
    });
    expect(res.statusCode).toBe(403);
    expectErrorShape(res.json(), 'forbidden');
    // An admin's key passes the same role check and gets the answer.
    const adminKey = await keyFor('admin');
    const admin = await injectWithToken(t.app, adminKey, {
      method: 'GET',
      url: '/api/v3/admin/reservables',
    });
    expect(admin.statusCode).toBe(200);
    expect(Array.isArray(admin.json())).toBe(true);
  });

  it("follows the owner's current role: a key stops working (401) once its owner's role may not hold API keys", async () => {
    const key = await keyFor('manager');
    const state = () => injectWithToken(t.app, key, { method: 'GET', url: '/api/v3/user/api_key' });
    expect((await state()).statusCode).toBe(200);
    const unknown = await me(`vdik_${'A'.repeat(43)}`);
    const manager = await userRow(t.app, 'manager');
    try {
      // Demoted to a role that may still hold keys: the key keeps working with that role.
      await t.app.db.update(users).set({ role: 'advanced' }).where(eq(users.id, manager.id));
      expect((await me(key)).statusCode).toBe(200);
      // Demoted to a role that may not: the key answers like an unknown one, on every call.
      await t.app.db.update(users).set({ role: 'user' }).where(eq(users.id, manager.id));
      for (const res of [await state(), await me(key)]) {
        expect(res.statusCode).toBe(401);
        expect(res.json()).toEqual(unknown.json());
      }
    } finally {
      await t.app.db.update(users).set({ role: 'manager' }).where(eq(users.id, manager.id));
    }
  });

  it('needs a login to make another key, to change the account or to migrate it', async () => {
    const key = await keyFor('advanced');
    const again = await createKey(key);
    expect(again.statusCode).toBe(403);
    expect((again.json() as { description_code: string }).description_code).toBe(
      'login_token_required',
    );
    for (const call of [
      { method: 'PUT' as const, url: '/api/v3/user', payload: { name: 'x' } },
      { method: 'POST' as const, url: '/api/v3/user_migration/export', payload: {} },
      { method: 'POST' as const, url: '/api/v3/user_migration/auto', payload: {} },
    ]) {
      const res = await injectWithToken(t.app, key, call);
      expect(res.statusCode, call.url).toBe(403);
      expect((res.json() as { description_code: string }).description_code).toBe(
        'login_token_required',
      );
    }
    // The /authentication token calls do not take a key either.
    const renew = await injectWithToken(t.app, key, {
      method: 'POST',
      url: '/authentication/renew',
    });
    expect(renew.statusCode).toBe(401);
    // The key still works for ordinary calls.
    expect((await me(key)).statusCode).toBe(200);
  });

  it('stops working the moment it is revoked, and a new key voids the previous one', async () => {
    const token = await login(t.app, 'advanced');
    const first = await keyFor('advanced');
    const second = await keyFor('advanced');
    const voided = await me(first);
    expect(voided.statusCode).toBe(401);
    expect((voided.json() as { description_code: string }).description_code).toBe('invalid_token');
    expect((await me(second)).statusCode).toBe(200);

    const revoke = await injectWithToken(t.app, second, {
      method: 'DELETE',
      url: '/api/v3/user/api_key',
    });
    expect(revoke.statusCode).toBe(200);
    expect((await me(second)).statusCode).toBe(401);
    const row = await userRow(t.app, 'advanced');
    expect(row.apiKeyHash).toBeNull();
    expect(row.apiKeyExpires).toBeNull();
    const state = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/user/api_key',
    });
    expect(state.json()).toEqual({ exists: false, expires: 0 });
  });

  it('refuses an expired key, a key of a disabled user and an unknown key alike (401 invalid_token)', async () => {
    const key = await keyFor('advanced');
    const advanced = await userRow(t.app, 'advanced');
    const unknown = await me(`vdik_${'A'.repeat(43)}`);
    const malformed = await me('vdik_short');

    await t.app.db
      .update(users)
      .set({ apiKeyExpires: new Date(Date.now() - 1000) })
      .where(eq(users.id, advanced.id));
    const expired = await me(key);
    const state = await injectWithToken(t.app, await login(t.app, 'advanced'), {
      method: 'GET',
      url: '/api/v3/user/api_key',
    });
    expect(state.json()).toEqual({ exists: false, expires: 0 });

    await t.app.db
      .update(users)
      .set({ apiKeyExpires: new Date(Date.now() + 3_600_000), active: false })
      .where(eq(users.id, advanced.id));
    const disabled = await me(key);
    await t.app.db.update(users).set({ active: true }).where(eq(users.id, advanced.id));
    expect((await me(key)).statusCode).toBe(200);

    for (const res of [unknown, malformed, expired, disabled]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(unknown.json());
    }
  });

  it('answers /user/config with an api-key session without time limits', async () => {
    const key = await keyFor('advanced');
    const res = await injectWithToken(t.app, key, { method: 'GET', url: '/api/v3/user/config' });
    expect(res.statusCode).toBe(200);
    expect((res.json() as { session: unknown }).session).toEqual({
      id: 'api-key',
      max_renew_time: 0,
      max_time: 0,
    });
  });

  it('is held to maintenance like a login token (503 for non-admins)', async () => {
    const key = await keyFor('advanced');
    await t.app.settings.set('maintenance', true);
    try {
      const res = await me(key);
      expect(res.statusCode).toBe(503);
    } finally {
      await t.app.settings.set('maintenance', false);
    }
    expect((await me(key)).statusCode).toBe(200);
  });

  it('opens no socket', async () => {
    const key = await keyFor('advanced');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    const base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const socket = connect(base, {
      path: '/api/v3/socket.io',
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      timeout: 3000,
      extraHeaders: { origin: base },
      auth: { jwt: key },
    });
    try {
      const outcome = await new Promise<string>((resolve) => {
        socket.once('connect', () => resolve('connected'));
        socket.once('connect_error', (err) => resolve(`error:${err.message}`));
      });
      expect(outcome).toBe('error:Connection rejected by server');
    } finally {
      socket.close();
    }
  });
});
