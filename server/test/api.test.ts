import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Desktop, UserConfig, SessionUser } from '../../src/generated/validators.js';
import { operations } from '../../src/generated/api.ts';
import { portalVersion } from '../src/platform/lib/version.ts';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from './support/helper.ts';

let databaseUrl: string;
let t: TestApp;
let userToken: string;
let adminToken: string;

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  t = await buildTestApp(databaseUrl);
  userToken = await login(t.app, 'user');
  adminToken = await login(t.app, 'admin');
});
afterAll(async () => t.close());

const get = (url: string, token = userToken) =>
  injectWithToken(t.app, token, { method: 'GET', url });

describe('GET /api/v3/user', () => {
  it('returns the whitelisted session fields and never the password hash', async () => {
    const res = await get('/api/v3/user');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(SessionUser(body)).toBe(true);
    expect(body).toMatchObject({
      username: 'user',
      role_id: 'user',
      role_name: 'User',
      category_name: 'Default',
      group_name: 'default-users',
    });
    expect(res.body).not.toMatch(/argon2|password/);
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('GET /api/v3/user/config', () => {
  it('has every config field and the current session times in epoch seconds', async () => {
    const res = await get('/api/v3/user/config');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(UserConfig(body), JSON.stringify(UserConfig.errors)).toBe(true);
    const sid = String(decodePayload(userToken).session_id);
    const [row] = await t.app.database.query<{ max_renew_at: Date; max_at: Date }>(
      'SELECT max_renew_at, max_at FROM sessions WHERE id = $1',
      [sid],
    );
    expect(body.session).toEqual({
      id: sid,
      max_renew_time: Math.floor(new Date(row?.max_renew_at ?? 0).getTime() / 1000),
      max_time: Math.floor(new Date(row?.max_at ?? 0).getTime() / 1000),
    });
    expect(body.session.max_time - body.session.max_renew_time).toBeGreaterThan(7 * 3600);
    expect(body.show_bookings_button).toBe(false);
    expect((await get('/api/v3/user/config', adminToken)).json().show_bookings_button).toBe(true);
    // the seconds a shutting-down desktop gets before the engine forces it off
    expect(body.desktop_shutdown_timeout).toBe(Math.ceil(t.app.config.shutdownGraceMs / 1000));
    expect(body.desktop_shutdown_timeout).toBeGreaterThan(0);
  });
});

describe('GET /api/v3/user/desktops', () => {
  it("returns only the caller's desktops, in the Desktop schema shape, ordered by name", async () => {
    const admin = await t.app.users.findLocal('admin', 'default');
    await t.app.desktops.create({
      userId: admin?.id ?? '',
      categoryId: 'default',
      groupId: 'default-admins',
      name: 'Admin desktop',
    });
    const res = await get('/api/v3/user/desktops');
    expect(res.statusCode).toBe(200);
    const list = res.json() as { id: string; name: string; version: number; viewers: string[] }[];
    expect(list.map((d) => d.name)).toEqual(['Demo desktop 1', 'Demo desktop 2', 'Demo desktop 3']);
    for (const d of list) {
      expect(Desktop(d), JSON.stringify(Desktop.errors)).toBe(true);
      // The owner is the caller: the list does not repeat it.
      expect(d).not.toHaveProperty('user');
      expect((await t.app.desktops.byId(d.id))?.userId).toBe(decodePayload(userToken).sub);
      expect(d.viewers).toEqual(['browser-vnc', 'file-spice']);
      expect(d.version).toBeGreaterThanOrEqual(1);
    }
    expect(res.body).not.toMatch(/runtime|pirineus/);
    const adminList = (await get('/api/v3/user/desktops', adminToken)).json() as { name: string }[];
    expect(adminList.map((d) => d.name)).toEqual(['Admin desktop']);
  });

  it('includes deployment desktops only while visible', async () => {
    const owner = await t.app.users.findLocal('user', 'default');
    const d = await t.app.desktops.create({
      userId: owner?.id ?? '',
      categoryId: 'default',
      groupId: 'default-users',
      name: 'Deployment desk',
      tag: 'dep-1',
      visible: false,
    });
    expect(
      (await get('/api/v3/user/desktops')).json().map((x: { id: string }) => x.id),
    ).not.toContain(d.id);
    const updated = await t.app.desktops.update(d.id, { visible: true });
    expect(updated?.version).toBe((d.version ?? 0) + 1);
    expect((await get('/api/v3/user/desktops')).json().map((x: { id: string }) => x.id)).toContain(
      d.id,
    );
    await t.app.desktops.remove(d.id);
  });
});

describe('desktop list cache', () => {
  it('drops the cached list when a row written outside the repository is published with publishCurrent', async () => {
    const before = (await get('/api/v3/user/desktops')).json() as unknown[];
    const owner = await t.app.users.findLocal('user', 'default');
    await t.app.database.query(
      "INSERT INTO desktops (id, user_id, category_id, group_id, name) VALUES ('raw-desk-1', $1, 'default', 'default-users', 'Raw desktop')",
      [owner?.id],
    );
    expect(await t.app.desktops.publishCurrent('raw-desk-1', 'desktops.created')).toMatchObject({
      id: 'raw-desk-1',
      version: 1,
    });
    const after = (await get('/api/v3/user/desktops')).json() as { id: string }[];
    expect(after).toHaveLength(before.length + 1);
    expect(await t.app.desktops.remove('raw-desk-1')).toBe(true);
    expect((await get('/api/v3/user/desktops')).json()).toHaveLength(before.length);
  });
});

describe('public and small endpoints', () => {
  it('GET /api/v3/health answers ok with the database', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v3/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', database: true, node: t.config.nodeName });
  });

  it('lists categories and answers 404 JSON for an unknown one', async () => {
    const list = await t.app.inject({ method: 'GET', url: '/api/v3/categories' });
    expect(list.json()).toEqual([
      { id: 'default', name: 'Default', frontend: true, custom_url_name: 'default', photo: null },
      {
        id: 'school2',
        name: 'Second school',
        frontend: true,
        custom_url_name: 'school2',
        photo: null,
      },
    ]);
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v3/category/default' })).json().name,
    ).toBe('Default');
    const missing = await t.app.inject({ method: 'GET', url: '/api/v3/category/nope' });
    expect(missing.statusCode).toBe(404);
    expectErrorShape(missing.json(), 'not_found');
  });

  it('answers {} on /api/v3/check, null on the status bar and false on /maintenance', async () => {
    expect((await get('/api/v3/check')).json()).toEqual({});
    expect((await get('/api/v3/notifications/status_bar')).body).toBe('null');
    expect((await get('/api/v3/maintenance')).body).toBe('false');
  });

  it('answers unknown routes with a 404 JSON error body, never HTML', async () => {
    for (const url of ['/api/v3/does-not-exist', '/authentication/nope', '/some/page']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expectErrorShape(res.json(), 'not_found');
    }
  });

  it('sets the security headers', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v3/health' });
    expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBeDefined();
  });
});

describe('request bodies', () => {
  it('answers malformed JSON with 400 and an oversized body with 413, both in the error shape', async () => {
    const bad = await injectWithToken(t.app, userToken, {
      method: 'POST',
      url: '/authentication/logout',
      headers: { 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(bad.statusCode).toBe(400);
    expectErrorShape(bad.json(), 'bad_request');
    const big = await injectWithToken(t.app, userToken, {
      method: 'POST',
      url: '/authentication/logout',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ a: 'x'.repeat(1024 * 1024 + 10) }),
    });
    expect(big.statusCode).toBe(413);
    expectErrorShape(big.json(), 'payload_too_large');
  });
});

describe('maintenance mode', () => {
  it('gives non-admins 503 JSON on token routes while admins keep working', async () => {
    await t.app.settings.set('maintenance', true);
    const savedText = (await t.app.settings.all()).maintenance_text;
    await t.app.settings.set('maintenance_text', { ...savedText, enabled: true });
    try {
      const res = await get('/api/v3/user');
      expect(res.statusCode).toBe(503);
      expectErrorShape(res.json(), 'service_unavailable');
      expect((await get('/api/v3/user', adminToken)).statusCode).toBe(200);
      expect((await get('/api/v3/maintenance')).body).toBe('true');
      const text = await t.app.inject({ method: 'GET', url: '/api/v3/maintenance/text/frontend' });
      expect(text.statusCode).toBe(200);
      expect(text.json()).toMatchObject({ enabled: true });
    } finally {
      await t.app.settings.set('maintenance', false);
      await t.app.settings.set('maintenance_text', savedText);
    }
    expect(
      (await t.app.inject({ method: 'GET', url: '/api/v3/maintenance/text/frontend' })).statusCode,
    ).toBe(204);
  });
});

describe('GET /api/v3/openapi.json', () => {
  it('documents every operation of the generated table with bearer security and the error schema', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v3/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(portalVersion);
    for (const op of Object.values(operations)) {
      const path = (op.base === 'auth' ? '/authentication' : '/api/v3') + op.path;
      const item = doc.paths[path]?.[op.method.toLowerCase()];
      expect(item, `${op.key}`).toBeDefined();
      expect(item.operationId).toBe(op.key);
      expect(item.responses.default.content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Error',
      });
      if (op.access !== 'public') expect(item.security).toEqual([{ bearer: [] }]);
    }
    expect(
      doc.paths['/authentication/login'].post.requestBody.content['multipart/form-data'],
    ).toBeDefined();
    expect(
      doc.paths['/api/v3/user/desktops'].get.responses[200].content['application/json'].schema,
    ).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Desktop' },
    });
    expect(doc.components.schemas.Desktop.properties.state).toEqual(
      expect.objectContaining({ $ref: '#/components/schemas/DesktopState' }),
    );
  });
});

describe('role visibility config', () => {
  it('enforces a config file restricting desktops.read to admin: a user gets 403, an admin 200', async () => {
    const file = join(t.config.dataDir, 'portal.json');
    writeFileSync(file, JSON.stringify({ roles: { desktops: { read: ['admin'] } } }));
    const restricted = await buildTestApp(databaseUrl, { portalConfigPath: file });
    try {
      const user = await login(restricted.app, 'user');
      const res = await injectWithToken(restricted.app, user, {
        method: 'GET',
        url: '/api/v3/user/desktops',
      });
      expect(res.statusCode).toBe(403);
      expectErrorShape(res.json(), 'forbidden');
      const admin = await login(restricted.app, 'admin');
      expect(
        (
          await injectWithToken(restricted.app, admin, {
            method: 'GET',
            url: '/api/v3/user/desktops',
          })
        ).statusCode,
      ).toBe(200);
      // token routes outside the restricted set are untouched
      expect(
        (await injectWithToken(restricted.app, user, { method: 'GET', url: '/api/v3/user' }))
          .statusCode,
      ).toBe(200);
      const doc = (
        await restricted.app.inject({ method: 'GET', url: '/api/v3/openapi.json' })
      ).json();
      expect(doc.paths['/api/v3/user/desktops'].get['x-roles']).toEqual(['admin']);
    } finally {
      await restricted.close();
    }
  });

  it('refuses to boot with an invalid config file', async () => {
    const file = join(t.config.dataDir, 'bad-portal.json');
    writeFileSync(file, JSON.stringify({ roles: { desktops: { read: ['root'] } } }));
    await expect(buildTestApp(databaseUrl, { portalConfigPath: file })).rejects.toThrow(
      /role-visibility config/,
    );
  });
});

describe('built SPA', () => {
  it('serves dist/ files and falls back to index.html for page routes, never for the API', async () => {
    const { mkdirSync } = await import('node:fs');
    const dist = join(t.config.dataDir, 'dist');
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), '<!doctype html><title>portal</title>');
    writeFileSync(join(dist, 'assets', 'app-123.js'), 'console.log(1)');
    const spa = await buildTestApp(databaseUrl, { distDir: dist });
    try {
      const page = await spa.app.inject({
        method: 'GET',
        url: '/desktops/new',
        headers: { accept: 'text/html,application/xhtml+xml' },
      });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<title>portal</title>');
      expect(page.headers['content-security-policy']).toMatch(/default-src 'self'/);
      const asset = await spa.app.inject({ method: 'GET', url: '/assets/app-123.js' });
      expect(asset.statusCode).toBe(200);
      expect(asset.headers['cache-control']).toMatch(/immutable/);
      const api = await spa.app.inject({
        method: 'GET',
        url: '/api/v3/nope',
        headers: { accept: 'text/html' },
      });
      expect(api.statusCode).toBe(404);
      expectErrorShape(api.json(), 'not_found');
    } finally {
      await spa.close();
    }
  });
});
