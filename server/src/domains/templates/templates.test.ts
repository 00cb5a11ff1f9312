/**
 * Templates on real disk images (qemu-img) and a real PostgreSQL: made from a stopped desktop into
 * a standalone image while the request has long answered, shared through the allowed lists, used
 * by the users it is shared with (a desktop from it boots under QEMU) and by nobody else,
 * duplicated, disabled, shown with its derivatives, deleted to the recycle bin and back, deleted
 * for good, converted into a desktop, and settled after a server restart in the middle of a copy.
 * Every refusal also proves that nothing changed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { operations } from '../../../../src/generated/api.ts';
import { RecycleBinDetail } from '../../../../src/generated/validators.js';
import { buildApp } from '../../app.ts';
import { desktops, templates, users, type UserRow } from '../../platform/db/schema.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import {
  addCategory,
  addDesktop,
  addGroup,
  addMedia,
  addTemplate,
  addUser,
  desktopRows,
  loginTo,
  userRow,
} from '../../../test/support/fixtures.ts';
import { until } from '../../../test/support/wait.ts';

const DEMO_TEMPLATE_ID = 'demo-template';

let t: TestApp;
const tokens: Record<string, string> = {};
const rows: Record<string, UserRow> = {};
/** Every event the server published, in order. */
const published: ResourceEvent[] = [];

const api = (
  who: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
) =>
  injectWithToken(t.app, tokens[who] ?? '', {
    method,
    url: `/api/v3${url}`,
    ...(payload ? { payload } : {}),
  });

const templateRow = (id: string) => t.app.templates.get(id);
const desktopState = async (id: string) => (await t.app.desktops.byId(id))?.state;
const templateRows = async () =>
  (
    await t.app.database.query<{ row: unknown }>(
      'SELECT to_jsonb(x) AS row FROM templates x ORDER BY id',
    )
  ).map((r) => JSON.stringify(r.row));
const binRows = async () =>
  (
    await t.app.database.query<{ row: unknown }>(
      'SELECT to_jsonb(x) AS row FROM recycle_bin x ORDER BY id',
    )
  ).map((r) => JSON.stringify(r.row));
/** Templates, desktops and recycle bin, as they are. */
const everything = async () => [
  ...(await templateRows()),
  ...(await desktopRows(t.app, 'true')),
  ...(await binRows()),
];

const qemuImgInfo = (path: string): Record<string, unknown> =>
  JSON.parse(
    execFileSync('qemu-img', ['info', '--output=json', '-U', path], { encoding: 'utf8' }),
  ) as Record<string, unknown>;

/** The refusal has our error body, the status and the code, and nothing changed anywhere. */
const expectRefused = async (
  send: () => Promise<LightMyRequestResponse>,
  status: number,
  code: string,
) => {
  const before = await everything();
  const res = await send();
  expect(res.statusCode, res.body).toBe(status);
  expectErrorShape(res.json(), res.json<{ error: string }>().error);
  expect(res.json<{ description_code: string }>().description_code).toBe(code);
  expect(await everything()).toEqual(before);
  return res;
};

/** A stopped desktop of `who` from the demo template, with its disk (made through the API). */
const newDesktop = async (who: string, name: string, templateId = DEMO_TEMPLATE_ID) => {
  const res = await api(who, 'POST', '/persistent_desktop', {
    template_id: templateId,
    name,
    hardware: { memory: 0.5, vcpus: 1 },
  });
  expect(res.statusCode, res.body).toBe(200);
  const { id } = res.json<{ id: string }>();
  await until(
    () => desktopState(id),
    (s) => s === 'stopped',
  );
  return id;
};

/** A template of `who` made from a desktop through the API, once its disk is ready. */
const newTemplate = async (who: string, desktopId: string, name: string, extra: object = {}) => {
  const res = await api(who, 'POST', '/template', { desktop_id: desktopId, name, ...extra });
  expect(res.statusCode, res.body).toBe(200);
  const { id } = res.json<{ id: string }>();
  await until(
    async () => (await templateRow(id))?.status,
    (s) => s === 'ready',
  );
  await until(
    () => desktopState(desktopId),
    (s) => s === 'stopped',
  );
  return id;
};

/** A desktop row of `owner` with a real overlay disk on the demo template (no API, no VM). */
const desktopWithDisk = async (owner: UserRow, name: string) => {
  const demo = await templateRow(DEMO_TEMPLATE_ID);
  const path = join(t.config.dataDir, 'disks', `fixture-${name.replace(/\W/g, '-')}.qcow2`);
  await t.app.hypervisor.prepareDisk({ path, backingFile: demo?.diskPath ?? '' });
  return addDesktop(t.app, owner, name, { diskPath: path, templateId: DEMO_TEMPLATE_ID });
};

const share = (who: string, id: string, allowed: object) =>
  api(who, 'POST', '/admin/allowed/update/domains', { id, allowed });

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase(), { prepareImages: true });
  // the seeded desktops get their disks (demo images are made at ready time)
  await t.app.engine.reconcile();
  t.app.events.subscribe((event) => published.push(event));
  await addCategory(t.app, 'other');
  await addGroup(t.app, 'other-users', 'other');
  for (const [username, role, categoryId, groupId] of [
    ['advanced2', 'advanced', 'default', 'default-advanced'],
    ['user2', 'user', 'default', 'default-users'],
    ['outsider', 'user', 'other', 'other-users'],
  ] as const)
    await addUser(t.app, { username, role, categoryId, groupId });
  for (const name of ['admin', 'manager', 'advanced', 'user', 'advanced2', 'user2']) {
    tokens[name] = await login(t.app, name);
    rows[name] = await userRow(t.app, name);
  }
  tokens.outsider = await loginTo(t.app, 'outsider', 'other');
  rows.outsider = await userRow(t.app, 'outsider', 'other');
});

afterAll(async () => {
  for (const vm of await t.app.hypervisor.list())
    await t.app.hypervisor.stop(vm.id).catch(() => undefined);
  await t.close();
  killTracked();
});

describe('role gate', () => {
  it('refuses every templates call to role user with 403 and to nobody with 401, except the usable list', async () => {
    const ops = Object.values(operations).filter(
      (op) => op.resource === 'templates' && op.key !== 'templates.allowed',
    );
    expect(ops.length).toBe(8);
    for (const op of ops) {
      const url = `/api/v3${op.path.replace(/\{(\w+)\}/g, (_, p: string) => (p === 'kind' ? 'all' : DEMO_TEMPLATE_ID))}`;
      const payload = op.body === 'json' ? { id: DEMO_TEMPLATE_ID, name: 'Role gate' } : undefined;
      const asUser = await injectWithToken(t.app, tokens.user ?? '', {
        method: op.method,
        url,
        ...(payload ? { payload } : {}),
      });
      expect(asUser.statusCode, `${op.key} as user: ${asUser.body}`).toBe(403);
      const anonymous = await t.app.inject({ method: op.method, url });
      expect(anonymous.statusCode, op.key).toBe(401);
    }
    const usable = await api('user', 'GET', '/user/templates/allowed/all');
    expect(usable.statusCode).toBe(200);
    expect(usable.json<{ id: string }[]>().map((x) => x.id)).toContain(DEMO_TEMPLATE_ID);
  });
});

describe('a template from a desktop, shared and used', () => {
  let desktopId: string;
  let templateId: string;

  it('answers at once, holds the desktop while the disk is copied, then the template is ready on a standalone image and the desktop works on its own disk', async () => {
    desktopId = await newDesktop('advanced', 'Template source');
    const desktopBefore = await t.app.desktops.byId(desktopId);
    const from = published.length;
    const res = await api('advanced', 'POST', '/template', {
      desktop_id: desktopId,
      name: '  Advanced template ',
      description: 'made in a test',
    });
    expect(res.statusCode, res.body).toBe(200);
    templateId = res.json<{ id: string }>().id;
    const ready = await until(
      () => templateRow(templateId),
      (row) => row?.status === 'ready',
    );
    await until(
      () => desktopState(desktopId),
      (s) => s === 'stopped',
    );
    const mine = (name: string, id: string) =>
      published
        .slice(from)
        .filter((e) => e.name === name && (e.payload as { id?: string }).id === id)
        .map((e) => e.payload as Record<string, unknown>);
    // pushed: created while copying, progress, then ready; the desktop held, then given back
    const states = mine('templates.created', templateId).concat(
      mine('templates.updated', templateId),
    );
    expect(states[0]).toMatchObject({
      status: 'creating',
      name: 'Advanced template',
      enabled: false,
    });
    expect(states.at(-1)).toMatchObject({ status: 'ready', progress: null });
    expect(
      states.some((s) => (s.progress as { percentage?: number } | null)?.percentage === 100),
    ).toBe(true);
    const versions = states.map((s) => Number(s.version));
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
    // The desktop's events follow its row's writes: the last may come a moment after the row.
    const desktopStates = await until(
      async () => mine('desktops.updated', desktopId).map((d) => d.state),
      (seen) => seen.includes('stopped'),
    );
    expect(desktopStates).toEqual(expect.arrayContaining(['working', 'stopped']));
    // the template's own image: standalone, under the data directory's templates
    expect(ready?.diskPath).toBe(join(t.config.dataDir, 'templates', `${templateId}.qcow2`));
    const info = qemuImgInfo(ready?.diskPath ?? '');
    expect(info.format).toBe('qcow2');
    expect(info['backing-filename']).toBeUndefined();
    expect(ready?.desktopSize).toBeGreaterThan(0);
    expect(ready).toMatchObject({ userId: rows.advanced?.id, parentId: DEMO_TEMPLATE_ID });
    // the desktop still runs on its own overlay of the demo template
    const desktop = await t.app.desktops.byId(desktopId);
    expect(desktop?.diskPath).toBe(desktopBefore?.diskPath);
    const own = qemuImgInfo(desktop?.diskPath ?? '');
    expect(String(own['backing-filename'])).toContain('demo-template.qcow2');
    expect(desktop).toMatchObject({ state: 'stopped', currentAction: null });
  });

  it('lists the own template for its owner and not for others', async () => {
    const own = await api('advanced', 'GET', '/user/templates');
    expect(own.statusCode).toBe(200);
    const item = own
      .json<{ id: string; editable: boolean; status: string; user_name: string }[]>()
      .find((x) => x.id === templateId);
    expect(item).toMatchObject({ editable: true, status: 'ready', user_name: 'Demo Advanced' });
    const other = await api('advanced2', 'GET', '/user/templates');
    expect(other.json<{ id: string }[]>().map((x) => x.id)).not.toContain(templateId);
    // disabled (the default): nobody gets it as usable, not even its owner
    const usable = await api('advanced', 'GET', '/user/templates/allowed/all');
    expect(usable.json<{ id: string }[]>().map((x) => x.id)).not.toContain(templateId);
  });

  it('is private until shared: user gets 403 template_not_allowed, and nothing is created', async () => {
    const enabled = await api('advanced', 'PUT', '/template/update', {
      id: templateId,
      enabled: true,
    });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect(enabled.json()).toMatchObject({ id: templateId, enabled: true, editable: true });
    await expectRefused(
      () =>
        api('user', 'POST', '/persistent_desktop', { template_id: templateId, name: 'Not mine' }),
      403,
      'template_not_allowed',
    );
    const usable = await api('user', 'GET', '/user/templates/allowed/all');
    expect(usable.json<{ id: string }[]>().map((x) => x.id)).not.toContain(templateId);
  });

  it('shared with user through allowed.update: user makes a desktop from it that boots under QEMU; a third user and another category get 403', async () => {
    const res = await share('advanced', templateId, { users: [rows.user?.id] });
    expect(res.statusCode, res.body).toBe(200);
    const table = await api('advanced', 'POST', '/allowed/table/domains', { id: templateId });
    expect(table.statusCode, table.body).toBe(200);
    expect(table.json()).toEqual({
      roles: false,
      categories: false,
      groups: false,
      users: [
        {
          id: rows.user?.id,
          name: 'Demo User',
          uid: 'user',
          group_name: 'default-users',
          category_name: 'Default',
        },
      ],
    });
    const shared = await api('user', 'GET', '/user/templates/allowed/shared');
    expect(shared.json<{ id: string }[]>().map((x) => x.id)).toContain(templateId);

    const desktop = await newDesktop('user', 'From shared template', templateId);
    const row = await t.app.desktops.byId(desktop);
    expect(qemuImgInfo(row?.diskPath ?? '')['backing-filename']).toBe(
      (await templateRow(templateId))?.diskPath,
    );
    const start = await api('user', 'GET', `/desktop/start/${desktop}`);
    expect(start.statusCode, start.body).toBe(200);
    const started = await until(
      () => t.app.desktops.byId(desktop),
      (d) => d?.state === 'started' || d?.state === 'failed',
    );
    expect(started?.state, started?.detail ?? '').toBe('started');
    const pid = started?.runtime.pid;
    if (pid) trackPid(pid);
    expect(await t.app.hypervisor.status(desktop)).toBe('running');
    expect(t.app.hypervisor.get(desktop)?.vncPort).toBeGreaterThan(0);
    await t.app.hypervisor.stop(desktop);
    await until(
      () => desktopState(desktop),
      (s) => s === 'stopped',
    );

    for (const who of ['user2', 'outsider'])
      await expectRefused(
        () =>
          api(who, 'POST', '/persistent_desktop', { template_id: templateId, name: `By ${who}` }),
        403,
        'template_not_allowed',
      );
  });

  it('shares with everyone of its category with a ticked, empty list, and never beyond it', async () => {
    expect((await share('advanced', templateId, { users: [] })).statusCode).toBe(200);
    await newDesktop('user2', 'Everyone of the category', templateId);
    await expectRefused(
      () =>
        api('outsider', 'POST', '/persistent_desktop', {
          template_id: templateId,
          name: 'Outside',
        }),
      403,
      'template_not_allowed',
    );
    // back to the user only
    expect((await share('advanced', templateId, { users: [rows.user?.id] })).statusCode).toBe(200);
  });

  it('refuses sharing changes by anybody who does not manage the item (403, nothing applied) and bad ids in the lists', async () => {
    for (const who of ['advanced2', 'user', 'outsider']) {
      await expectRefused(
        () => share(who, templateId, { users: [rows[who]?.id] }),
        403,
        'forbidden',
      );
      await expectRefused(
        () => api(who, 'POST', '/allowed/table/domains', { id: templateId }),
        403,
        'forbidden',
      );
    }
    // an admin's template is not a manager's to share
    await expectRefused(() => share('manager', DEMO_TEMPLATE_ID, { groups: [] }), 403, 'forbidden');
    // ids in the body: unknown, out of the caller's category, another table than the path
    await expectRefused(
      () => share('advanced', templateId, { users: ['no-such-user'] }),
      404,
      'not_found',
    );
    await expectRefused(
      () => share('advanced', templateId, { users: [rows.user?.id, rows.outsider?.id] }),
      403,
      'allowed_out_of_scope',
    );
    await expectRefused(
      () => share('advanced', templateId, { groups: ['default-users', 'other-users'] }),
      403,
      'allowed_out_of_scope',
    );
    await expectRefused(
      () =>
        api('advanced', 'POST', '/admin/allowed/update/domains', {
          id: templateId,
          table: 'media',
          allowed: { users: [] },
        }),
      400,
      'bad_request',
    );
    await expectRefused(
      () => share('advanced', 'no-such-template', { users: [] }),
      404,
      'not_found',
    );
    await expectRefused(
      () =>
        api('advanced', 'POST', '/admin/allowed/update/deployments', {
          id: templateId,
          allowed: {},
        }),
      404,
      'not_found',
    );
    // an admin may share with anybody
    const admin = await share('admin', templateId, { users: [rows.user?.id, rows.outsider?.id] });
    expect(admin.statusCode, admin.body).toBe(200);
    expect((await templateRow(templateId))?.allowed).toEqual({
      roles: false,
      categories: false,
      groups: false,
      users: [rows.user?.id, rows.outsider?.id],
    });
    expect((await share('advanced', templateId, { users: [rows.user?.id] })).statusCode).toBe(200);
  });

  it('shares media the same way: its owner may, another user may not', async () => {
    await addMedia(t.app, rows.advanced as UserRow, { id: 'advanced-iso', kind: 'iso' });
    const mediaShare = (who: string, allowed: object) =>
      api(who, 'POST', '/admin/allowed/update/media', { id: 'advanced-iso', allowed });
    await expectRefused(() => mediaShare('advanced2', { groups: [] }), 403, 'forbidden');
    await expectRefused(
      () => api('advanced2', 'POST', '/allowed/table/media', { id: 'advanced-iso' }),
      403,
      'forbidden',
    );
    expect((await mediaShare('advanced', { groups: ['default-users'] })).statusCode).toBe(200);
    const table = await api('advanced', 'POST', '/allowed/table/media', {
      id: 'advanced-iso',
      table: 'media',
    });
    expect(table.json()).toMatchObject({
      users: false,
      groups: [{ id: 'default-users', name: 'default-users', category_name: 'Default' }],
    });
    // now user (of that group) may attach it to a desktop, user of another group may not
    const mine = await desktopWithDisk(rows.user as UserRow, 'Media user desktop');
    const attach = await api('user', 'PUT', `/domain/${mine}`, {
      hardware: { isos: [{ id: 'advanced-iso' }] },
    });
    expect(attach.statusCode, attach.body).toBe(200);
  });

  it('searches who to share with inside the caller scope, with allow-listed fields only', async () => {
    const term = (who: string, table: string, body: object) =>
      api(who, 'POST', `/admin/allowed/term/${table}`, body);
    const short = await term('advanced', 'users', { term: 'u' });
    expect(short.statusCode).toBe(400);
    const advancedUsers = await term('advanced', 'users', { term: 'USER' });
    expect(advancedUsers.statusCode, advancedUsers.body).toBe(200);
    const found = advancedUsers.json<Record<string, unknown>[]>();
    expect(found.map((u) => u.uid).sort()).toEqual(['user', 'user2']);
    for (const u of found) expect(Object.keys(u).sort()).toEqual(['category', 'id', 'name', 'uid']);
    const adminUsers = await term('admin', 'users', { term: 'user' });
    expect(
      adminUsers
        .json<{ uid: string }[]>()
        .map((u) => u.uid)
        .sort(),
    ).toEqual(['user', 'user2']);
    expect(
      (await term('admin', 'users', { term: 'outs' })).json<{ category_name: string }[]>(),
    ).toMatchObject([{ category_name: 'other', role: 'user' }]);
    expect(await term('advanced', 'users', { term: 'outs' }).then((r) => r.json())).toEqual([]);
    expect(JSON.stringify(adminUsers.json())).not.toMatch(/password|email|argon/i);
    const groups = await term('advanced', 'groups', { term: 'users' });
    expect(groups.json<{ id: string }[]>().map((g) => g.id)).toEqual(['default-users']);
    const allGroups = await term('admin', 'groups', { term: 'users' });
    expect(
      allGroups
        .json<{ id: string }[]>()
        .map((g) => g.id)
        .sort(),
    ).toEqual(['default-users', 'other-users']);
    expect((await term('advanced', 'categories', { term: 'ot' })).json()).toEqual([]);
    expect((await term('admin', 'categories', { term: 'ot' })).json()).toEqual([
      { id: 'other', name: 'other' },
    ]);
    expect((await term('user', 'roles', { term: 'adv' })).json()).toEqual([
      { id: 'advanced', name: 'Advanced' },
    ]);
    expect((await term('user', 'media', { term: 'demo', kind: 'isos' })).json()).toMatchObject([
      { id: 'demo-iso', name: 'Demo ISO' },
    ]);
    expect((await term('user', 'media', { term: 'demo', kind: 'floppies' })).json()).toEqual([]);
    // the templates the caller may use: the shared one for user, not for user2
    expect((await term('user', 'domains', { term: 'advanced t' })).json()).toEqual([
      { id: templateId, name: 'Advanced template' },
    ]);
    expect((await term('user2', 'domains', { term: 'advanced t' })).json()).toEqual([]);
  });

  it('answers 403 or 404 on every template id route to someone who may not manage it, and changes nothing', async () => {
    const calls = (id: string): [string, () => Promise<LightMyRequestResponse>][] => [
      ['update', () => api('advanced2', 'PUT', '/template/update', { id, name: 'Taken over' })],
      ['tree', () => api('advanced2', 'GET', `/template/tree/${id}`)],
      ['delete', () => api('advanced2', 'DELETE', `/template/${id}`)],
      [
        'toDesktop',
        () =>
          api('advanced2', 'POST', '/template/to/desktop', { template_id: id, name: 'Mine now' }),
      ],
      [
        'duplicate',
        () =>
          api('advanced2', 'POST', `/template/duplicate/${id}`, {
            template_id: id,
            name: 'Copy of',
          }),
      ],
    ];
    for (const [name, call] of calls(templateId)) {
      const res = await expectRefused(
        call,
        403,
        name === 'duplicate' ? 'template_not_allowed' : 'forbidden',
      );
      expect(res.statusCode, name).toBe(403);
    }
    for (const [name, call] of calls('no-such-template')) {
      const res = await expectRefused(call, 404, 'not_found');
      expect(res.statusCode, name).toBe(404);
    }
    // a template from somebody else's desktop, or from no desktop
    const foreignDesktop = await desktopWithDisk(rows.advanced as UserRow, 'Not yours');
    await expectRefused(
      () => api('advanced2', 'POST', '/template', { desktop_id: foreignDesktop, name: 'Stolen' }),
      403,
      'forbidden',
    );
    await expectRefused(
      () =>
        api('advanced2', 'POST', '/template', { desktop_id: 'no-such-desktop', name: 'Nothing' }),
      404,
      'not_found',
    );
    // a manager manages the templates of the advanced users of the category, not an admin's
    expect((await api('manager', 'GET', `/template/tree/${templateId}`)).statusCode).toBe(200);
    await expectRefused(
      () => api('manager', 'PUT', '/template/update', { id: DEMO_TEMPLATE_ID, enabled: false }),
      403,
      'forbidden',
    );
  });

  it('refuses bad input with the spec codes, never a server error', async () => {
    const source = await desktopWithDisk(rows.advanced as UserRow, 'Bad input source');
    await expectRefused(
      () => api('advanced', 'POST', '/template', { desktop_id: source, name: 'Advanced template' }),
      409,
      'new_template_name_exists',
    );
    const short = await expectRefused(
      () => api('advanced', 'POST', '/template', { desktop_id: source, name: 'ab' }),
      400,
      'bad_request',
    );
    expect(short.json().errors).toEqual({ '/name': 'minLength' });
    const extra = await expectRefused(
      () => api('advanced', 'POST', '/template', { desktop_id: source, name: 'Extra', owner: 'x' }),
      400,
      'bad_request',
    );
    expect(extra.json().errors).toEqual({ '/owner': 'additionalProperties' });
    // failed, not a running state: the engine's reconciler leaves it alone meanwhile
    await t.app.db.update(desktops).set({ state: 'failed' }).where(eq(desktops.id, source));
    await expectRefused(
      () => api('advanced', 'POST', '/template', { desktop_id: source, name: 'Running' }),
      428,
      'desktop_not_stopped',
    );
    await t.app.db
      .update(desktops)
      .set({ state: 'stopped', server: true })
      .where(eq(desktops.id, source));
    await expectRefused(
      () => api('advanced', 'POST', '/template', { desktop_id: source, name: 'Server' }),
      428,
      'template_from_server',
    );
    const diskless = await addDesktop(t.app, rows.advanced as UserRow, 'No disk desktop');
    await expectRefused(
      () => api('advanced', 'POST', '/template', { desktop_id: diskless, name: 'No disk' }),
      428,
      'desktop_storage_not_ready',
    );
    // a template whose disk is still being made, or failed, makes no desktops
    await addTemplate(t.app, rows.advanced as UserRow, {
      id: 'still-creating',
      status: 'creating',
      allowed: { roles: [], categories: false, groups: false, users: false },
    });
    await addTemplate(t.app, rows.advanced as UserRow, {
      id: 'has-failed',
      status: 'failed',
      allowed: { roles: [], categories: false, groups: false, users: false },
    });
    await expectRefused(
      () =>
        api('user', 'POST', '/persistent_desktop', {
          template_id: 'still-creating',
          name: 'Too soon',
        }),
      428,
      'template_not_ready',
    );
    await expectRefused(
      () =>
        api('user', 'POST', '/persistent_desktop', { template_id: 'has-failed', name: 'Too late' }),
      428,
      'template_failed',
    );
    await expectRefused(
      () => api('advanced', 'DELETE', '/template/still-creating'),
      428,
      'template_derivatives_busy',
    );
    await expectRefused(
      () =>
        api('advanced', 'POST', `/template/duplicate/${DEMO_TEMPLATE_ID}`, {
          template_id: 'still-creating',
          name: 'Mismatch',
        }),
      400,
      'bad_request',
    );
    await expectRefused(
      () =>
        api('advanced', 'POST', `/template/duplicate/${DEMO_TEMPLATE_ID}`, {
          template_id: DEMO_TEMPLATE_ID,
          name: 'For someone else',
          user_id: rows.user?.id,
        }),
      403,
      'forbidden',
    );
    await expectRefused(
      () =>
        api('advanced', 'PUT', '/template/update', {
          id: templateId,
          image: { type: 'stock', id: '../x' },
        }),
      404,
      'not_found',
    );
    // an update naming a user out of reach applies nothing, not even the rename
    await expectRefused(
      () =>
        api('advanced', 'PUT', '/template/update', {
          id: templateId,
          name: 'Renamed while refused',
          allowed: { users: [rows.outsider?.id] },
        }),
      403,
      'allowed_out_of_scope',
    );
    // converting: a template with derivatives (this one has desktops)
    await expectRefused(
      () =>
        api('advanced', 'POST', '/template/to/desktop', { template_id: templateId, name: 'Back' }),
      428,
      'template_has_derivatives',
    );
  });

  it('duplicates a usable template sharing its disk, for the caller or (by a manager) for a user of the category', async () => {
    const own = await api('advanced', 'POST', `/template/duplicate/${templateId}`, {
      template_id: templateId,
      name: 'Advanced duplicate',
      enabled: true,
    });
    expect(own.statusCode, own.body).toBe(200);
    const copy = await templateRow(own.json<{ id: string }>().id);
    const original = await templateRow(templateId);
    expect(copy).toMatchObject({
      userId: rows.advanced?.id,
      status: 'ready',
      enabled: true,
      duplicateOf: templateId,
      diskPath: original?.diskPath,
      allowed: { roles: false, categories: false, groups: false, users: false },
    });
    // user is allowed to use it, and gets it as a manager's gift
    const gift = await api('manager', 'POST', `/template/duplicate/${templateId}`, {
      template_id: templateId,
      name: 'For the user',
      user_id: rows.user?.id,
    });
    expect(gift.statusCode, gift.body).toBe(200);
    expect(await templateRow(gift.json<{ id: string }>().id)).toMatchObject({
      userId: rows.user?.id,
      groupId: 'default-users',
    });
    await expectRefused(
      () =>
        api('manager', 'POST', `/template/duplicate/${templateId}`, {
          template_id: templateId,
          name: 'For the admin',
          user_id: rows.admin?.id,
        }),
      403,
      'forbidden',
    );
    // a duplicate can not become a desktop
    await expectRefused(
      () =>
        api('advanced', 'POST', '/template/to/desktop', {
          template_id: copy?.id,
          name: 'Dup desktop',
        }),
      428,
      'template_is_duplicate',
    );
  });

  it('shows the derivatives tree, masking what the caller can not manage, and refuses then to delete', async () => {
    const tree = await api('advanced', 'GET', `/template/tree/${templateId}`);
    expect(tree.statusCode, tree.body).toBe(200);
    const body = tree.json<{
      domains: { id?: string; kind?: string; user?: string }[];
      pending: boolean;
      is_duplicated: boolean;
      deployments: unknown[];
    }>();
    expect(body.domains[0]).toMatchObject({ id: templateId, kind: 'template', user: 'advanced' });
    const visible = body.domains.filter((d) => d.id).map((d) => `${d.kind}:${d.user}`);
    // the duplicate is advanced's; the desktops of user and user2 and the user's copy are masked
    expect(visible.sort()).toEqual(['template:advanced', 'template:advanced']);
    expect(body.domains.filter((d) => !d.id)).toHaveLength(3);
    expect(body).toMatchObject({ pending: true, is_duplicated: false, deployments: [] });
    const adminTree = await api('admin', 'GET', `/template/tree/${templateId}`);
    const adminBody = adminTree.json<{ domains: { id?: string }[]; pending: boolean }>();
    expect(adminBody.pending).toBe(false);
    expect(adminBody.domains.every((d) => d.id)).toBe(true);
    expect(adminBody.domains).toHaveLength(5);
    await expectRefused(
      () => api('advanced', 'DELETE', `/template/${templateId}`),
      403,
      'template_derivatives_not_owned',
    );
  });

  it('deletes the temporary desktops made from it when disabled, and only those', async () => {
    const temporary = await addDesktop(t.app, rows.user as UserRow, 'Temporary of shared', {
      type: 'nonpersistent',
      templateId,
    });
    const persistentBefore = await desktopRows(t.app, "template_id = $1 AND type = 'persistent'", [
      templateId,
    ]);
    const res = await api('advanced', 'PUT', '/template/update', {
      id: templateId,
      enabled: false,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ enabled: false });
    expect(await t.app.desktops.byId(temporary)).toBeUndefined();
    expect(
      published.some(
        (e) => e.name === 'desktops.deleted' && (e.payload as { id: string }).id === temporary,
      ),
    ).toBe(true);
    expect(
      await desktopRows(t.app, "template_id = $1 AND type = 'persistent'", [templateId]),
    ).toEqual(persistentBefore);
    // disabled: no new desktops from it, even for whom it is shared with
    await expectRefused(
      () =>
        api('user', 'POST', '/persistent_desktop', {
          template_id: templateId,
          name: 'When disabled',
        }),
      404,
      'not_found',
    );
    const back = await api('advanced', 'PUT', '/template/update', {
      id: templateId,
      enabled: true,
      name: 'Advanced template renamed',
      description: 'new description',
      image: { type: 'stock', id: '7' },
    });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({
      enabled: true,
      name: 'Advanced template renamed',
      description: 'new description',
      image: { type: 'stock', id: '7' },
    });
  });
});

describe('a copy that fails', () => {
  it('leaves the template failed with a reason that names no server path, and gives the desktop back', async () => {
    const broken = join(t.config.dataDir, 'disks', 'broken.qcow2');
    writeFileSync(broken, 'this is not a disk image');
    const source = await addDesktop(t.app, rows.advanced as UserRow, 'Broken disk desktop', {
      diskPath: broken,
    });
    const res = await api('advanced', 'POST', '/template', {
      desktop_id: source,
      name: 'Never ready',
    });
    expect(res.statusCode, res.body).toBe(200);
    const { id } = res.json<{ id: string }>();
    const failed = await until(
      () => templateRow(id),
      (row) => row?.status === 'failed',
    );
    expect(failed).toMatchObject({
      detail: 'The disk of the desktop could not be copied',
      progress: null,
    });
    expect(existsSync(failed?.diskPath ?? '')).toBe(false);
    expect(existsSync(`${failed?.diskPath ?? ''}.part`)).toBe(false);
    expect(
      await until(
        () => desktopState(source),
        (s) => s === 'stopped',
      ),
    ).toBe('stopped');
    const listed = await api('advanced', 'GET', '/user/templates');
    const item = listed.json<{ id: string; detail: string }[]>().find((x) => x.id === id);
    expect(item).toMatchObject({ status: 'failed' });
    expect(listed.body).not.toContain(t.config.dataDir);
    // a failed template can be deleted; it holds no disk, so its entry lists none
    const del = await api('advanced', 'DELETE', `/template/${id}`);
    expect(del.statusCode, del.body).toBe(200);
    expect(await templateRow(id)).toBeUndefined();
    const [entry] = await t.app.database.query<{ data: { storages: unknown[] } }>(
      "SELECT data FROM recycle_bin WHERE data->'templates'->0->>'id' = $1",
      [id],
    );
    expect(entry?.data.storages).toEqual([]);
  });
});

describe('quota', () => {
  it('admits exactly one of 20 parallel creates on the last unit of the quota', async () => {
    const racer = await addUser(t.app, {
      username: 'racer',
      role: 'advanced',
      categoryId: 'default',
      groupId: 'default-advanced',
    });
    tokens.racer = await login(t.app, 'racer');
    await addTemplate(t.app, racer, { id: 'racer-existing' });
    await t.app.db
      .update(users)
      .set({ quota: { templates: 2 } })
      .where(eq(users.id, racer.id));
    const sources = await Promise.all(
      Array.from({ length: 20 }, (_, i) => desktopWithDisk(racer, `Race source ${i}`)),
    );
    expect((await api('racer', 'GET', '/templates/new/check_quota')).json()).toEqual({});
    const answers = await Promise.all(
      sources.map((desktop_id, i) =>
        api('racer', 'POST', '/template', { desktop_id, name: `Race template ${i}` }),
      ),
    );
    const admitted = answers.filter((a) => a.statusCode === 200);
    expect(admitted).toHaveLength(1);
    const refused = answers.filter((a) => a.statusCode !== 200);
    expect(refused).toHaveLength(19);
    for (const a of refused)
      expect({
        status: a.statusCode,
        code: a.json<{ description_code: string }>().description_code,
      }).toEqual({
        status: 428,
        code: 'template_new_user_quota_exceeded',
      });
    const id = admitted[0]?.json<{ id: string }>().id ?? '';
    await until(
      async () => (await templateRow(id))?.status,
      (s) => s === 'ready',
    );
    const owned = await t.app.templates.list({ where: eq(templates.userId, racer.id) });
    expect(owned).toHaveLength(2);
    // every source desktop is stopped again (the admitted one after its copy)
    await until(
      async () => (await Promise.all(sources.map(desktopState))).every((s) => s === 'stopped'),
      (ok) => ok,
    );
    const check = await api('racer', 'GET', '/templates/new/check_quota');
    expect(check.statusCode).toBe(428);
    expect(check.json().description_code).toBe('template_new_user_quota_exceeded');
  });
});

describe('recycle bin', () => {
  it('deletes a template with its desktops to the recycle bin, restores it usable, then deletes it for good with its disks', async () => {
    const source = await newDesktop('advanced', 'Bin source');
    const id = await newTemplate('advanced', source, 'Bin template', { enabled: true });
    const derived = await newDesktop('advanced', 'Bin derived', id);
    // a desktop of it deleted on its own earlier: its entry depends on the template's disk
    const early = await newDesktop('advanced', 'Bin early', id);
    expect((await api('advanced', 'DELETE', `/desktop/${early}`)).statusCode).toBe(200);
    const [earlyEntry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [early],
    );
    const templateDisk = (await templateRow(id))?.diskPath ?? '';
    const derivedDisk = (await t.app.desktops.byId(derived))?.diskPath ?? '';

    const del = await api('advanced', 'DELETE', `/template/${id}`);
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json()).toBe(id);
    expect(await templateRow(id)).toBeUndefined();
    expect(await t.app.desktops.byId(derived)).toBeUndefined();
    expect(existsSync(templateDisk) && existsSync(derivedDisk)).toBe(true);
    expect(
      published.some(
        (e) => e.name === 'templates.deleted' && (e.payload as { id: string }).id === id,
      ),
    ).toBe(true);
    const list = await api('advanced', 'GET', '/recycle_bin/item_count/user');
    const entry = list
      .json<{ id: string; item_type: string; item_name: string }[]>()
      .find((e) => e.item_name === 'Bin template');
    expect(entry).toMatchObject({ item_type: 'template', templates: 1, desktops: 1, storages: 2 });
    const entryId = entry?.id ?? '';
    const detail = await api('advanced', 'GET', `/recycle_bin/${entryId}`);
    expect(detail.statusCode, detail.body).toBe(200);
    expect(RecycleBinDetail(detail.json()), JSON.stringify(RecycleBinDetail.errors)).toBe(true);
    expect(detail.json()).toMatchObject({
      templates: [
        { id, name: 'Bin template', username: 'advanced', category: { name: 'Default' } },
      ],
      desktops: [{ id: derived, name: 'Bin derived' }],
    });
    expect(detail.body).not.toContain(t.config.dataDir);
    // another user can not see, restore or delete it
    await expectRefused(
      () => api('advanced2', 'PUT', `/recycle_bin/restore/${entryId}`),
      403,
      'forbidden',
    );
    await expectRefused(
      () => api('advanced2', 'DELETE', `/recycle_bin/${entryId}`),
      403,
      'forbidden',
    );

    const restore = await api('advanced', 'PUT', `/recycle_bin/restore/${entryId}`);
    expect(restore.statusCode, restore.body).toBe(200);
    expect(await templateRow(id)).toMatchObject({
      status: 'ready',
      enabled: true,
      diskPath: templateDisk,
    });
    expect(await t.app.desktops.byId(derived)).toMatchObject({ state: 'stopped', templateId: id });
    // usable again: a new desktop from it gets its disk
    const again = await newDesktop('advanced', 'After restore', id);
    expect(
      qemuImgInfo((await t.app.desktops.byId(again))?.diskPath ?? '')['backing-filename'],
    ).toBe(templateDisk);

    const second = await api('advanced', 'DELETE', `/template/${id}`);
    expect(second.statusCode, second.body).toBe(200);
    const [secondEntry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE item_type = 'template' AND status = 'recycled' AND data->'templates'->0->>'id' = $1",
      [id],
    );
    const purge = await api('advanced', 'DELETE', `/recycle_bin/${secondEntry?.id ?? ''}`);
    expect(purge.statusCode, purge.body).toBe(200);
    expect(existsSync(templateDisk)).toBe(false);
    expect(existsSync(derivedDisk)).toBe(false);
    expect((await t.app.recycleBin.get(secondEntry?.id ?? ''))?.status).toBe('deleted');
    // the earlier desktop's entry lost its base disk: it went with it
    expect((await t.app.recycleBin.get(earlyEntry?.id ?? ''))?.status).toBe('deleted');
  });

  it('restores a recycled desktop only while the template it was made from exists', async () => {
    const source = await desktopWithDisk(rows.advanced as UserRow, 'Orphan source');
    const id = await newTemplate('advanced', source, 'Orphan template');
    const child = await newDesktop('advanced', 'Orphan child', DEMO_TEMPLATE_ID);
    await t.app.db.update(desktops).set({ templateId: id }).where(eq(desktops.id, child));
    expect((await api('advanced', 'DELETE', `/desktop/${child}`)).statusCode).toBe(200);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [child],
    );
    expect((await api('advanced', 'DELETE', `/template/${id}`)).statusCode).toBe(200);
    await expectRefused(
      () => api('advanced', 'PUT', `/recycle_bin/restore/${entry?.id ?? ''}`),
      428,
      'parent_template_not_found',
    );
  });
});

describe('convert to desktop', () => {
  it('turns a template without derivatives into a stopped desktop with its disk, once recycled items made from it may go', async () => {
    const source = await desktopWithDisk(rows.advanced as UserRow, 'Convert source');
    const id = await newTemplate('advanced', source, 'Convert me', { enabled: true });
    const disk = (await templateRow(id))?.diskPath ?? '';
    const recycled = await newDesktop('advanced', 'Convert recycled', id);
    expect((await api('advanced', 'DELETE', `/desktop/${recycled}`)).statusCode).toBe(200);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [recycled],
    );
    const res = await expectRefused(
      () => api('advanced', 'POST', '/template/to/desktop', { template_id: id, name: 'Converted' }),
      428,
      'template_to_desktop_confirm_required',
    );
    expect(res.json().params).toEqual({ items: 1 });
    const ok = await api('advanced', 'POST', '/template/to/desktop', {
      template_id: id,
      name: 'Converted',
      confirm: true,
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const desktop = ok.json<{ id: string; name: string; state: string }>();
    expect(desktop).toMatchObject({ name: 'Converted', state: 'stopped', type: 'persistent' });
    expect(await templateRow(id)).toBeUndefined();
    const row = await t.app.desktops.byId(desktop.id);
    expect(row?.diskPath).toBe(t.app.engine.diskPath(desktop.id));
    expect(existsSync(disk)).toBe(false);
    expect(qemuImgInfo(row?.diskPath ?? '')['backing-filename']).toBeUndefined();
    expect((await t.app.recycleBin.get(entry?.id ?? ''))?.status).toBe('deleted');
  });
});

describe('server restart in the middle of a copy', () => {
  it('takes an interrupted copy up again at start, and fails a template whose desktop is gone, never leaving anything transitional', async () => {
    const advanced = rows.advanced as UserRow;
    const source = await desktopWithDisk(advanced, 'Restart source');
    const orphanDesktop = await desktopWithDisk(advanced, 'Held for nothing');
    const sourceDisk = (await t.app.desktops.byId(source))?.diskPath ?? null;
    // what a server stopped mid-copy leaves: the template creating, its desktop held, a partial file
    await t.app.db
      .update(desktops)
      .set({ state: 'working', currentAction: 'template' })
      .where(eq(desktops.id, source));
    await t.app.db
      .update(desktops)
      .set({ state: 'working', currentAction: 'template' })
      .where(eq(desktops.id, orphanDesktop));
    const interrupted = join(t.config.dataDir, 'templates', 'interrupted.qcow2');
    writeFileSync(`${interrupted}.part`, 'half a copy');
    await addTemplate(t.app, advanced, {
      id: 'interrupted',
      status: 'creating',
      progress: { percentage: 40 },
      diskPath: interrupted,
      sourceDesktopId: source,
    });
    await addTemplate(t.app, advanced, {
      id: 'source-gone',
      status: 'creating',
      diskPath: join(t.config.dataDir, 'templates', 'source-gone.qcow2'),
      sourceDesktopId: 'no-such-desktop',
    });
    const config = t.config;
    await t.app.close();
    t.app = await buildApp({ ...config });
    t.app.events.subscribe((event) => published.push(event));
    const done = await until(
      () => templateRow('interrupted'),
      (row) => row?.status === 'ready',
    );
    expect(done).toMatchObject({ progress: null, detail: null });
    expect(qemuImgInfo(interrupted)['backing-filename']).toBeUndefined();
    expect(existsSync(`${interrupted}.part`)).toBe(false);
    expect(sourceDisk).not.toBeNull();
    expect(
      await until(
        () => templateRow('source-gone'),
        (row) => row?.status === 'failed',
      ),
    ).toMatchObject({ detail: expect.stringMatching(/no longer there/) });
    for (const id of [source, orphanDesktop])
      expect(
        await until(
          () => t.app.desktops.byId(id),
          (d) => d?.state === 'stopped',
        ),
      ).toMatchObject({ currentAction: null });
  });
});
