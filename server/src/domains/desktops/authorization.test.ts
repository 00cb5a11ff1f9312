/**
 * Authorisation of desktop calls: every id inside a create or update body (template, ISOs,
 * floppies, network interfaces, GPU profiles, stock card) is checked against what the caller may
 * use, all or nothing; and a manager acts on desktops of their own category only, never on an
 * admin's. Every refusal also proves that the database did not change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../platform/db/schema.ts';
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
  allDesktops,
  desktopRows,
  loginTo,
  userRow,
} from '../../../test/support/fixtures.ts';
import { until } from '../../../test/support/wait.ts';

const DEMO_TEMPLATE_ID = 'demo-template';

let t: TestApp;
let userToken: string;
let managerToken: string;
let user: UserRow;
let advanced: UserRow;
let admin: UserRow;

const put = (id: string, payload: Record<string, unknown>, token = userToken) =>
  injectWithToken(t.app, token, { method: 'PUT', url: `/api/v3/domain/${id}`, payload });
const createPersistent = (payload: Record<string, unknown>, token = userToken) =>
  injectWithToken(t.app, token, { method: 'POST', url: '/api/v3/persistent_desktop', payload });
const snapshot = (id: string) => desktopRows(t.app, 'id = $1', [id]);

/** The refusal carries the error body, the status and the code, and the rows did not change. */
const expectRefused = async (
  send: () => Promise<LightMyRequestResponse>,
  status: number,
  kind: string,
  code: string,
) => {
  const before = await allDesktops(t.app);
  const res = await send();
  expect(res.statusCode, res.body).toBe(status);
  expectErrorShape(res.json(), kind);
  expect(res.json().description_code).toBe(code);
  expect(await allDesktops(t.app)).toEqual(before);
  return res;
};

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  userToken = await login(t.app, 'user');
  managerToken = await login(t.app, 'manager');
  user = await userRow(t.app, 'user');
  advanced = await userRow(t.app, 'advanced');
  admin = await userRow(t.app, 'admin');
  // advanced's media and template, shared with nobody
  await addMedia(t.app, advanced, { id: 'foreign-iso', kind: 'iso' });
  await addMedia(t.app, advanced, { id: 'foreign-floppy', kind: 'floppy' });
  await addTemplate(t.app, advanced, { id: 'foreign-template' });
  // advanced's media shared with `user` by id
  await addMedia(t.app, advanced, {
    id: 'shared-iso',
    kind: 'iso',
    allowed: { roles: false, categories: false, groups: false, users: [user.id] },
  });
  await addMedia(t.app, user, { id: 'own-floppy', kind: 'floppy' });
  // The demo's desktops are seeded `creating` and their disks made in the background: they settle
  // first, so a refusal's "nothing changed" compares the database with itself, not with a disk
  // creation that ended meanwhile.
  await until(
    () =>
      t.app.database.query<{ n: string }>(
        "SELECT count(*) AS n FROM desktops WHERE state = 'creating'",
      ),
    (rows) => Number(rows[0]?.n) === 0,
  );
});
afterAll(async () => t.close());

describe('ids inside desktop bodies', () => {
  it("refuses PUT /domain/{own} naming another user's unshared ISO with 403, and applies nothing", async () => {
    const id = await addDesktop(t.app, user, 'Own desktop');
    const before = await snapshot(id);
    await expectRefused(
      () =>
        put(id, {
          name: 'Renamed while refused',
          description: 'changed',
          hardware: { memory: 2, isos: [{ id: 'foreign-iso' }] },
        }),
      403,
      'forbidden',
      'media_not_allowed',
    );
    expect(await snapshot(id)).toEqual(before);
  });

  it("refuses another user's floppy, a floppy in the ISO list and unknown media", async () => {
    const id = await addDesktop(t.app, user, 'Media desktop');
    const before = await snapshot(id);
    await expectRefused(
      () => put(id, { hardware: { floppies: [{ id: 'foreign-floppy' }] } }),
      403,
      'forbidden',
      'media_not_allowed',
    );
    await expectRefused(
      () => put(id, { hardware: { isos: [{ id: 'own-floppy' }] } }),
      400,
      'bad_request',
      'media_invalid',
    );
    const unknown = await expectRefused(
      () => put(id, { hardware: { isos: [{ id: 'demo-iso' }, { id: 'no-such-iso' }] } }),
      404,
      'not_found',
      'not_found',
    );
    expect(unknown.json().params).toMatchObject({ id: 'no-such-iso' });
    expect(await snapshot(id)).toEqual(before);
  });

  it("refuses hardware values the caller's hardware catalog does not offer (videos, graphics, boot order, disk bus) on desktop create and update and deployment create", async () => {
    const id = await addDesktop(t.app, user, 'Catalog desktop');
    const before = await snapshot(id);
    const offered = await injectWithToken(t.app, userToken, {
      method: 'GET',
      url: '/api/v3/user/hardware/allowed',
    });
    expect(offered.statusCode, offered.body).toBe(200);
    const catalog = offered.json<Record<string, { id: string }[]>>();
    const refused: [string, Record<string, unknown>][] = [
      ['/hardware/videos/0', { videos: ['qxl'] }],
      ['/hardware/graphics/0', { graphics: ['spice-gl'] }],
      ['/hardware/boot_order/1', { boot_order: ['disk', 'pxe'] }],
    ];
    for (const [path, hardware] of refused) {
      const [list] = Object.keys(hardware);
      const values = (hardware[list ?? ''] as string[]).slice(-1);
      expect(catalog[list ?? '']?.map((c) => c.id)).not.toContain(values[0]);
      const res = await expectRefused(
        () => put(id, { hardware }),
        400,
        'bad_request',
        'bad_request',
      );
      expect(res.json().errors).toEqual({ [path]: 'bad_request' });
      await expectRefused(
        () => createPersistent({ template_id: DEMO_TEMPLATE_ID, name: `With ${path}`, hardware }),
        400,
        'bad_request',
        'bad_request',
      );
      const deployment = await injectWithToken(t.app, await login(t.app, 'advanced'), {
        method: 'POST',
        url: '/api/v3/deployments',
        payload: {
          name: `Deployment with ${path}`,
          desktop_name: 'Class desktop',
          template_id: DEMO_TEMPLATE_ID,
          allowed: { groups: [user.groupId] },
          hardware,
        },
      });
      expect(deployment.statusCode, deployment.body).toBe(400);
      expect(deployment.json().description_code).toBe('bad_request');
    }
    // what the catalog offers passes
    const fine = await put(id, {
      hardware: { videos: ['virtio'], boot_order: ['iso', 'disk'], disk_bus: 'sata' },
    });
    expect(fine.statusCode, fine.body).toBe(200);
    expect(await snapshot(id)).not.toEqual(before);
  });

  it('refuses unknown network interfaces, GPU profiles and stock cards on update', async () => {
    const id = await addDesktop(t.app, user, 'Hardware desktop');
    const before = await snapshot(id);
    await expectRefused(
      () => put(id, { hardware: { interfaces: ['default', 'host-bridge'] } }),
      404,
      'not_found',
      'not_found',
    );
    await expectRefused(
      () => put(id, { hardware: { reservables: { vgpus: ['NVIDIA-A40-48Q'] } } }),
      404,
      'not_found',
      'not_found',
    );
    await expectRefused(
      () =>
        injectWithToken(t.app, userToken, {
          method: 'PUT',
          url: `/api/v3/domain/reservables/${id}`,
          payload: { reservables: { vgpus: ['NVIDIA-A40-48Q'] } },
        }),
      404,
      'not_found',
      'not_found',
    );
    await expectRefused(
      () => put(id, { image: { type: 'stock', id: '../../secret' } }),
      404,
      'not_found',
      'not_found',
    );
    expect(await snapshot(id)).toEqual(before);
  });

  it('refuses a create naming a foreign ISO, template or interface, and creates nothing', async () => {
    await expectRefused(
      () =>
        createPersistent({
          template_id: DEMO_TEMPLATE_ID,
          name: 'With foreign ISO',
          hardware: { isos: [{ id: 'foreign-iso' }] },
        }),
      403,
      'forbidden',
      'media_not_allowed',
    );
    await expectRefused(
      () =>
        createPersistent({
          template_id: DEMO_TEMPLATE_ID,
          name: 'With bridge',
          hardware: { interfaces: ['host-bridge'] },
        }),
      404,
      'not_found',
      'not_found',
    );
    await expectRefused(
      () => createPersistent({ template_id: 'foreign-template', name: 'From foreign template' }),
      403,
      'forbidden',
      'template_not_allowed',
    );
    await expectRefused(
      () =>
        injectWithToken(t.app, userToken, {
          method: 'POST',
          url: '/api/v3/nonpersistent',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          payload: 'template=foreign-template',
        }),
      403,
      'forbidden',
      'template_not_allowed',
    );
    const names = (await allDesktops(t.app)).map((r) => (JSON.parse(r) as { name: string }).name);
    expect(names).not.toContain('With foreign ISO');
    expect(names).not.toContain('From foreign template');
  });

  it("refuses an update body naming another user's desktop as its id, and applies nothing", async () => {
    const id = await addDesktop(t.app, user, 'Body id desktop');
    const foreign = await addDesktop(t.app, advanced, 'Advanced desktop');
    const before = await snapshot(id);
    const foreignBefore = await snapshot(foreign);
    await expectRefused(
      () => put(id, { id: foreign, name: 'Body id renamed' }),
      400,
      'bad_request',
      'bad_request',
    );
    expect(await snapshot(id)).toEqual(before);
    expect(await snapshot(foreign)).toEqual(foreignBefore);
    const same = await put(id, { id, name: 'Body id renamed' });
    expect(same.statusCode, same.body).toBe(200);
  });

  it('accepts media shared with the caller and media the desktop already carries', async () => {
    const id = await addDesktop(t.app, user, 'Shared media desktop');
    const ok = await put(id, {
      hardware: {
        isos: [{ id: 'shared-iso' }, { id: 'demo-iso' }],
        floppies: [{ id: 'own-floppy' }],
      },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const row = await t.app.desktops.byId(id);
    expect(row?.hardware.isos?.map((m) => m.id)).toEqual(['shared-iso', 'demo-iso']);
    expect(row?.hardware.floppies?.map((m) => m.id)).toEqual(['own-floppy']);

    // A foreign ISO the desktop already has (put there by its template) is kept, not newly granted.
    const carried = await addDesktop(t.app, user, 'Carried media desktop', {
      hardware: { ...(row?.hardware ?? {}), isos: [{ id: 'foreign-iso' }] },
    });
    const kept = await put(carried, {
      name: 'Carried renamed',
      hardware: { isos: [{ id: 'foreign-iso' }] },
    });
    expect(kept.statusCode, kept.body).toBe(200);
    expect((await t.app.desktops.byId(carried))?.name).toBe('Carried renamed');
  });

  it('creates a desktop with the media shared with the caller', async () => {
    const res = await createPersistent({
      template_id: DEMO_TEMPLATE_ID,
      name: 'With shared ISO',
      hardware: { isos: [{ id: 'shared-iso' }] },
    });
    expect(res.statusCode, res.body).toBe(200);
    const row = await t.app.desktops.byId(res.json<{ id: string }>().id);
    expect(row?.hardware.isos?.map((m) => m.id)).toEqual(['shared-iso']);
  });
});

describe('manager scope', () => {
  let adminDesktop: string;
  let userDesktop: string;
  let otherCategoryDesktop: string;
  let peerManagerDesktop: string;

  beforeAll(async () => {
    await addCategory(t.app, 'other');
    await addGroup(t.app, 'other-users', 'other');
    const outsider = await addUser(t.app, {
      username: 'outsider',
      role: 'user',
      categoryId: 'other',
      groupId: 'other-users',
    });
    const peer = await addUser(t.app, {
      username: 'manager2',
      role: 'manager',
      categoryId: 'default',
      groupId: 'default-managers',
    });
    adminDesktop = await addDesktop(t.app, admin, 'Admin desktop');
    userDesktop = await addDesktop(t.app, user, 'Managed desktop');
    otherCategoryDesktop = await addDesktop(t.app, outsider, 'Outsider desktop');
    peerManagerDesktop = await addDesktop(t.app, peer, 'Peer manager desktop');
    // the outsider can log in to their category (the fixture works)
    expect(await loginTo(t.app, 'outsider', 'other')).toMatch(/^ey/);
  });

  const calls = (id: string): [string, () => Promise<LightMyRequestResponse>][] => [
    [
      'info',
      () =>
        injectWithToken(t.app, managerToken, { method: 'GET', url: `/api/v3/domain/info/${id}` }),
    ],
    ['update', () => put(id, { description: 'edited by a manager' }, managerToken)],
    [
      'start',
      () =>
        injectWithToken(t.app, managerToken, { method: 'GET', url: `/api/v3/desktop/start/${id}` }),
    ],
    [
      'delete',
      () =>
        injectWithToken(t.app, managerToken, { method: 'DELETE', url: `/api/v3/desktop/${id}` }),
    ],
    [
      'viewer',
      () =>
        injectWithToken(t.app, managerToken, {
          method: 'GET',
          url: `/api/v3/desktop/${id}/viewer/browser-vnc`,
        }),
    ],
  ];

  it("answers 403 to a manager on an admin's desktop (info, update, start, delete, viewer) and changes nothing", async () => {
    const bin = async () =>
      t.app.database.query('SELECT id FROM recycle_bin WHERE owner_id = $1', [admin.id]);
    const binBefore = await bin();
    const before = await snapshot(adminDesktop);
    for (const [name, call] of calls(adminDesktop)) {
      const res = await expectRefused(call, 403, 'forbidden', 'forbidden');
      expect(res.statusCode, name).toBe(403);
    }
    expect(await snapshot(adminDesktop)).toEqual(before);
    expect(await bin()).toEqual(binBefore);
    expect(await t.app.hypervisor.status(adminDesktop)).toBe('absent');
  });

  it("answers 403 to a manager on another category's desktop and changes nothing", async () => {
    const before = await snapshot(otherCategoryDesktop);
    for (const [, call] of calls(otherCategoryDesktop))
      await expectRefused(call, 403, 'forbidden', 'forbidden');
    expect(await snapshot(otherCategoryDesktop)).toEqual(before);
  });

  it("lets a manager read and edit a user's desktop of their category", async () => {
    const info = await injectWithToken(t.app, managerToken, {
      method: 'GET',
      url: `/api/v3/domain/info/${userDesktop}`,
    });
    expect(info.statusCode, info.body).toBe(200);
    expect(info.json().name).toBe('Managed desktop');
    const edit = await put(userDesktop, { description: 'edited by a manager' }, managerToken);
    expect(edit.statusCode, edit.body).toBe(200);
    expect((await t.app.desktops.byId(userDesktop))?.description).toBe('edited by a manager');
  });

  it("lets a manager act on another manager's desktop of the same category", async () => {
    const info = await injectWithToken(t.app, managerToken, {
      method: 'GET',
      url: `/api/v3/domain/info/${peerManagerDesktop}`,
    });
    expect(info.statusCode, info.body).toBe(200);
  });

  it("a manager may not use an admin's media and templates of the manager's category (list, show, new desktop, duplicate, attach)", async () => {
    await addMedia(t.app, admin, { id: 'admin-iso', kind: 'iso' });
    await addTemplate(t.app, admin, { id: 'admin-template' });
    // the same, owned by a user the manager manages: the manager may use them
    await addMedia(t.app, user, { id: 'managed-iso', kind: 'iso' });
    await addTemplate(t.app, user, { id: 'managed-template' });
    expect(admin.categoryId).toBe((await userRow(t.app, 'manager')).categoryId);
    const get = (url: string) =>
      injectWithToken(t.app, managerToken, { method: 'GET', url: `/api/v3${url}` });

    const media = (await get('/media_allowed')).json<{ id: string }[]>().map((m) => m.id);
    expect(media).toContain('managed-iso');
    expect(media).not.toContain('admin-iso');
    const usable = (await get('/user/templates/allowed/all')).json<{ id: string }[]>();
    expect(usable.map((tpl) => tpl.id)).toContain('managed-template');
    expect(usable.map((tpl) => tpl.id)).not.toContain('admin-template');

    await expectRefused(
      () => get('/domain/info/admin-template'),
      403,
      'forbidden',
      'template_not_allowed',
    );
    expect((await get('/domain/info/managed-template')).statusCode).toBe(200);
    await expectRefused(
      () =>
        createPersistent(
          { template_id: 'admin-template', name: 'From admin template' },
          managerToken,
        ),
      403,
      'forbidden',
      'template_not_allowed',
    );
    const templatesBefore = await t.app.database.query('SELECT id FROM templates ORDER BY id');
    const duplicate = await injectWithToken(t.app, managerToken, {
      method: 'POST',
      url: '/api/v3/template/duplicate/admin-template',
      payload: { template_id: 'admin-template', name: 'Copy of admin template' },
    });
    expect(duplicate.statusCode, duplicate.body).toBe(403);
    expect(duplicate.json().description_code).toBe('template_not_allowed');
    expect(await t.app.database.query('SELECT id FROM templates ORDER BY id')).toEqual(
      templatesBefore,
    );
    const own = await addDesktop(t.app, await userRow(t.app, 'manager'), 'Manager desktop');
    await expectRefused(
      () => put(own, { hardware: { isos: [{ id: 'admin-iso' }] } }, managerToken),
      403,
      'forbidden',
      'media_not_allowed',
    );
    const attached = await put(own, { hardware: { isos: [{ id: 'managed-iso' }] } }, managerToken);
    expect(attached.statusCode, attached.body).toBe(200);
  });

  it('lets an admin act on any desktop', async () => {
    const adminToken = await login(t.app, 'admin');
    const info = await injectWithToken(t.app, adminToken, {
      method: 'GET',
      url: `/api/v3/domain/info/${otherCategoryDesktop}`,
    });
    expect(info.statusCode, info.body).toBe(200);
  });
});
