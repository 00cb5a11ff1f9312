import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { io as connect, type Socket } from 'socket.io-client';
import { eq } from 'drizzle-orm';
import {
  deployments,
  desktops,
  media,
  templates,
  users,
  type UserRow,
} from '../../platform/db/schema.ts';
import { defaultSettings, type Settings } from '../../platform/repository/settings-repository.ts';
import { ISSUER, KID } from '../../platform/auth/tokens.ts';
import { sendMessage } from '../../platform/events/messages.ts';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import {
  addCategory,
  addDesktop,
  addGroup,
  addMedia,
  addTemplate,
  addUser,
  loginTo,
  userRow,
} from '../../../test/support/fixtures.ts';
import { within } from '../../../test/support/wait.ts';
import type { Desktop, Message, Role } from '../../../../src/generated/types.ts';

let t: TestApp;
let base: string;
const sockets: Socket[] = [];

beforeAll(async () => {
  // A desktop is marked started here without a VM: the reconciler's 5 s round would mark it
  // failed under a test (and a failed desktop may migrate), so it runs only at boot.
  t = await buildTestApp(await createTestDatabase(), { reconcileMs: 3_600_000 });
  await addCategory(t.app, 'other');
  await addGroup(t.app, 'other-users', 'other');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await t.close();
});

const GROUP_OF: Record<Role, string> = {
  admin: 'default-admins',
  manager: 'default-managers',
  advanced: 'default-advanced',
  user: 'default-users',
};

interface Account {
  row: UserRow;
  token: string;
}

let counter = 0;
async function account(role: Role, categoryId = 'default'): Promise<Account> {
  const username = `m-${role}-${++counter}`;
  const row = await addUser(t.app, {
    username,
    role,
    categoryId,
    groupId: categoryId === 'default' ? GROUP_OF[role] : 'other-users',
  });
  return { row, token: await loginTo(t.app, username, categoryId) };
}

async function addDeployment(
  owner: UserRow,
  name: string,
  coOwners: string[] = [],
): Promise<string> {
  const id = randomUUID();
  await t.app.db.insert(deployments).values({
    id,
    name,
    userId: owner.id,
    categoryId: owner.categoryId,
    groupId: owner.groupId,
    coOwners,
  });
  return id;
}

const setMigration = (patch: Partial<Settings['migration']>) =>
  t.app.settings.set('migration', { ...defaultSettings.migration, ...patch });

const call = (
  token: string,
  method: 'GET' | 'POST',
  url: string,
  payload?: Record<string, unknown>,
) =>
  injectWithToken(t.app, token, { method, url: `/api/v3${url}`, ...(payload ? { payload } : {}) });

const exportCode = (token: string) => call(token, 'POST', '/user_migration/export', {});
const importCode = (token: string, code: string) =>
  call(token, 'POST', '/user_migration/import', { token: code });
const items = (token: string) => call(token, 'GET', '/user_migration/items');
const migrate = (token: string) => call(token, 'POST', '/user_migration/auto', {});

async function codeOf(origin: Account): Promise<string> {
  const res = await exportCode(origin.token);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { token: string }).token;
}

function expectCode(res: { statusCode: number; json(): unknown }, status: number, code: string) {
  expect(res.statusCode).toBe(status);
  expect((res.json() as { description_code: string }).description_code).toBe(code);
}

const migrationRow = async (originId: string) =>
  (
    await t.app.database.query<{
      status: string;
      token_jti: string;
      target_user_id: string | null;
      expires_at: Date;
      result: Record<string, unknown> | null;
    }>(
      'SELECT status, token_jti, target_user_id, expires_at, result FROM user_migrations WHERE origin_user_id = $1',
      [originId],
    )
  )[0];

/** A token signed by the server's key with any claims (types the server does not issue itself). */
async function signed(claims: Record<string, unknown>, exp: number): Promise<string> {
  return t.app.tokens.sign(
    new SignJWT({ kid: KID, ...claims }).setIssuer(ISSUER).setIssuedAt().setExpirationTime(exp),
  );
}

function socketOf(token: string): Promise<Socket> {
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    timeout: 3000,
    extraHeaders: { origin: base },
    auth: { jwt: token },
  });
  sockets.push(s);
  return new Promise((resolve, reject) => {
    s.once('connect', () => resolve(s));
    s.once('connect_error', reject);
  });
}

describe('export', () => {
  it('gives an origin owning items a one-hour user-migration code and records it', async () => {
    const origin = await account('advanced');
    await addDesktop(t.app, origin.row, 'desk');
    const before = Math.floor(Date.now() / 1000);
    const code = await codeOf(origin);
    const claims = decodePayload(code);
    expect(claims.type).toBe('user-migration');
    expect(claims.user_id).toBe(origin.row.id);
    expect(Number(claims.exp) - before).toBeGreaterThanOrEqual(3599);
    expect(Number(claims.exp) - before).toBeLessThanOrEqual(3601);
    const row = await migrationRow(origin.row.id);
    expect(row?.status).toBe('exported');
    expect(row?.token_jti).toBe(claims.jti);
    expect(
      Math.abs(new Date(row?.expires_at ?? 0).getTime() / 1000 - Number(claims.exp)),
    ).toBeLessThan(5);
    // The code is no login: it opens nothing.
    expect((await call(code, 'GET', '/user')).statusCode).toBe(403);
  });

  it('refuses an origin owning nothing, an administrator, and any export while exports are disabled', async () => {
    const empty = await account('user');
    expectCode(await exportCode(empty.token), 400, 'migration_no_items_available');

    const admin = await account('admin');
    await addDesktop(t.app, admin.row, 'admin-desk');
    expectCode(await exportCode(admin.token), 403, 'role_migration_admin');

    const origin = await account('user');
    await addDesktop(t.app, origin.row, 'desk');
    await setMigration({ export: false });
    try {
      expectCode(await exportCode(origin.token), 403, 'migration_export_disabled');
    } finally {
      await setMigration({});
    }
    expect((await exportCode(origin.token)).statusCode).toBe(200);
  });

  it('accepts the token of a user whose login asks for a migration', async () => {
    const origin = await account('user');
    await addDesktop(t.app, origin.row, 'desk');
    const required = await signed(
      { type: 'user-migration-required', user_id: origin.row.id },
      Math.floor(Date.now() / 1000) + 600,
    );
    const res = await exportCode(required);
    expect(res.statusCode, res.body).toBe(200);
    expect(decodePayload((res.json() as { token: string }).token).user_id).toBe(origin.row.id);
  });

  it('voids the previous code when a new one is made', async () => {
    const origin = await account('user');
    const target = await account('user');
    await addDesktop(t.app, origin.row, 'desk');
    const first = await codeOf(origin);
    const second = await codeOf(origin);
    expectCode(await importCode(target.token, first), 404, 'migration_not_found');
    expect((await importCode(target.token, second)).statusCode).toBe(200);
    // A new export after an import takes the code back from the target.
    const third = await codeOf(origin);
    expectCode(await items(target.token), 428, 'invalid_token');
    expectCode(await importCode(target.token, second), 404, 'migration_not_found');
    expect((await importCode(target.token, third)).statusCode).toBe(200);
  });
});

describe('import', () => {
  it('checks the rules in order and answers 428 with the first one broken', async () => {
    const origin = await account('advanced');
    await addDesktop(t.app, origin.row, 'desk');
    await addTemplate(t.app, origin.row, { id: `tpl-${randomUUID()}` });
    const code = await codeOf(origin);

    expectCode(await importCode(origin.token, code), 428, 'same_user_migration');
    const elsewhere = await account('user', 'other');
    // Another category and a plain user: the category is the first rule broken.
    expectCode(await importCode(elsewhere.token, code), 428, 'different_category_migration');
    const plain = await account('user');
    expectCode(await importCode(plain.token, code), 428, 'role_migration_user');

    await t.app.db.update(users).set({ role: 'admin' }).where(eq(users.id, origin.row.id));
    const manager = await account('manager');
    try {
      expectCode(await importCode(manager.token, code), 428, 'role_migration_admin');
      const admin = await account('admin');
      expect((await importCode(admin.token, code)).statusCode).toBe(200);
    } finally {
      await t.app.db.update(users).set({ role: 'advanced' }).where(eq(users.id, origin.row.id));
    }
    expect((await importCode(manager.token, code)).statusCode).toBe(200);
    expect((await migrationRow(origin.row.id))?.target_user_id).toBe(manager.row.id);
  });

  it("lets a plain user take an advanced user's desktops when nothing else is owned", async () => {
    const origin = await account('advanced');
    await addDesktop(t.app, origin.row, 'desk');
    const plain = await account('user');
    expect((await importCode(plain.token, await codeOf(origin))).statusCode).toBe(200);
  });

  it("refuses items that do not fit the target's quota, one code per kind", async () => {
    const cases: [
      string,
      (o: UserRow) => Promise<unknown>,
      Record<string, number>,
      (t: UserRow) => Promise<unknown>,
    ][] = [
      [
        'migration_desktop_quota_error',
        (o) => addDesktop(t.app, o, 'desk'),
        { desktops: 1 },
        (u) => addDesktop(t.app, u, 'mine'),
      ],
      [
        'migration_template_quota_error',
        (o) => addTemplate(t.app, o, { id: `tpl-${randomUUID()}` }),
        { templates: 1 },
        (u) => addTemplate(t.app, u, { id: `tpl-${randomUUID()}` }),
      ],
      [
        'migration_media_quota_error',
        (o) => addMedia(t.app, o, { id: `iso-${randomUUID()}`, kind: 'iso' }),
        { isos: 1 },
        (u) => addMedia(t.app, u, { id: `iso-${randomUUID()}`, kind: 'iso' }),
      ],
      [
        'migration_deployments_quota_error',
        (o) => addDeployment(o, 'dep'),
        { deployments_total: 1 },
        (u) => addDeployment(u, 'mine'),
      ],
    ];
    for (const [code, give, quota, own] of cases) {
      const origin = await account('advanced');
      await give(origin.row);
      const target = await account('advanced');
      await own(target.row);
      await t.app.db.update(users).set({ quota }).where(eq(users.id, target.row.id));
      const migrationCode = await codeOf(origin);
      expectCode(await importCode(target.token, migrationCode), 428, code);

      // Without quota checking the import passes and the items list names the problem.
      await setMigration({ check_quotas: false });
      try {
        expect((await importCode(target.token, migrationCode)).statusCode).toBe(200);
        const list = await items(target.token);
        expect(list.statusCode).toBe(200);
        expect((list.json() as { quota_errors: string[] }).quota_errors).toEqual([code]);
      } finally {
        await setMigration({});
      }
    }
  });

  it('deletes an expired code and answers 400 token_expired; an unknown code is 404, never 401', async () => {
    const origin = await account('user');
    const target = await account('user');
    await addDesktop(t.app, origin.row, 'desk');
    const code = await codeOf(origin);
    const jti = decodePayload(code).jti;
    const expired = await signed(
      { type: 'user-migration', user_id: origin.row.id, jti },
      Math.floor(Date.now() / 1000) - 3600,
    );
    expectCode(await importCode(target.token, expired), 400, 'token_expired');
    expect(await migrationRow(origin.row.id)).toBeUndefined();
    expectCode(await importCode(target.token, code), 404, 'migration_not_found');

    expectCode(await importCode(target.token, 'abc.def.ghi'), 404, 'migration_not_found');
    const wrongType = await signed(
      { type: 'password-reset', user_id: origin.row.id, jti },
      Math.floor(Date.now() / 1000) + 600,
    );
    expectCode(await importCode(target.token, wrongType), 404, 'migration_not_found');
  });

  it('allows one user 5 migration-code imports a minute, then answers 429 with Retry-After, whatever the code', async () => {
    const origin = await account('user');
    const target = await account('user');
    const other = await account('user');
    await addDesktop(t.app, origin.row, 'desk');
    for (let i = 0; i < 5; i++)
      expectCode(await importCode(target.token, `wrong.code.${i}`), 404, 'migration_not_found');
    const sixth = await importCode(target.token, await codeOf(origin));
    expectCode(sixth, 429, 'too_many_requests');
    const retryAfter = Date.parse(String(sixth.headers['retry-after']));
    expect(retryAfter).toBeGreaterThan(Date.now());
    expect(retryAfter).toBeLessThanOrEqual(Date.now() + 61_000);
    expect((await migrationRow(origin.row.id))?.status).not.toBe('imported');
    // The limit is the user's own: another user still imports.
    expectCode(await importCode(other.token, 'wrong.code.x'), 404, 'migration_not_found');
  });

  it('is refused while imports are disabled', async () => {
    const origin = await account('user');
    const target = await account('user');
    await addDesktop(t.app, origin.row, 'desk');
    const code = await codeOf(origin);
    await setMigration({ import: false });
    try {
      expectCode(await importCode(target.token, code), 403, 'migration_import_disabled');
    } finally {
      await setMigration({});
    }
  });

  it('keeps one imported migration per target: importing another puts the previous one back', async () => {
    const a = await account('user');
    const b = await account('user');
    const target = await account('user');
    await addDesktop(t.app, a.row, 'from-a');
    await addDesktop(t.app, b.row, 'from-b');
    expect((await importCode(target.token, await codeOf(a))).statusCode).toBe(200);
    expect((await importCode(target.token, await codeOf(b))).statusCode).toBe(200);
    expect((await migrationRow(a.row.id))?.status).toBe('exported');
    expect((await migrationRow(a.row.id))?.target_user_id).toBeNull();
    expect((await migrationRow(b.row.id))?.status).toBe('imported');
    const list = (await items(target.token)).json() as {
      origin_user: string;
      desktops: { name: string }[];
    };
    expect(list.origin_user).toBe(b.row.name);
    expect(list.desktops.map((d) => d.name)).toEqual(['from-b']);
  });
});

describe('items and migrate', () => {
  it('answers 428 invalid_token without an imported code and no_items_to_migrate when nothing is left', async () => {
    const target = await account('user');
    expectCode(await items(target.token), 428, 'invalid_token');
    expectCode(await migrate(target.token), 428, 'invalid_token');

    const origin = await account('user');
    const desk = await addDesktop(t.app, origin.row, 'desk');
    expect((await importCode(target.token, await codeOf(origin))).statusCode).toBe(200);
    await t.app.db.delete(desktops).where(eq(desktops.id, desk));
    expectCode(await items(target.token), 428, 'no_items_to_migrate');
    expectCode(await migrate(target.token), 428, 'no_items_to_migrate');
  });

  it('moves everything in one go once the desktops are stopped, then disables the origin', async () => {
    const origin = await account('advanced');
    const target = await account('advanced');
    const other = await account('advanced');
    const running = await addDesktop(t.app, origin.row, 'Work', { state: 'started' });
    const second = await addDesktop(t.app, origin.row, 'Lab');
    await addDesktop(t.app, target.row, 'Work');
    const templateId = `tpl-${randomUUID()}`;
    await addTemplate(t.app, origin.row, { id: templateId, name: 'Base' });
    const isoId = `iso-${randomUUID()}`;
    await addMedia(t.app, origin.row, { id: isoId, kind: 'iso', name: 'Installer' });
    const deploymentId = await addDeployment(origin.row, 'Class', [target.row.id, other.row.id]);
    // A desktop of someone else's deployment stays where it is.
    const foreignDeployment = await addDeployment(other.row, 'Other class');
    const student = await addDesktop(t.app, origin.row, 'Student desk', { tag: foreignDeployment });

    expect((await importCode(target.token, await codeOf(origin))).statusCode).toBe(200);
    const list = await items(target.token);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      desktops: [
        { id: second, name: 'Lab', kind: 'persistent' },
        { id: running, name: 'Work', kind: 'persistent' },
      ],
      templates: [{ id: templateId, name: 'Base' }],
      media: [{ id: isoId, name: 'Installer', kind: 'iso' }],
      deployments: [{ id: deploymentId, name: 'Class' }],
      origin_user: origin.row.name,
    });

    const refused = await migrate(target.token);
    expectCode(refused, 409, 'desktops_not_stopped');
    expect((await migrationRow(origin.row.id))?.status).toBe('imported');
    expect((await t.app.desktops.table.get(running))?.userId).toBe(origin.row.id);

    await t.app.db.update(desktops).set({ state: 'stopped' }).where(eq(desktops.id, running));
    const originSocket = await socketOf(origin.token);
    const targetSocket = await socketOf(target.token);
    const message = new Promise<Message>((resolve) => originSocket.once('msg', resolve));
    const added: string[] = [];
    targetSocket.on('desktop_add', (d: Desktop) => added.push(d.id));
    const originGone = new Promise<void>((resolve) =>
      originSocket.once('disconnect', () => resolve()),
    );

    const res = await migrate(target.token);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      migrated_desktops: 2,
      migrated_templates: 1,
      migrated_media: 1,
      migrated_deployments: 1,
    });
    expect(await within(message, "the origin's user-migrated message")).toEqual({
      type: 'info',
      msg_code: 'user-migrated',
      params: { name: target.row.name },
    });
    await within(originGone, "the origin's socket closing");

    // The target sees the desktops; the one whose name it already used got another name.
    const mine = (await call(target.token, 'GET', '/user/desktops')).json() as Desktop[];
    const byId = new Map(mine.map((d) => [d.id, d.name]));
    expect(byId.get(second)).toBe('Lab');
    expect(byId.get(running)).toBe('Work (2)');
    // Socket events arrive after the answer: wait for both.
    await expect.poll(() => [...added].sort()).toEqual([running, second].sort());
    const moved = await t.app.desktops.table.get(running);
    expect(moved).toMatchObject({ userId: target.row.id, groupId: target.row.groupId });
    expect((await t.app.desktops.table.get(student))?.userId).toBe(origin.row.id);
    const [tpl] = await t.app.db.select().from(templates).where(eq(templates.id, templateId));
    expect(tpl?.userId).toBe(target.row.id);
    const [iso] = await t.app.db.select().from(media).where(eq(media.id, isoId));
    expect(iso?.userId).toBe(target.row.id);
    const [dep] = await t.app.db.select().from(deployments).where(eq(deployments.id, deploymentId));
    expect(dep?.userId).toBe(target.row.id);
    expect(dep?.coOwners).toEqual([other.row.id]);
    const deps = (await call(target.token, 'GET', '/deployments')).json() as { id: string }[];
    expect(deps.map((d) => d.id)).toContain(deploymentId);

    const row = await migrationRow(origin.row.id);
    expect(row?.status).toBe('migrated');
    expect(row?.result).toEqual(res.json());

    // The origin is disabled: its session ended and it cannot log in.
    expect((await userRow(t.app, origin.row.username)).active).toBe(false);
    expect((await call(origin.token, 'GET', '/user')).statusCode).toBe(401);
    expect((await loginRequest(t.app, origin.row.username)).statusCode).toBe(403);
    // Nothing is imported any more.
    expectCode(await migrate(target.token), 428, 'invalid_token');
  });

  it('deletes the origin when asked and nothing refers to it any more, or leaves it alone', async () => {
    await setMigration({ action_after_migrate: 'delete' });
    try {
      const origin = await account('user');
      const target = await account('user');
      await addDesktop(t.app, origin.row, 'desk');
      expect((await importCode(target.token, await codeOf(origin))).statusCode).toBe(200);
      expect((await migrate(target.token)).statusCode).toBe(200);
      expect(await t.app.users.byId(origin.row.id)).toBeUndefined();

      // Something left behind (a deployment desktop): disabled instead of deleted.
      const keeper = await account('user');
      const owner = await account('advanced');
      await addDesktop(t.app, keeper.row, 'desk');
      await addDesktop(t.app, keeper.row, 'class desk', {
        tag: await addDeployment(owner.row, 'c'),
      });
      const target2 = await account('user');
      expect((await importCode(target2.token, await codeOf(keeper))).statusCode).toBe(200);
      expect((await migrate(target2.token)).statusCode).toBe(200);
      expect((await t.app.users.byId(keeper.row.id))?.active).toBe(false);
    } finally {
      await setMigration({});
    }

    await setMigration({ action_after_migrate: 'none' });
    try {
      const origin = await account('user');
      const target = await account('user');
      await addDesktop(t.app, origin.row, 'desk');
      expect((await importCode(target.token, await codeOf(origin))).statusCode).toBe(200);
      expect((await migrate(target.token)).statusCode).toBe(200);
      expect((await t.app.users.byId(origin.row.id))?.active).toBe(true);
      expect((await call(origin.token, 'GET', '/user/desktops')).json()).toEqual([]);
    } finally {
      await setMigration({});
    }
  });
});

describe('migrate twice at once', () => {
  it('moves the items once: the other request is refused', async () => {
    const origin = await account('user');
    const target = await account('user');
    await addDesktop(t.app, origin.row, 'one');
    await addDesktop(t.app, origin.row, 'two');
    expect((await importCode(target.token, await codeOf(origin))).statusCode).toBe(200);
    const answers = await Promise.all([migrate(target.token), migrate(target.token)]);
    const ok = answers.filter((r) => r.statusCode === 200);
    expect(ok).toHaveLength(1);
    expect((ok[0]?.json() as { migrated_desktops: number }).migrated_desktops).toBe(2);
    const refused = answers.find((r) => r.statusCode !== 200);
    expect([409, 428]).toContain(refused?.statusCode);
    // The other request is refused for what it found: the migration running, the code used up, or
    // (when the first one moved everything between its checks) nothing left to move.
    expect(['migration_in_progress', 'invalid_token', 'no_items_to_migrate']).toContain(
      (refused?.json() as { description_code: string }).description_code,
    );
    const names = ((await call(target.token, 'GET', '/user/desktops')).json() as Desktop[])
      .map((d) => d.name)
      .sort();
    expect(names).toEqual(['one', 'two']);
  });
});

describe('export and import switches', () => {
  it('answers the settings for the form and local providers and 404 for others', async () => {
    const { token } = await account('user');
    const enabled = (direction: string, provider: string) =>
      call(token, 'GET', `/authentication/${direction}/${provider}`);
    expect((await enabled('export', 'form')).json()).toEqual({ enabled: true });
    expect((await enabled('import', 'local')).json()).toEqual({ enabled: true });
    await setMigration({ export: false });
    try {
      expect((await enabled('export', 'form')).json()).toEqual({ enabled: false });
      expect((await enabled('import', 'form')).json()).toEqual({ enabled: true });
    } finally {
      await setMigration({});
    }
    expectCode(await enabled('export', 'saml'), 404, 'not_found');
  });
});

describe('msg', () => {
  it("reaches every socket of the user and nobody else's", async () => {
    const a = await account('user');
    const b = await account('user');
    const [a1, a2, b1] = await Promise.all([
      socketOf(a.token),
      socketOf(a.token),
      socketOf(b.token),
    ]);
    const got: string[] = [];
    b1.on('msg', () => got.push('b'));
    const received = Promise.all(
      [a1, a2].map((s) => new Promise<Message>((r) => s.once('msg', r))),
    );
    const message: Message = {
      type: 'warning',
      msg_code: 'desktop-time-limit',
      params: { name: 'Work', time_remaining: 5 },
    };
    sendMessage(t.app, a.row.id, message);
    expect(await received).toEqual([message, message]);
    // A later message to b arrives alone: the earlier one was never delivered to it.
    const toB = new Promise<Message>((r) => b1.once('msg', r));
    sendMessage(t.app, b.row.id, { type: 'info', msg_code: 'hello' });
    expect(await toB).toEqual({ type: 'info', msg_code: 'hello' });
    expect(got).toEqual(['b']);
  });
});
