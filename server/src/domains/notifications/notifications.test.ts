import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { users } from '../../platform/db/schema.ts';
import type { NotificationSetting } from '../../platform/repository/settings-repository.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser, loginTo, userRow } from '../../../test/support/fixtures.ts';
import type { NotificationUserResponse } from '../../../../src/generated/types.ts';

let t: TestApp;

const text = (title: string, body = `<p>${title}</p>`, footer = '') => ({
  default: 'en',
  lang: { en: { title, body, footer } },
});

const base: Omit<NotificationSetting, 'id' | 'text'> = {
  enabled: true,
  trigger: 'login',
  display: ['modal'],
  once: false,
  force_accept: false,
  ignore_after: null,
  roles: [],
};

const settings: NotificationSetting[] = [
  {
    ...base,
    id: 'welcome',
    force_accept: true,
    text: {
      default: 'en',
      lang: {
        en: {
          title: 'Welcome & hello',
          body: '<p onclick="steal()">Hi <script>alert(1)</script><b>there</b> <strong>now</strong></p>',
          footer:
            '<a href="javascript:alert(1)">bad</a> <a href="https://example.com/?a=1&amp;b=2" target="_top">ok</a>',
        },
        es: { title: 'Bienvenida', body: '<p>Hola</p>', footer: '' },
      },
    },
  },
  { ...base, id: 'once', once: true, display: ['modal', 'fullpage'], text: text('Once') },
  { ...base, id: 'disabled', enabled: false, text: text('Disabled') },
  { ...base, id: 'admins', roles: ['admin'], text: text('Admins') },
  { ...base, id: 'old', ignore_after: Math.floor(Date.now() / 1000) - 60, text: text('Old') },
  { ...base, id: 'start', trigger: 'start_desktop', text: text('Start') },
  {
    ...base,
    id: 'catalan',
    text: { default: 'ca', lang: { ca: { title: 'Hola', body: '<p>Bon dia</p>', footer: '' } } },
  },
  { ...base, id: 'nolang', text: { default: 'de', lang: {} } },
];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  await t.app.settings.set('notifications', settings);
});
afterAll(async () => {
  await t.close();
});

async function fetchFor(token: string, trigger = 'login', display = 'modal') {
  const res = await injectWithToken(t.app, token, {
    method: 'GET',
    url: `/api/v3/notification/user/${trigger}/${display}`,
  });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as NotificationUserResponse).notifications;
}

const ids = (n: NotificationUserResponse['notifications']) =>
  Object.values(n).flatMap((byType) =>
    Object.values(byType ?? {}).flatMap((g) => (g?.notifications ?? []).map((x) => x.id)),
  );

async function freshUser(username: string, role: 'user' | 'admin' = 'user') {
  await addUser(t.app, {
    username,
    role,
    categoryId: 'default',
    groupId: role === 'admin' ? 'default-admins' : 'default-users',
  });
  return loginTo(t.app, username, 'default');
}

describe('GET /notification/user/{trigger}/{display}', () => {
  it('answers the matching notifications by order and item type, with sanitised HTML', async () => {
    const n = await fetchFor(await freshUser('n-user-1'));
    expect(Object.keys(n)).toEqual(['1', '2', '7']);
    expect(ids(n)).toEqual(['welcome', 'once', 'catalan']);
    const welcome = n['1']?.custom;
    expect(welcome).toMatchObject({
      display: ['modal'],
      action_id: 'welcome',
      template_id: null,
      force_accept: true,
    });
    expect(welcome?.template?.title).toBe('Welcome & hello');
    expect(welcome?.template?.body).toBe('<p>Hi there <strong>now</strong></p>');
    expect(welcome?.template?.footer).toBe(
      '<a rel="noopener noreferrer">bad</a> <a href="https://example.com/?a=1&amp;b=2" rel="noopener noreferrer">ok</a>',
    );
    expect(welcome?.notifications).toEqual([{ id: 'welcome', ...welcome?.template }]);
    // No text in the user's language nor the default one: left out.
    expect(ids(n)).not.toContain('nolang');
  });

  it('shows a once notification a single time per user, whatever the display', async () => {
    const token = await freshUser('n-user-2');
    expect(ids(await fetchFor(token, 'login', 'fullpage'))).toEqual(['once']);
    expect(ids(await fetchFor(token))).toEqual(['welcome', 'catalan']);
    expect(ids(await fetchFor(token))).toEqual(['welcome', 'catalan']);
    const seen = await t.app.database.query<{ notification_id: string }>(
      'SELECT notification_id FROM notification_seen WHERE user_id = $1',
      [(await userRow(t.app, 'n-user-2')).id],
    );
    expect(seen.map((r) => r.notification_id)).toEqual(['once']);

    // Parallel requests of a new user: exactly one of them carries it.
    const other = await freshUser('n-user-3');
    const answers = await Promise.all(Array.from({ length: 6 }, () => fetchFor(other)));
    expect(answers.filter((a) => ids(a).includes('once'))).toHaveLength(1);
  });

  it("keeps role-restricted ones for their roles and follows the trigger, the user's language and ignore_after", async () => {
    const admin = await freshUser('n-admin', 'admin');
    expect(ids(await fetchFor(admin))).toContain('admins');
    expect(ids(await fetchFor(await login(t.app, 'user')))).not.toContain('admins');

    expect(ids(await fetchFor(admin, 'start_desktop'))).toEqual(['start']);

    const token = await freshUser('n-user-es');
    const es = await userRow(t.app, 'n-user-es');
    await t.app.db.update(users).set({ lang: 'es' }).where(eq(users.id, es.id));
    const n = await fetchFor(token);
    expect(n['1']?.custom?.template).toEqual({
      title: 'Bienvenida',
      body: '<p>Hola</p>',
      footer: '',
    });
    expect(n['7']?.custom?.template?.title).toBe('Hola');
    expect(ids(n)).not.toContain('old');
  });

  it('refuses unknown triggers and displays (400) and anonymous callers (401)', async () => {
    const token = await login(t.app, 'user');
    for (const url of [
      '/api/v3/notification/user/boot/modal',
      '/api/v3/notification/user/login/popup',
    ]) {
      expect((await injectWithToken(t.app, token, { method: 'GET', url })).statusCode).toBe(400);
    }
    const anonymous = await t.app.inject({
      method: 'GET',
      url: '/api/v3/notification/user/login/modal',
    });
    expect(anonymous.statusCode).toBe(401);
  });
});

describe('GET /message-template/{name}', () => {
  it("answers the disclaimer in the user's language, else the default one, sanitised", async () => {
    await t.app.settings.set('disclaimer_text', {
      default: 'en',
      lang: {
        en: { title: 'Terms', body: '<p>Be nice<img src=x onerror=alert(1)></p>', footer: '<hr>' },
        ca: { title: 'Termes', body: '<p>Sigues amable</p>', footer: '' },
      },
    });
    const token = await freshUser('n-user-ca');
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/message-template/disclaimer-acknowledgement',
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      messageTemplate: { title: 'Terms', body: '<p>Be nice</p>', footer: '<hr>' },
    });
    const ca = await userRow(t.app, 'n-user-ca');
    await t.app.db.update(users).set({ lang: 'ca' }).where(eq(users.id, ca.id));
    const again = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/message-template/disclaimer-acknowledgement',
    });
    expect((again.json() as { messageTemplate: { title: string } }).messageTemplate.title).toBe(
      'Termes',
    );
  });

  it('answers 404 not_found for another name', async () => {
    const res = await injectWithToken(t.app, await login(t.app, 'user'), {
      method: 'GET',
      url: '/api/v3/message-template/welcome',
    });
    expect(res.statusCode).toBe(404);
    expect((res.json() as { description_code: string }).description_code).toBe('not_found');
  });
});
