/**
 * The admin's role-visibility config edited at run time: PUT /admin/role-visibility writes the
 * config file and the next request obeys it (no restart), for REST answers and socket events.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import type {
  Desktop,
  RoleVisibility,
  RoleVisibilityEffective,
} from '../../../../src/generated/types.ts';

let t: TestApp;
let folder: string;
let file: string;
let base: string;
let admin: string;
let user: string;
const open: Socket[] = [];

beforeAll(async () => {
  // The config file lives in a folder of the test's own, created by the first PUT.
  folder = mkdtempSync(join(tmpdir(), 'vdi-portal-config-'));
  file = join(folder, 'etc', 'portal.json');
  t = await buildTestApp(await createTestDatabase(), { portalConfigPath: file });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  admin = await login(t.app, 'admin');
  user = await login(t.app, 'user');
});
afterAll(async () => {
  for (const s of open) s.close();
  await t.close();
  rmSync(folder, { recursive: true, force: true });
});

const put = (token: string, config: unknown) =>
  injectWithToken(t.app, token, {
    method: 'PUT',
    url: '/api/v3/admin/role-visibility',
    payload: { config },
  });

const userDesktops = async (token: string) => {
  const res = await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user/desktops' });
  return { status: res.statusCode, body: res.json<Desktop[]>() };
};

// Every test starts from the generated defaults.
beforeEach(async () => {
  expect((await put(admin, {})).statusCode).toBe(200);
});

describe('GET /admin/role-visibility', () => {
  it('answers the config, its file and the catalogue to an admin only', async () => {
    const res = await injectWithToken(t.app, admin, {
      method: 'GET',
      url: '/api/v3/admin/role-visibility',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<RoleVisibility>();
    expect(body.file).toBe(file);
    const desktops = body.catalogue.find((r) => r.name === 'desktops');
    expect(desktops?.sets.read).toEqual(['admin', 'manager', 'advanced', 'user']);
    expect(desktops?.fields).toContain('description');
    expect(desktops?.actions).toContain('delete');
    const refused = await injectWithToken(t.app, user, {
      method: 'GET',
      url: '/api/v3/admin/role-visibility',
    });
    expect(refused.statusCode).toBe(403);
    expectErrorShape(refused.json(), 'forbidden');
  });
});

describe('PUT /admin/role-visibility', () => {
  it('writes the file and the next request of a user obeys it, without a restart', async () => {
    expect((await userDesktops(user)).status).toBe(200);
    const config = { roles: { desktops: { read: ['admin', 'manager'] } } };
    expect((await put(admin, config)).statusCode).toBe(200);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(config);
    expect((await userDesktops(user)).status).toBe(403);
    expect((await userDesktops(admin)).status).toBe(200);
    // the audit log keeps who changed it, with the config before and after
    const audit = await injectWithToken(t.app, admin, {
      method: 'GET',
      url: '/api/v3/admin/audit',
    });
    const entry = audit
      .json<{ action: string; actor_role: string; after: unknown }[]>()
      .find((e) => e.action === 'roleVisibility.update');
    expect(entry).toMatchObject({ actor_role: 'admin', after: config });
  });

  it('hides a field from a role: its answers lose it, the admin keeps it', async () => {
    const before = await userDesktops(user);
    expect(before.body.length).toBeGreaterThan(0);
    expect(before.body.every((d) => 'description' in d)).toBe(true);
    const config = { fields: { desktops: { description: ['admin', 'manager', 'advanced'] } } };
    expect((await put(admin, config)).statusCode).toBe(200);
    const after = await userDesktops(user);
    expect(after.status).toBe(200);
    expect(after.body.length).toBe(before.body.length);
    expect(after.body.some((d) => 'description' in d)).toBe(false);
    expect(after.body[0]?.name).toBe(before.body[0]?.name);
    const id = before.body[0]?.id ?? '';
    const one = await injectWithToken(t.app, user, {
      method: 'GET',
      url: `/api/v3/domain/info/${id}`,
    });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toHaveProperty('name');
    expect(one.json()).not.toHaveProperty('description');
    const mine = await userDesktops(admin);
    expect(mine.body.every((d) => 'description' in d)).toBe(true);
  });

  it('refuses the operation only a hidden action calls', async () => {
    const { body } = await userDesktops(user);
    const id = body[0]?.id ?? '';
    expect((await put(admin, { actions: { desktops: { delete: ['admin'] } } })).statusCode).toBe(
      200,
    );
    const res = await injectWithToken(t.app, user, {
      method: 'DELETE',
      url: `/api/v3/desktop/${id}`,
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ params: { action: 'delete' } });
    // The desktop is still there.
    expect((await userDesktops(user)).body.map((d) => d.id)).toContain(id);
  });

  it('answers 400 with a code for an invalid config and leaves the file as it was', async () => {
    const good = { roles: { desktops: { read: ['admin', 'manager', 'advanced', 'user'] } } };
    expect((await put(admin, good)).statusCode).toBe(200);
    const written = readFileSync(file, 'utf8');
    for (const bad of [
      { roles: { desktops: { read: ['root'] } } },
      { roles: { desktops: { read: 'admin' } } },
      { colours: {} },
    ]) {
      const res = await put(admin, bad);
      expect(res.statusCode).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
    }
    const unknown = await put(admin, { fields: { desktops: { no_such_field: ['admin'] } } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json()).toMatchObject({
      description_code: 'role_visibility_unknown_entry',
      params: { entries: ['/fields/desktops/no_such_field'] },
    });
    const lockout = await put(admin, { roles: { roleVisibility: { admin: ['manager'] } } });
    expect(lockout.statusCode).toBe(409);
    expect(lockout.json()).toMatchObject({ description_code: 'role_visibility_lockout' });
    expect(readFileSync(file, 'utf8')).toBe(written);
  });

  it('is refused to a non-admin, and the file is not touched', async () => {
    writeFileSync(file, '{"roles":{}}\n');
    const res = await put(user, { roles: { desktops: { read: ['user'] } } });
    expect(res.statusCode).toBe(403);
    expectErrorShape(res.json(), 'forbidden');
    const manager = await login(t.app, 'manager');
    expect((await put(manager, {})).statusCode).toBe(403);
    expect(readFileSync(file, 'utf8')).toBe('{"roles":{}}\n');
  });

  it('keeps the keys of the file it does not own', async () => {
    writeFileSync(file, JSON.stringify({ other: { kept: true }, roles: {} }));
    expect((await put(admin, { roles: { media: { view: ['admin'] } } })).statusCode).toBe(200);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      other: { kept: true },
      roles: { media: { view: ['admin'] } },
    });
    expect(existsSync(`${file}.tmp`)).toBe(false);
  });
});

describe('GET /user/role-visibility', () => {
  it("answers the caller's role sets, hidden fields and hidden actions", async () => {
    expect(
      (
        await put(admin, {
          roles: { deployments: { view: ['admin'] } },
          fields: { desktops: { description: ['admin'] } },
          actions: { desktops: { delete: ['admin'] } },
        })
      ).statusCode,
    ).toBe(200);
    const res = await injectWithToken(t.app, user, {
      method: 'GET',
      url: '/api/v3/user/role-visibility',
    });
    expect(res.statusCode).toBe(200);
    const body = res.json<RoleVisibilityEffective>();
    expect(body.role).toBe('user');
    expect(body.sets.desktops).toEqual(['read', 'write', 'view']);
    expect(body.sets.deployments).toEqual([]);
    expect(body.hiddenFields).toEqual({ desktops: ['description'] });
    expect(body.hiddenActions).toEqual({ desktops: ['delete'] });
    const forAdmin = await injectWithToken(t.app, admin, {
      method: 'GET',
      url: '/api/v3/user/role-visibility',
    });
    expect(forAdmin.json<RoleVisibilityEffective>()).toMatchObject({
      role: 'admin',
      hiddenFields: {},
      hiddenActions: {},
    });
  });
});

function client(jwt: string): Socket {
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 3000,
    extraHeaders: { origin: base },
    auth: { jwt },
  });
  open.push(s);
  return s;
}

const connected = (s: Socket) =>
  new Promise<void>((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('connect_error', reject);
  });

const next = <T>(s: Socket, wire: string) =>
  new Promise<T>((resolve) => s.once(wire, (payload: T) => resolve(payload)));

describe('socket events', () => {
  it('a connected user gets role_visibility, then desktop events without the hidden field', async () => {
    const desktop = (await userDesktops(user)).body[0];
    const userSocket = client(user);
    const adminSocket = client(admin);
    await Promise.all([connected(userSocket), connected(adminSocket)]);
    const changed = next<{ version: number }>(userSocket, 'role_visibility');
    const config = { fields: { desktops: { description: ['admin', 'manager', 'advanced'] } } };
    expect((await put(admin, config)).statusCode).toBe(200);
    expect((await changed).version).toBe(t.app.access.version);

    const ownerId = String(decodePayload(user).sub);
    const payload = { ...(desktop as Desktop), description: 'secret words' };
    const toUser = next<Record<string, unknown>>(userSocket, 'desktop_update');
    const toAdmin = next<Record<string, unknown>>(adminSocket, 'desktop_update');
    t.app.events.publish({ name: 'desktops.updated', payload, ownerId, alsoAdmins: true });
    const [seenByUser, seenByAdmin] = await Promise.all([toUser, toAdmin]);
    expect('description' in seenByUser).toBe(false);
    expect(seenByUser.id).toBe(payload.id);
    expect(seenByAdmin.description).toBe('secret words');
    // The publisher's payload is not changed by the copy sent to the user.
    expect(payload.description).toBe('secret words');
  });
});
