/**
 * Deployments on a real PostgreSQL with real disks (qemu-img overlays on the demo template; no VM
 * is started here: these tests are about rules, counters and events). The demo classes of the seed
 * are the targets: Class A (student01-30), Class B (student31-42), the teacher (advanced) owns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { io as connect, type Socket } from 'socket.io-client';
import { createServer as createTcpServer } from 'node:net';
import WebSocket from 'ws';
import { eq } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { desktops, users } from '../../platform/db/schema.ts';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import { studentName } from '../../seed/classes.ts';
import type {
  Deployment,
  DeploymentDesktop,
  DeploymentDetail,
  Desktop,
} from '../../../../src/generated/types.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser, userRow } from '../../../test/support/fixtures.ts';
import { sleep, untilWithin } from '../../../test/support/wait.ts';
import { desktopState } from '../../../../src/generated/policy.ts';

let t: TestApp;
let base: string;
const tokens: Record<string, string> = {};
const published: ResourceEvent[] = [];
const sockets: Socket[] = [];

const api = (
  who: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
): Promise<LightMyRequestResponse> =>
  injectWithToken(t.app, tokens[who] ?? '', {
    method,
    url: `/api/v3${url}`,
    ...(payload ? { payload } : {}),
  });

const until = untilWithin(60_000);

const expectCode = (res: LightMyRequestResponse, status: number, code: string) => {
  expect(res.statusCode, res.body).toBe(status);
  expectErrorShape(res.json(), res.json<{ error: string }>().error);
  expect(res.json<{ description_code: string }>().description_code).toBe(code);
};

const groupId = (name: 'Class A' | 'Class B') =>
  name === 'Class A' ? 'default-class-a' : 'default-class-b';

/** A deployment of `who` for these groups; answers its id once every disk is made. */
const newDeployment = async (
  who: string,
  name: string,
  groups: string[],
  extra: Record<string, unknown> = {},
) => {
  const res = await api(who, 'POST', '/deployments', {
    name,
    desktop_name: `${name} desktop`,
    template_id: 'demo-template',
    allowed: { groups },
    hardware: { memory: 0.5, vcpus: 1 },
    ...extra,
  });
  expect(res.statusCode, res.body).toBe(200);
  const { id } = res.json<{ id: string }>();
  await settled(id);
  return id;
};

const detail = async (who: string, id: string) => {
  const res = await api(who, 'GET', `/deployment/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<DeploymentDetail>();
};

/** Every desktop made and every event about it pushed. */
/** How many times the deployment's audience was told its disk job began, and ended. */
const diskJobs = (id: string) => {
  const of = (name: string) =>
    published.filter(
      (e) => e.name === name && 'deployment_id' in e.payload && e.payload.deployment_id === id,
    ).length;
  return {
    began: of('deployments.creatingDesktops'),
    ended: of('deployments.creatingDesktopsEnded'),
  };
};

const settled = async (id: string) => {
  await until(
    async () => (await t.app.deployments.counts([id])).get(id)?.creatingDesktops ?? 0,
    (n) => n === 0,
  );
  // The disk job ends a moment after its last disk (a delete refuses until then), and says so.
  await until(
    async () => diskJobs(id),
    ({ began, ended }) => ended >= began,
  );
  await t.app.deploymentService.events.settled();
};

/** A browser's socket: logged in as `who`, recording every event. */
const listen = async (who: string) => {
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    auth: { jwt: tokens[who] },
    extraHeaders: { origin: base },
  });
  sockets.push(s);
  const seen: { event: string; payload: { id: string } & Record<string, unknown> }[] = [];
  s.onAny((event: string, payload: { id: string }) => seen.push({ event, payload }));
  await new Promise<void>((resolve, reject) => {
    s.once('connect', () => resolve());
    s.once('connect_error', reject);
  });
  return seen;
};

const desktopOf = async (deploymentId: string, username: string) => {
  const user = await userRow(t.app, username);
  const rows = await t.app.desktops.table.list({
    where: eq(desktops.userId, user.id),
  });
  const row = rows.find((r) => r.tag === deploymentId);
  if (!row) throw new Error(`${username} has no desktop of ${deploymentId}`);
  return row;
};

beforeAll(async () => {
  // Desktops are marked started here without a VM (a TCP echo stands in for a console): the
  // reconciler's 5 s round would mark them failed under a test, so it runs only at boot.
  t = await buildTestApp(await createTestDatabase(), {
    prepareImages: true,
    reconcileMs: 3_600_000,
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  t.app.events.subscribe((event) => published.push(event));
  await addUser(t.app, {
    username: 'teacher2',
    role: 'advanced',
    categoryId: 'default',
    groupId: 'default-advanced',
  });
  for (const name of [
    'admin',
    'teacher',
    'teacher2',
    'advanced',
    'user',
    studentName(1),
    studentName(2),
    studentName(31),
  ])
    tokens[name] = await login(t.app, name);
}, 120_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  await t.close();
});

describe('deployments', () => {
  it('the create of a 30-user group makes 31 desktops (the owner included) and creatingDesktops goes down to 0', async () => {
    const started = Date.now();
    const res = await api('teacher', 'POST', '/deployments', {
      name: 'Maths',
      desktop_name: 'Maths desktop',
      template_id: 'demo-template',
      allowed: { groups: [groupId('Class A')] },
      visible: true,
    });
    expect(res.statusCode, res.body).toBe(200);
    const { id } = res.json<{ id: string }>();
    // the rows are there at once, being created
    const first = (await api('teacher', 'GET', '/deployments')).json<Deployment[]>();
    const listed = first.find((d) => d.id === id);
    expect(listed?.totalDesktops).toBe(31);
    await settled(id);
    const elapsed = Date.now() - started;
    // The owner's profile counts the deployment and its desktops.
    const used = (await api('teacher', 'GET', '/user/profile')).json<{ used: object }>().used;
    expect(used).toMatchObject({ deployments_total: 1, deployment_desktops: 31 });
    console.info(`deployment of 31 desktops (31 qemu-img overlays) ready in ${elapsed} ms`);
    const item = (await api('teacher', 'GET', '/deployments'))
      .json<Deployment[]>()
      .find((d) => d.id === id);
    expect(item).toMatchObject({
      totalDesktops: 31,
      visibleDesktops: 31,
      creatingDesktops: 0,
      startedDesktops: 0,
    });
    const counters = published.flatMap((e) =>
      e.name === 'deployments.updated' && e.payload.id === id ? [e.payload.creatingDesktops] : [],
    );
    expect(counters.length).toBeGreaterThan(0);
    expect(counters.at(-1)).toBe(0);
    expect(Math.max(...counters)).toBeGreaterThan(0);
    const shown = await detail('teacher', id);
    expect(shown.desktops).toHaveLength(31);
    expect(new Set(shown.desktops.map((d) => d.user)).size).toBe(31);
    expect(shown.desktops.every((d) => d.state === 'stopped' && d.tag === id)).toBe(true);
    // each student sees their desktop in their own list
    const mine = (await api(studentName(1), 'GET', '/user/desktops')).json<Desktop[]>();
    const deployed = new Set(shown.desktops.map((d) => d.id));
    expect(mine.filter((d) => deployed.has(d.id))).toHaveLength(1);
    const ended = published.filter(
      (e) => e.name === 'deployments.creatingDesktopsEnded' && e.payload.deployment_id === id,
    );
    expect(ended.length).toBeGreaterThan(0);
  }, 120_000);

  it('a deployment without the owner desktop makes one desktop per target user only', async () => {
    const id = await newDeployment('teacher', 'Only B', [groupId('Class B')], {
      owner_desktop: false,
    });
    expect((await detail('teacher', id)).desktops).toHaveLength(12);
  }, 60_000);

  it('start-all tries again a start no host took because none answered, and the desktop starts', async () => {
    const id = await newDeployment('teacher', 'Silent host', [], {
      allowed: { users: [(await userRow(t.app, studentName(2))).id] },
      owner_desktop: false,
    });
    const [desktop] = (await detail('teacher', id)).desktops;
    if (!desktop) throw new Error('the deployment has no desktop');
    const host = '/admin/hypervisors/local';
    expect((await api('admin', 'PUT', host, { enabled: false })).statusCode).toBe(200);
    try {
      // No host takes the first try; the host is back before the job's next one.
      const starting = api('teacher', 'PUT', `/deployments/start/${id}`);
      await sleep(300);
      expect((await api('admin', 'PUT', host, { enabled: true })).statusCode).toBe(200);
      expect((await starting).statusCode).toBe(200);
    } finally {
      await api('admin', 'PUT', host, { enabled: true });
    }
    const row = await desktopOf(id, studentName(2));
    expect([desktopState.starting, desktopState.started]).toContain(row.state);
    // Stopped again (the demo firmware ignores ACPI: the second stop forces it).
    await until(
      async () => {
        await api('teacher', 'PUT', `/deployments/stop/${id}`);
        return (await desktopOf(id, studentName(2))).state;
      },
      (state) => state === desktopState.stopped,
    );
  }, 90_000);

  it("the list item, the detail and the edit form's read carry what was written, the tag fields and the template (its name, false once it is gone)", async () => {
    const student = await userRow(t.app, studentName(2));
    const id = await newDeployment('teacher', 'Tagged', [], {
      allowed: { users: [student.id] },
      owner_desktop: false,
    });
    const edit = await api('teacher', 'PUT', `/deployment/${id}`, {
      name: 'Tagged again',
      description: 'the second name',
      user_permissions: ['recreate'],
    });
    expect(edit.statusCode, edit.body).toBe(200);
    const written = {
      id,
      name: 'Tagged again',
      description: 'the second name',
      desktop_name: 'Tagged desktop',
      user_permissions: ['recreate'],
      visible: false,
      tag: id,
      tag_name: 'Tagged again',
      tag_visible: false,
      template: 'Demo template',
      totalDesktops: 1,
      needs_booking: false,
      booking_id: false,
    };
    const listed = async () =>
      (await api('teacher', 'GET', '/deployments')).json<Deployment[]>().find((d) => d.id === id);
    expect(await listed()).toMatchObject(written);
    expect(await detail('teacher', id)).toMatchObject({ ...written, desktops: [{ tag: id }] });
    // the edit form's read: `name` is the desktop name, the deployment's own name is `tag_name`
    const info = await api('teacher', 'GET', `/deployment/info/${id}`);
    expect(info.statusCode, info.body).toBe(200);
    expect(info.json()).toMatchObject({
      id,
      name: 'Tagged desktop',
      description: 'the second name',
      template: 'demo-template',
      tag: id,
      tag_name: 'Tagged again',
      tag_visible: false,
      user_permissions: ['recreate'],
      allowed: { users: [{ id: student.id }] },
    });
    await t.app.deployments.update(id, { templateId: null });
    expect(await listed()).toMatchObject({ ...written, template: false });
    expect(await detail('teacher', id)).toMatchObject({ template: false });
  }, 60_000);

  it('a co-owner manages the deployment but can not change owners or delete it (403)', async () => {
    const id = await newDeployment('teacher', 'Co-owned', [], {
      allowed: { users: [(await userRow(t.app, studentName(2))).id] },
    });
    const teacher2 = await userRow(t.app, 'teacher2');
    const student = await userRow(t.app, studentName(1));
    const set = await api('teacher', 'PUT', `/deployment/co-owners/${id}`, {
      co_owners: [teacher2.id, student.id],
    });
    expect(set.statusCode, set.body).toBe(200);
    const owners = (await api('teacher2', 'GET', `/deployment/co-owners/${id}`)).json<{
      co_owners: { id: string }[];
    }>();
    // users with role user are dropped
    expect(owners.co_owners.map((c) => c.id)).toEqual([teacher2.id]);
    expect((await api('teacher2', 'GET', `/deployment/${id}`)).statusCode).toBe(200);
    expect(
      (await api('teacher2', 'GET', '/deployments')).json<Deployment[]>().some((d) => d.id === id),
    ).toBe(true);
    expectCode(
      await api('teacher2', 'PUT', `/deployment/co-owners/${id}`, { co_owners: [] }),
      403,
      'deployment_co_owner_forbidden',
    );
    expectCode(
      await api('teacher2', 'DELETE', `/deployments/${id}`),
      403,
      'deployment_co_owner_forbidden',
    );
    expectCode(
      await api('teacher2', 'DELETE', `/deployments/${id}/permanent`),
      403,
      'deployment_co_owner_forbidden',
    );
    expect(await t.app.deployments.get(id)).toBeDefined();
    // somebody else's deployment: not even readable
    expectCode(await api('advanced', 'GET', `/deployment/${id}`), 403, 'forbidden');
  }, 60_000);

  it("a student can not read another student's deployment desktop nor the deployment (403/404)", async () => {
    const id = await newDeployment('teacher', 'Privacy', [groupId('Class A')]);
    const other = await desktopOf(id, studentName(2));
    expectCode(await api(studentName(1), 'GET', `/domain/info/${other.id}`), 403, 'forbidden');
    expectCode(await api(studentName(1), 'GET', `/desktop/start/${other.id}`), 403, 'forbidden');
    expectCode(await api(studentName(1), 'GET', `/deployment/${id}`), 403, 'forbidden');
    expectCode(await api(studentName(1), 'GET', '/deployments'), 403, 'forbidden');
    expectCode(await api('teacher', 'GET', '/deployment/nope'), 404, 'not_found');
  }, 60_000);

  it("the desktops a deployment's answer embeds lose the fields role visibility hides from the caller", async () => {
    const id = await newDeployment('teacher', 'Embedded', [groupId('Class B')]);
    t.app.access.apply({ fields: { 'deployment-desktops': { user_name: ['admin'] } } });
    try {
      const hidden = await detail('teacher', id);
      expect(hidden.desktops.length).toBeGreaterThan(0);
      expect(hidden.desktops.some((d) => 'user_name' in d)).toBe(false);
      expect(hidden.desktops.every((d) => 'state' in d)).toBe(true);
      const kept = await detail('admin', id);
      expect(kept.desktops.every((d) => 'user_name' in d)).toBe(true);
    } finally {
      t.app.access.apply({});
    }
  }, 60_000);

  it('a desktop of an invisible deployment is not startable by its user, nor listed', async () => {
    const id = await newDeployment('teacher', 'Hidden', [groupId('Class A')], { visible: false });
    const own = await desktopOf(id, studentName(1));
    const list = (await api(studentName(1), 'GET', '/user/desktops')).json<Desktop[]>();
    expect(list.some((d) => d.id === own.id)).toBe(false);
    expectCode(
      await api(studentName(1), 'GET', `/desktop/start/${own.id}`),
      403,
      'desktop_is_not_visible',
    );
    expect((await t.app.desktops.table.get(own.id))?.state).toBe('stopped');
  }, 60_000);

  it('a console ticket issued before the deployment was hidden opens no console once it is hidden', async () => {
    const id = await newDeployment('teacher', 'Hidden later', [groupId('Class B')], {
      visible: true,
    });
    const own = await desktopOf(id, studentName(31));
    // A TCP echo stands in for the desktop's VNC listener (no VM is started in this file).
    const echo = createTcpServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const address = echo.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    await t.app.desktops.table.update(own.id, {
      state: 'started',
      runtime: { ...own.runtime, vncPort: port, spicePort: port, vncPassword: 'x' },
    });
    const openConsole = (url: string) =>
      new Promise<number>((resolve) => {
        const ws = new WebSocket(base.replace('http', 'ws') + url, { headers: { origin: base } });
        ws.once('open', () => {
          ws.terminate();
          resolve(101);
        });
        ws.once('unexpected-response', (_req, res) => {
          ws.terminate();
          resolve(res.statusCode ?? 0);
        });
        ws.once('error', () => resolve(0));
      });
    const ticket = async () => {
      const res = await api(studentName(31), 'GET', `/desktop/${own.id}/viewer/browser-vnc`);
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ url: string }>().url;
    };
    try {
      // while visible, a ticket opens the console
      expect(await openConsole(await ticket())).toBe(101);
      const early = await ticket();
      // Hidden by another node of the portal: this one hears no event that would revoke tickets.
      await t.app.deployments.update(id, { visible: false });
      expectCode(
        await api(studentName(31), 'GET', `/desktop/${own.id}/viewer/browser-vnc`),
        403,
        'desktop_is_not_visible',
      );
      expect(await openConsole(early)).toBe(403);
    } finally {
      await t.app.desktops.table.update(own.id, { state: 'stopped', runtime: own.runtime });
      await new Promise((resolve) => echo.close(resolve));
    }
  }, 60_000);

  it('a visibility flip does not add a duplicate row to the user desktop list (socket)', async () => {
    const id = await newDeployment('teacher', 'Flip', [groupId('Class B')], { visible: false });
    const own = await desktopOf(id, studentName(31));
    const seen = await listen(studentName(31));
    // a naive client: appends on add, patches known rows on update, removes on delete
    const rows = (await api(studentName(31), 'GET', '/user/desktops')).json<
      Record<string, unknown>[]
    >();
    const apply = () => {
      for (const { event, payload } of seen.splice(0)) {
        if (event === 'desktop_add') rows.push(payload);
        else if (event === 'desktop_update') {
          const i = rows.findIndex((r) => r.id === payload.id);
          if (i >= 0) rows[i] = { ...rows[i], ...payload };
        } else if (event === 'desktop_delete') {
          for (let i = rows.length - 1; i >= 0; i--)
            if (rows[i]?.id === payload.id) rows.splice(i, 1);
        }
      }
    };
    const count = () => rows.filter((r) => r.id === own.id).length;
    for (const expected of [1, 0, 1, 0, 1]) {
      const res = await api('teacher', 'PUT', `/deployments/visible/${id}`, {});
      expect(res.statusCode, res.body).toBe(200);
      await t.app.deploymentService.events.settled();
      await sleep(200);
      apply();
      expect(count()).toBe(expected);
      const server = (await api(studentName(31), 'GET', '/user/desktops')).json<Desktop[]>();
      expect(server.filter((d) => d.id === own.id)).toHaveLength(expected);
    }
  }, 60_000);

  it('recreate leaves no phantom rows in the owner deployment view (socket)', async () => {
    const id = await newDeployment('teacher', 'Recreate', [groupId('Class B')]);
    const seen = await listen('teacher');
    const rows = new Map<string, DeploymentDesktop>(
      (await detail('teacher', id)).desktops.map((d) => [d.id, d]),
    );
    // student32 leaves Class B, a new student joins it
    const leaver = await userRow(t.app, studentName(32));
    await t.app.db.update(users).set({ groupId: 'default-users' }).where(eq(users.id, leaver.id));
    const joiner = await addUser(t.app, {
      username: 'student43',
      role: 'user',
      categoryId: 'default',
      groupId: 'default-class-b',
    });
    const res = await api('teacher', 'PUT', `/deployments/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    await settled(id);
    await sleep(300);
    for (const { event, payload } of seen) {
      if ((payload as { tag?: string }).tag !== id) continue;
      if (event === 'deploymentdesktop_add' || event === 'deploymentdesktop_update')
        rows.set(payload.id, payload as unknown as DeploymentDesktop);
      else if (event === 'deploymentdesktop_delete') rows.delete(payload.id);
    }
    const server = (await detail('teacher', id)).desktops;
    expect([...rows.keys()].sort()).toEqual(server.map((d) => d.id).sort());
    expect(server.some((d) => d.user === leaver.id)).toBe(false);
    expect(server.some((d) => d.user === joiner.id)).toBe(true);
    expect(server).toHaveLength(13);
    // the clients' rows carry the final states
    for (const d of server) expect(rows.get(d.id)?.state).toBe(d.state);
    // refused while creating
    await t.app.db.update(users).set({ groupId: 'default-class-b' }).where(eq(users.id, leaver.id));
    const again = await api('teacher', 'PUT', `/deployments/${id}`);
    expect(again.statusCode, again.body).toBe(200);
    const during = await api('teacher', 'PUT', `/deployments/${id}`);
    if (during.statusCode !== 200) expectCode(during, 428, 'deployment_creating');
    await settled(id);
  }, 60_000);

  it('the direct-viewer CSV neutralises formula cells and quotes per RFC 4180', async () => {
    const hostile = [
      '=HYPERLINK("http://evil","x")',
      '+cmd',
      '-1+1',
      '@SUM(A1)',
      '\tTab',
      '\rCR',
      'Comma, "quoted"',
    ];
    const created = [];
    for (const [i, name] of hostile.entries()) {
      const u = await addUser(t.app, {
        username: `hostile${i}`,
        role: 'user',
        categoryId: 'default',
        groupId: 'default-users',
      });
      await t.app.db.update(users).set({ name }).where(eq(users.id, u.id));
      created.push(u.id);
    }
    const id = await newDeployment('teacher', 'CSV export', [], {
      allowed: { users: created },
      owner_desktop: false,
      visible: true,
    });
    const res = await api('teacher', 'GET', `/deployments/directviewer_csv/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toContain(`filename="${id}_direct_viewer.csv"`);
    expect(res.headers['cache-control']).toBe('no-store');
    const cells = parseCsv(res.body);
    expect(cells[0]).toEqual(['username', 'name', 'email', 'url']);
    expect(cells).toHaveLength(hostile.length + 1);
    for (const row of cells) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
    const names = cells.slice(1).map((r) => r[1]);
    expect(names).toContain(`'=HYPERLINK("http://evil","x")`);
    expect(names).toContain('Comma, "quoted"');
    // every link works, and only its hash is stored
    const link = cells[1]?.[3] ?? '';
    const token = link.split('/vw/')[1] ?? '';
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const opened = await t.app.inject({ method: 'GET', url: `/api/v3/direct/${token}` });
    expect(opened.statusCode, opened.body).toBe(200);
    const dump = JSON.stringify(await t.app.database.query('SELECT * FROM desktops'));
    expect(dump).not.toContain(token);
  }, 60_000);
});

describe('direct-viewer links', () => {
  let deploymentId: string;
  let mine: string;
  let other: string;

  beforeAll(async () => {
    deploymentId = await newDeployment('teacher', 'Direct', [groupId('Class B')], {
      visible: true,
    });
    mine = (await desktopOf(deploymentId, studentName(31))).id;
    other = (await desktopOf(deploymentId, studentName(33))).id;
  }, 60_000);

  const reset = async (who: string, desktopId: string, disabled = false) =>
    api(who, 'PUT', `/desktop/jumperurl_reset/${desktopId}`, { disabled });

  it('a reset link makes the old token answer 404, a disabled link too', async () => {
    const first = await reset('teacher', mine);
    expect(first.statusCode, first.body).toBe(200);
    const oldToken = JSON.parse(first.body) as string;
    expect((await t.app.inject({ url: `/api/v3/direct/${oldToken}` })).statusCode).toBe(200);
    expect((await api('teacher', 'GET', `/desktop/jumperurl/${mine}`)).json()).toEqual({
      jumperurl: true,
    });
    const second = await reset(studentName(31), mine);
    expect(second.statusCode, second.body).toBe(200);
    const newToken = JSON.parse(second.body) as string;
    const gone = await t.app.inject({ url: `/api/v3/direct/${oldToken}` });
    expectCode(gone, 404, 'not_found');
    expect((await t.app.inject({ url: `/api/v3/direct/${newToken}` })).statusCode).toBe(200);
    const off = await reset('teacher', mine, true);
    expect(off.body).toBe('null');
    expectCode(await t.app.inject({ url: `/api/v3/direct/${newToken}` }), 404, 'not_found');
    expect((await api('teacher', 'GET', `/desktop/jumperurl/${mine}`)).json()).toEqual({
      jumperurl: false,
    });
    // somebody else's desktop: no link for them
    expectCode(await reset(studentName(1), mine), 403, 'forbidden');
    expectCode(await reset('advanced', mine), 403, 'forbidden');
  }, 30_000);

  it('answers with no-referrer and no-store, and shows nothing private', async () => {
    const token = JSON.parse((await reset('teacher', mine)).body) as string;
    const res = await t.app.inject({ url: `/api/v3/direct/${token}` });
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json<Record<string, unknown>>();
    expect(body).toMatchObject({ desktopId: mine, vmState: 'stopped' });
    expect(Object.keys(body).sort()).toEqual(
      [
        'desktopId',
        'jwt',
        'needs_booking',
        'next_booking_end',
        'next_booking_start',
        'scheduled',
        'version',
        'viewers',
        'vmDescription',
        'vmName',
        'vmState',
      ].sort(),
    );
    const missing = await t.app.inject({
      url: '/api/v3/direct/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
    });
    expect(missing.headers['referrer-policy']).toBe('no-referrer');
  });

  it('a link of an invisible deployment answers 404 until it is visible again', async () => {
    const token = JSON.parse((await reset('teacher', mine)).body) as string;
    await api('teacher', 'PUT', `/deployments/visible/${deploymentId}`, {});
    expectCode(await t.app.inject({ url: `/api/v3/direct/${token}` }), 404, 'not_found');
    await api('teacher', 'PUT', `/deployments/visible/${deploymentId}`, {});
    expect((await t.app.inject({ url: `/api/v3/direct/${token}` })).statusCode).toBe(200);
  });

  it("the direct viewer JWT can not open another desktop's console nor act as a login", async () => {
    const token = JSON.parse((await reset('teacher', mine)).body) as string;
    const { jwt } = (await t.app.inject({ url: `/api/v3/direct/${token}` })).json<{
      jwt: string;
    }>();
    const asViewer = (url: string) =>
      t.app.inject({ url: `/api/v3${url}`, headers: { authorization: `Bearer ${jwt}` } });
    // another desktop, through the direct console path and through the login one
    expectCode(await asViewer(`/direct/viewer/${other}/browser-vnc`), 403, 'forbidden');
    expectCode(await asViewer(`/desktop/${other}/viewer/browser-vnc`), 403, 'forbidden');
    expectCode(await asViewer(`/desktop/${mine}/viewer/browser-vnc`), 403, 'forbidden');
    for (const url of ['/user', '/user/desktops', `/desktop/start/${mine}`, '/deployments'])
      expect((await asViewer(url)).statusCode).toBe(403);
    // its own desktop: a console ticket once it runs, nothing while it is stopped
    expectCode(await asViewer(`/direct/viewer/${mine}/browser-vnc`), 409, 'viewer_not_started');
    // a login token is not a direct-viewer token
    expectCode(await api('teacher', 'GET', `/direct/viewer/${mine}/browser-vnc`), 403, 'forbidden');
    // after a reset the JWT of the old link opens nothing
    await reset('teacher', mine);
    expectCode(await asViewer(`/direct/viewer/${mine}/browser-vnc`), 404, 'not_found');
  });

  it('an unknown action is refused, and tokens never reach the logs', async () => {
    const token = JSON.parse((await reset('teacher', mine)).body) as string;
    const res = await t.app.inject({ method: 'PUT', url: `/api/v3/direct/${token}/explode` });
    expect(res.statusCode).toBe(400);
    const { redactSecrets } = await import('../../platform/lib/log-redact.ts');
    expect(redactSecrets(`GET /api/v3/direct/${token} 200`)).not.toContain(token);
    expect(redactSecrets(`page /vw/${token}`)).not.toContain(token);
  });
});

describe('deployment delete and the recycle bin', () => {
  it('goes to the recycle bin with its desktops and disks, and comes back', async () => {
    const id = await newDeployment('teacher', 'Binned', [groupId('Class B')]);
    const before = (await detail('teacher', id)).desktops.map((d) => d.id).sort();
    const del = await api('teacher', 'DELETE', `/deployments/${id}`);
    expect(del.statusCode, del.body).toBe(200);
    expect(await t.app.deployments.get(id)).toBeUndefined();
    const entry = published.findLast((e) => e.name === 'recycle-bins.created');
    expect(entry?.payload).toMatchObject({
      item_type: 'deployment',
      desktops: before.length,
      deployments: 1,
    });
    const restore = await api('teacher', 'PUT', `/recycle_bin/restore/${entry?.payload.id}`);
    expect(restore.statusCode, restore.body).toBe(200);
    expect((await detail('teacher', id)).desktops.map((d) => d.id).sort()).toEqual(before);
    const gone = await api('teacher', 'DELETE', `/deployments/${id}/permanent`);
    expect(gone.statusCode, gone.body).toBe(200);
    expectCode(await api('teacher', 'GET', `/deployment/${id}`), 404, 'not_found');
  }, 60_000);

  it("restored deployment desktops do not count against their users' own desktop quota", async () => {
    const id = await newDeployment('teacher', 'Restored quota', [groupId('Class B')]);
    const student = await userRow(t.app, studentName(31));
    const quotaOf = `SELECT quota FROM users WHERE id = $1`;
    const [{ quota: before } = { quota: null }] = await t.app.database.query<{ quota: unknown }>(
      quotaOf,
      [student.id],
    );
    try {
      // the student may have no desktop of their own at all
      await t.app.database.query(`UPDATE users SET quota = $2 WHERE id = $1`, [
        student.id,
        JSON.stringify({ desktops: 0 }),
      ]);
      expect((await api('teacher', 'DELETE', `/deployments/${id}`)).statusCode).toBe(200);
      const entry = published.findLast((e) => e.name === 'recycle-bins.created');
      const restore = await api('teacher', 'PUT', `/recycle_bin/restore/${entry?.payload.id}`);
      expect(restore.statusCode, restore.body).toBe(200);
      expect((await desktopOf(id, studentName(31))).tag).toBe(id);
    } finally {
      await t.app.database.query(`UPDATE users SET quota = $2 WHERE id = $1`, [
        student.id,
        before === null ? null : JSON.stringify(before),
      ]);
    }
  }, 60_000);

  it("a restore stays within the owner's deployment quotas and the target desktop limits a create checks, and an entry over them stays in the bin untouched", async () => {
    const id = await newDeployment('teacher', 'Restored within quota', [groupId('Class B')]);
    const before = (await detail('teacher', id)).desktops.map((d) => d.id).sort();
    expect((await api('teacher', 'DELETE', `/deployments/${id}`)).statusCode).toBe(200);
    const entryId = String(
      published.findLast((e) => e.name === 'recycle-bins.created')?.payload.id,
    );
    const teacher = await userRow(t.app, 'teacher');
    const count = async (text: string, param: string) =>
      Number((await t.app.database.query<{ n: string }>(text, [param]))[0]?.n);
    const deploymentsOwned = await count(
      'SELECT count(*) AS n FROM deployments WHERE user_id = $1',
      teacher.id,
    );
    const deploymentDesktopsOwned = await count(
      'SELECT count(*) AS n FROM desktops d JOIN deployments p ON p.id = d.tag WHERE p.user_id = $1',
      teacher.id,
    );
    const classBDesktops = await count(
      "SELECT count(*) AS n FROM desktops WHERE group_id = $1 AND type = 'persistent'",
      groupId('Class B'),
    );
    /** With this quota set, the restore is refused with the create's code and nothing comes back. */
    const refused = async (
      table: 'users' | 'groups',
      rowId: string,
      quota: (before: object) => object,
      code: string,
    ) => {
      const [{ quota: saved } = { quota: null }] = await t.app.database.query<{
        quota: object | null;
      }>(`SELECT quota FROM ${table} WHERE id = $1`, [rowId]);
      try {
        await t.app.database.query(`UPDATE ${table} SET quota = $2 WHERE id = $1`, [
          rowId,
          JSON.stringify(quota(saved ?? {})),
        ]);
        expectCode(await api('teacher', 'PUT', `/recycle_bin/restore/${entryId}`), 428, code);
        expect((await t.app.recycleBin.get(entryId))?.status).toBe('recycled');
        expect(await t.app.deployments.get(id)).toBeUndefined();
        expect(await count('SELECT count(*) AS n FROM desktops WHERE tag = $1', id)).toBe(0);
      } finally {
        await t.app.database.query(`UPDATE ${table} SET quota = $2 WHERE id = $1`, [
          rowId,
          saved === null ? null : JSON.stringify(saved),
        ]);
      }
    };
    await refused(
      'users',
      teacher.id,
      () => ({ deployments_total: deploymentsOwned }),
      'deployment_new_user_quota_exceeded',
    );
    await refused(
      'users',
      teacher.id,
      () => ({ deployment_desktops: deploymentDesktopsOwned + before.length - 1 }),
      'deployment_desktop_new_user_quota_exceeded',
    );
    await refused(
      'groups',
      groupId('Class B'),
      (saved) => ({ ...saved, limits: { desktops: classBDesktops } }),
      'desktop_new_group_limit_exceeded',
    );
    // Within every quota again, the entry comes back whole.
    const restore = await api('teacher', 'PUT', `/recycle_bin/restore/${entryId}`);
    expect(restore.statusCode, restore.body).toBe(200);
    expect((await t.app.recycleBin.get(entryId))?.status).toBe('restored');
    expect((await detail('teacher', id)).desktops.map((d) => d.id).sort()).toEqual(before);
  }, 60_000);

  it("a deleted user's desktop of another owner's deployment comes back only within that owner's deployment-desktop quota", async () => {
    const student = await addUser(t.app, {
      username: 'leaving-student',
      role: 'user',
      categoryId: 'default',
      groupId: groupId('Class B'),
    });
    const id = await newDeployment('teacher2', 'Left by a student', [], {
      allowed: { users: [student.id] },
      owner_desktop: false,
    });
    const deleted = await api('admin', 'DELETE', `/admin/users/${student.id}`);
    expect(deleted.statusCode, deleted.body).toBe(200);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE item_type = 'user' AND item_name = 'leaving-student'",
    );
    const entryId = entry?.id ?? '';
    const owner = await userRow(t.app, 'teacher2');
    const [{ n } = { n: '0' }] = await t.app.database.query<{ n: string }>(
      'SELECT count(*) AS n FROM desktops d JOIN deployments p ON p.id = d.tag WHERE p.user_id = $1',
      [owner.id],
    );
    try {
      await t.app.database.query(`UPDATE users SET quota = $2 WHERE id = $1`, [
        owner.id,
        JSON.stringify({ deployment_desktops: Number(n) }),
      ]);
      expectCode(
        await api('admin', 'PUT', `/recycle_bin/restore/${entryId}`),
        428,
        'deployment_desktop_new_user_quota_exceeded',
      );
      expect((await t.app.recycleBin.get(entryId))?.status).toBe('recycled');
      expect(await t.app.users.byId(student.id)).toBeUndefined();
    } finally {
      await t.app.database.query(`UPDATE users SET quota = NULL WHERE id = $1`, [owner.id]);
    }
    const restore = await api('admin', 'PUT', `/recycle_bin/restore/${entryId}`);
    expect(restore.statusCode, restore.body).toBe(200);
    expect((await detail('teacher2', id)).desktops.map((d) => d.user)).toEqual([student.id]);
  }, 60_000);

  it("a new deployment's desktops stay within the desktop limits of their users' group and category", async () => {
    const limited = async (table: 'groups' | 'categories', id: string, code: string) => {
      const [{ quota: before } = { quota: null }] = await t.app.database.query<{
        quota: unknown;
      }>(`SELECT quota FROM ${table} WHERE id = $1`, [id]);
      try {
        await t.app.database.query(`UPDATE ${table} SET quota = $2 WHERE id = $1`, [
          id,
          JSON.stringify({ ...((before as object | null) ?? {}), limits: { desktops: 5 } }),
        ]);
        const res = await api('teacher', 'POST', '/deployments', {
          name: `Over the ${table} limit`,
          desktop_name: 'Limited desktop',
          template_id: 'demo-template',
          allowed: { groups: [groupId('Class B')] },
          hardware: { memory: 0.5, vcpus: 1 },
        });
        expectCode(res, 428, code);
        expect(res.json<{ params: { limit: number } }>().params.limit).toBe(5);
        expect(
          (await api('teacher', 'GET', '/deployments'))
            .json<Deployment[]>()
            .some((d) => d.name === `Over the ${table} limit`),
        ).toBe(false);
      } finally {
        await t.app.database.query(`UPDATE ${table} SET quota = $2 WHERE id = $1`, [
          id,
          before === null ? null : JSON.stringify(before),
        ]);
      }
    };
    await limited('groups', groupId('Class B'), 'desktop_new_group_limit_exceeded');
    const category = (await userRow(t.app, studentName(31))).categoryId;
    await limited('categories', category, 'desktop_new_category_limit_exceeded');
  }, 60_000);

  it('deleting a template recycles the deployments made from it with it, and a restore brings them back', async () => {
    const copy = await api('teacher', 'POST', '/template/duplicate/demo-template', {
      template_id: 'demo-template',
      name: 'Teacher copy',
      enabled: true,
    });
    expect(copy.statusCode, copy.body).toBe(200);
    const templateId = copy.json<{ id: string }>().id;
    const id = await newDeployment('teacher', 'From a copy', [groupId('Class B')], {
      template_id: templateId,
    });
    const desktops = (await detail('teacher', id)).desktops.map((d) => d.id).sort();
    const del = await api('teacher', 'DELETE', `/template/${templateId}`);
    expect(del.statusCode, del.body).toBe(200);
    expect(await t.app.deployments.get(id)).toBeUndefined();
    expectCode(await api('teacher', 'GET', `/deployment/${id}`), 404, 'not_found');
    const entry = published.findLast((e) => e.name === 'recycle-bins.created');
    expect(entry?.payload).toMatchObject({ item_type: 'template', deployments: 1 });
    const restore = await api('teacher', 'PUT', `/recycle_bin/restore/${entry?.payload.id}`);
    expect(restore.statusCode, restore.body).toBe(200);
    expect((await t.app.deployments.get(id))?.templateId).toBe(templateId);
    expect((await detail('teacher', id)).desktops.map((d) => d.id).sort()).toEqual(desktops);
  }, 60_000);

  it('counts the users of groups plus the caller, and checks quotas', async () => {
    const res = await api('teacher', 'PUT', '/groups_users/count', {
      groups: [groupId('Class A'), groupId('Class B')],
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ quantity: number }>().quantity).toBeGreaterThanOrEqual(43);
    expect((await api('teacher', 'GET', '/deployments/new/check_quota')).statusCode).toBe(200);
    expect(
      (
        await api('teacher', 'POST', '/deployments/new/check_quota', {
          allowed: { groups: [groupId('Class A')] },
        })
      ).statusCode,
    ).toBe(200);
  });
});

/** A small RFC 4180 parser (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}
