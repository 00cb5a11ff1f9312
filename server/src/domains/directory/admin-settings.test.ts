import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { auditLog } from '../../platform/db/schema.ts';
import { defaultSettings } from '../../platform/repository/settings-repository.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import type {
  AdminSettings,
  NotificationMessageTemplate,
  NotificationUserResponse,
} from '../../../../src/generated/types.ts';

let t: TestApp;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  for (const name of ['admin', 'manager', 'advanced', 'user'])
    tokens[name] = await login(t.app, name);
});
afterAll(async () => {
  await t.close();
});

const call = (who: string, method: 'GET' | 'PUT', url: string, payload?: unknown) =>
  injectWithToken(t.app, tokens[who] ?? '', {
    method,
    url: `/api/v3${url}`,
    ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
  });

const maintenanceBody = {
  maintenance: true,
  title: 'Back soon',
  body: 'Upgrading the disks',
  enabled: true,
};
const disclaimerBody = {
  lang: 'en',
  title: 'House rules',
  body: '<p>Be nice<script>alert(1)</script><img src=x onerror="steal()"></p>',
  footer: '<p onclick="x()">Thanks</p>',
};
const notificationBody = {
  enabled: true,
  display: ['modal'],
  title: 'Planned outage',
  body: '<p>Friday<script>alert(2)</script></p>',
  force_accept: true,
  once: false,
  roles: ['user'],
};

const auditRows = (action: string) =>
  t.app.db.select().from(auditLog).where(eq(auditLog.action, action));

describe('admin settings', () => {
  it('answers 403 to every role but admin on every operation', async () => {
    const ops: [method: 'GET' | 'PUT', url: string, body?: unknown][] = [
      ['GET', '/admin/settings'],
      ['PUT', '/admin/settings/maintenance', maintenanceBody],
      ['PUT', '/admin/settings/disclaimer', disclaimerBody],
      ['PUT', '/admin/settings/notifications/login', notificationBody],
    ];
    for (const who of ['manager', 'advanced', 'user'])
      for (const [method, url, body] of ops) {
        const res = await call(who, method, url, body);
        expect(res.statusCode, `${who} ${method} ${url}`).toBe(403);
        expectErrorShape(res.json(), 'forbidden');
      }
    expect((await call('admin', 'GET', '/admin/settings')).statusCode).toBe(200);
    expect(await t.app.db.select().from(auditLog)).toHaveLength(0);
  });

  it('refuses bodies outside the schema with 400', async () => {
    const bad: [string, unknown][] = [
      ['/admin/settings/maintenance', { ...maintenanceBody, title: '' }],
      ['/admin/settings/maintenance', { ...maintenanceBody, body: 'x'.repeat(2001) }],
      ['/admin/settings/disclaimer', { ...disclaimerBody, lang: 'xx' }],
      ['/admin/settings/notifications/login', { ...notificationBody, display: ['banner'] }],
      ['/admin/settings/notifications/login', { ...notificationBody, display: [] }],
      ['/admin/settings/notifications/logout', notificationBody],
    ];
    for (const [url, body] of bad) {
      const res = await call('admin', 'PUT', url, body);
      expect(res.statusCode, `${url} ${JSON.stringify(body)}`).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
    }
  });

  it('turns maintenance on at once: users get 503, admins keep working; off again', async () => {
    expect((await call('user', 'GET', '/user')).statusCode).toBe(200);
    const res = await call('admin', 'PUT', '/admin/settings/maintenance', maintenanceBody);
    expect(res.statusCode, res.body).toBe(200);
    const blocked = await call('user', 'GET', '/user');
    expect(blocked.statusCode).toBe(503);
    expect(blocked.json()).toMatchObject({ description_code: 'maintenance' });
    expect((await call('user', 'GET', '/maintenance')).body).toBe('true');
    const text = await t.app.inject({ method: 'GET', url: '/api/v3/maintenance/text/frontend' });
    expect(text.json()).toMatchObject({ title: 'Back soon', body: 'Upgrading the disks' });
    expect((await call('admin', 'GET', '/user')).statusCode).toBe(200);
    const shown = (await call('admin', 'GET', '/admin/settings')).json() as AdminSettings;
    expect(shown.maintenance).toBe(true);
    expect(shown.maintenance_text).toEqual({
      title: 'Back soon',
      body: 'Upgrading the disks',
      enabled: true,
    });

    const off = await call('admin', 'PUT', '/admin/settings/maintenance', {
      ...maintenanceBody,
      maintenance: false,
    });
    expect(off.statusCode).toBe(200);
    expect((await call('user', 'GET', '/user')).statusCode).toBe(200);

    const rows = await auditRows('adminSettings.setMaintenance');
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.after?.maintenance).sort()).toEqual([false, true]);
    const on = rows.find((r) => r.after?.maintenance === true);
    expect(on).toMatchObject({
      actorName: expect.any(String),
      actorRole: 'admin',
      categoryId: null,
      targetType: 'settings',
      targetId: 'maintenance',
      before: { maintenance: false },
    });
  });

  it("the maintenance text answers the admin's enabled switch, not always enabled", async () => {
    const res = await call('admin', 'PUT', '/admin/settings/maintenance', {
      ...maintenanceBody,
      enabled: false,
    });
    expect(res.statusCode, res.body).toBe(200);
    try {
      const text = await t.app.inject({ method: 'GET', url: '/api/v3/maintenance/text/frontend' });
      expect(text.statusCode).toBe(200);
      expect(text.json()).toEqual({
        title: 'Back soon',
        body: 'Upgrading the disks',
        enabled: false,
      });
    } finally {
      await call('admin', 'PUT', '/admin/settings/maintenance', {
        ...maintenanceBody,
        maintenance: false,
      });
    }
  });

  it('stores and serves the disclaimer without the unsafe HTML', async () => {
    const res = await call('admin', 'PUT', '/admin/settings/disclaimer', disclaimerBody);
    expect(res.statusCode, res.body).toBe(200);
    const stored = (await t.app.settings.all()).disclaimer_text.lang.en;
    expect(stored?.body).toBe('<p>Be nice</p>');
    expect(stored?.footer).toBe('<p>Thanks</p>');

    const served = await call('user', 'GET', '/message-template/disclaimer-acknowledgement');
    expect(served.statusCode, served.body).toBe(200);
    const text = (served.json() as { messageTemplate: NotificationMessageTemplate })
      .messageTemplate;
    expect(text).toMatchObject({ title: 'House rules', body: '<p>Be nice</p>' });
    expect(JSON.stringify(text)).not.toMatch(/script|onerror|onclick/);

    const shown = (await call('admin', 'GET', '/admin/settings')).json() as AdminSettings;
    expect(shown.disclaimer).toMatchObject({ lang: 'en', title: 'House rules' });
    expect(shown.disclaimer.languages).toContain('en');

    const rows = await auditRows('adminSettings.setDisclaimer');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ targetId: 'disclaimer_text', actorRole: 'admin' });
    expect(JSON.stringify(rows[0]?.after)).toContain('House rules');
  });

  it('keeps the other languages when one is written', async () => {
    const res = await call('admin', 'PUT', '/admin/settings/disclaimer', {
      lang: 'ca',
      title: 'Normes',
      body: '<p>Sigueu amables</p>',
      footer: '',
    });
    expect(res.statusCode).toBe(200);
    const texts = (await t.app.settings.all()).disclaimer_text;
    const seeded = defaultSettings.disclaimer_text.lang;
    expect(Object.keys(texts.lang).sort()).toEqual(Object.keys(seeded).sort());
    expect(texts.lang.ca?.title).toBe('Normes');
    expect(texts.lang.es).toEqual(seeded.es);
    expect(texts.default).toBe('en');
  });

  it('a saved notification reaches the users it is for at login, sanitised; edits keep its id', async () => {
    const res = await call('admin', 'PUT', '/admin/settings/notifications/login', notificationBody);
    expect(res.statusCode, res.body).toBe(200);
    const fetchFor = async (who: string) => {
      const r = await call(who, 'GET', '/notification/user/login/modal');
      expect(r.statusCode, r.body).toBe(200);
      return Object.values((r.json() as NotificationUserResponse).notifications);
    };
    const forUser = await fetchFor('user');
    expect(forUser).toHaveLength(1);
    const group = forUser[0]?.custom;
    expect(group).toMatchObject({
      force_accept: true,
      template: { title: 'Planned outage', body: '<p>Friday</p>' },
    });
    expect(await fetchFor('advanced')).toHaveLength(0);

    const firstId = (await t.app.settings.all()).notifications[0]?.id;
    await call('admin', 'PUT', '/admin/settings/notifications/login', {
      ...notificationBody,
      title: 'Outage moved',
    });
    const list = (await t.app.settings.all()).notifications;
    expect(list).toHaveLength(1);
    expect(list[0]?.id).toBe(firstId);
    expect((await fetchFor('user'))[0]?.custom?.template).toMatchObject({ title: 'Outage moved' });

    await call('admin', 'PUT', '/admin/settings/notifications/start_desktop', {
      ...notificationBody,
      title: 'Save your work',
      roles: [],
    });
    expect((await t.app.settings.all()).notifications.map((n) => n.trigger)).toEqual([
      'login',
      'start_desktop',
    ]);
    const shown = (await call('admin', 'GET', '/admin/settings')).json() as AdminSettings;
    expect(shown.login_notification).toMatchObject({ title: 'Outage moved', roles: ['user'] });
    expect(shown.start_desktop_notification).toMatchObject({ title: 'Save your work' });

    const rows = await auditRows('adminSettings.setNotification');
    expect(rows.map((r) => r.targetId).sort()).toEqual([
      'notifications.login',
      'notifications.login',
      'notifications.start_desktop',
    ]);
  });
});
