/**
 * Storage on real qcow2 files made by qemu-img through the driver: the list shows each of the
 * caller's disks with the sizes qemu-img reports, an increase grows the file (and nothing else),
 * is refused while the desktop runs, beyond the disk size quota and for bad increments, admits
 * exactly one of many parallel increases on the last quota unit, and only the user who asked for
 * an operation may cancel it while it waits. Other users get 403/404 and change nothing.
 */
import { copyFile, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { StorageList } from '../../../../src/generated/validators.js';
import type { Role, Storage } from '../../../../src/generated/types.ts';
import { desktops, users, type UserRow } from '../../platform/db/schema.ts';
import { STORAGE_CONCURRENCY } from './storage-service.ts';
import type { ResourceEvent } from '../../platform/events/event-bus.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import {
  addDesktop,
  addUser,
  desktopRows,
  loginTo,
  userRow,
} from '../../../test/support/fixtures.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const GIB = 1024 ** 3;

let t: TestApp;
const tokens = new Map<Role, string>();
const published: ResourceEvent[] = [];

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  for (const role of ['admin', 'manager', 'advanced', 'user'] as const)
    tokens.set(role, await login(t.app, role));
  t.app.events.subscribe((event) => published.push(event));
});
afterAll(async () => {
  for (const vm of await t.app.hypervisor.list())
    await t.app.hypervisor.stop(vm.id).catch(() => undefined);
  await t.close();
  killTracked();
});

const tokenOf = (role: Role): string => {
  const token = tokens.get(role);
  if (!token) throw new Error(`no token for ${role}`);
  return token;
};

const until = untilWithin(15_000);

const pathOf = (id: string) => t.app.engine.diskPath(id);
const virtualGiB = async (id: string) =>
  (await t.app.hypervisor.diskInfo(pathOf(id))).virtualSize / GIB;
const stateOf = async (id: string) => (await t.app.desktops.byId(id))?.state;
const settled = (id: string) =>
  until(
    () => stateOf(id),
    (s) => s === 'stopped',
  );

/** A stopped desktop of `owner` with a real empty qcow2 of `sizeGiB`. */
const diskDesktop = async (owner: UserRow, name: string, sizeGiB = 4): Promise<string> => {
  const id = await addDesktop(t.app, owner, name);
  await t.app.hypervisor.prepareDisk({ path: pathOf(id), sizeGiB });
  return id;
};

const increase = (token: string, id: string, increment: string | number, priority = 'low') =>
  injectWithToken(t.app, token, {
    method: 'PUT',
    url: `/api/v3/storage/${id}/priority/${priority}/increase/${increment}`,
  });
const abort = (token: string, id: string) =>
  injectWithToken(t.app, token, { method: 'PUT', url: `/api/v3/storage/${id}/abort_operations` });
const list = async (token: string): Promise<Storage[]> => {
  const res = await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/storage/ready' });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<Storage[]>();
};

/** A user of the default category with a disk size quota, logged in. */
const quotaUser = async (username: string, desktopsDiskSize: number) => {
  const row = await addUser(t.app, {
    username,
    role: 'user',
    categoryId: 'default',
    groupId: 'default-users',
  });
  await t.app.db
    .update(users)
    .set({ quota: { desktops_disk_size: desktopsDiskSize } })
    .where(eq(users.id, row.id));
  return { row, token: await loginTo(t.app, username, 'default') };
};

/** What a refused call must leave as it was: the row and the file. */
const snapshot = async (id: string) => ({
  rows: await desktopRows(t.app, 'id = $1', [id]),
  info: await t.app.hypervisor.diskInfo(pathOf(id)),
  mtime: (await stat(pathOf(id))).mtimeMs,
});

describe('storage list', () => {
  it("lists the caller's disks with the sizes qemu-img reports, and only theirs", async () => {
    const owner = await userRow(t.app, 'user');
    const big = await diskDesktop(owner, 'Disk four', 4);
    const small = await diskDesktop(owner, 'Disk two', 2);
    const noFile = await addDesktop(t.app, owner, 'No disk file');
    const theirs = await diskDesktop(await userRow(t.app, 'advanced'), 'Advanced disk', 3);

    const answer = await list(tokenOf('user'));
    expect(StorageList(answer), JSON.stringify(StorageList.errors)).toBe(true);
    const ids = answer.map((s) => s.id);
    expect(ids).toEqual(expect.arrayContaining([big, small]));
    expect(ids).not.toContain(noFile);
    expect(ids).not.toContain(theirs);
    for (const [id, name, gib] of [
      [big, 'Disk four', 4],
      [small, 'Disk two', 2],
    ] as const) {
      const info = await t.app.hypervisor.diskInfo(pathOf(id));
      const item = answer.find((s) => s.id === id);
      expect(item).toMatchObject({
        id,
        domains: [{ id, name }],
        virtual_size: gib * GIB,
        actual_size: info.actualSize,
        status: 'ready',
        type: 'qcow2',
        directory_path: 'disks',
        user_id: owner.id,
      });
      expect(info.actualSize).toBeGreaterThan(0);
      expect(item?.usage?.percentage).toBeCloseTo((info.actualSize / (gib * GIB)) * 100, 2);
    }
    expect((await list(tokenOf('advanced'))).map((s) => s.id)).toContain(theirs);

    // the recycle bin names a recycled desktop's disk with the same id
    const del = await injectWithToken(t.app, tokenOf('user'), {
      method: 'DELETE',
      url: `/api/v3/desktop/${small}`,
    });
    expect(del.statusCode, del.body).toBe(200);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [small],
    );
    const detail = await injectWithToken(t.app, tokenOf('user'), {
      method: 'GET',
      url: `/api/v3/recycle_bin/${entry?.id ?? ''}`,
    });
    expect(detail.json<{ storages: { id: string }[] }>().storages.map((s) => s.id)).toEqual([
      small,
    ]);
    expect((await list(tokenOf('user'))).map((s) => s.id)).not.toContain(small);
  });

  it('lists 100 disks fast once their sizes are known, and within seconds cold', async () => {
    const owner = await addUser(t.app, {
      username: 'many-disks',
      role: 'user',
      categoryId: 'default',
      groupId: 'default-users',
    });
    const token = await loginTo(t.app, 'many-disks', 'default');
    const first = await diskDesktop(owner, 'Many 000', 1);
    for (let i = 1; i < 100; i++) {
      const id = await addDesktop(t.app, owner, `Many ${String(i).padStart(3, '0')}`);
      await copyFile(pathOf(first), pathOf(id));
    }
    const cold = performance.now();
    expect(await list(token)).toHaveLength(100);
    const coldMs = performance.now() - cold;
    const warm = performance.now();
    expect(await list(token)).toHaveLength(100);
    const warmMs = performance.now() - warm;
    console.info(
      `storage list of 100 disks: cold ${coldMs.toFixed(0)} ms, warm ${warmMs.toFixed(0)} ms`,
    );
    expect(coldMs).toBeLessThan(10_000);
    expect(warmMs).toBeLessThan(500);
  });
});

describe('storage increase', () => {
  it('grows the disk: qemu-img shows the new size, the desktop is stopped again, the owner hears it', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await diskDesktop(owner, 'Grown disk', 4);
    published.length = 0;
    const res = await increase(tokenOf('user'), id, 3);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json<{ task_id: string }>().task_id).toMatch(/^[0-9a-f-]{36}$/);
    await settled(id);
    expect(await virtualGiB(id)).toBe(7);
    const storageEvents = published.filter((e) => e.name === 'storage.updated');
    expect(storageEvents.map((e) => [e.payload, e.ownerId])).toEqual([
      [expect.objectContaining({ id, status: 'maintenance', size: 4 * GIB }), owner.id],
      [expect.objectContaining({ id, status: 'ready', size: 7 * GIB }), owner.id],
    ]);
    expect(
      published.some(
        (e) =>
          e.name === 'desktops.updated' && e.payload.id === id && e.payload.state === 'maintenance',
      ),
    ).toBe(true);
    const listed = (await list(tokenOf('user'))).find((s) => s.id === id);
    expect(listed?.virtual_size).toBe(7 * GIB);
  });

  it('refuses while the desktop using the disk runs', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await diskDesktop(owner, 'Running disk', 4);
    await t.app.db
      .update(desktops)
      .set({ hardware: { memory: 0.25, vcpus: 1, boot_order: ['disk'] } })
      .where(eq(desktops.id, id));
    const start = await injectWithToken(t.app, tokenOf('user'), {
      method: 'GET',
      url: `/api/v3/desktop/start/${id}`,
    });
    expect(start.statusCode, start.body).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'started',
    );
    const pid = t.app.hypervisor.get(id)?.pid;
    if (pid) trackPid(pid);
    const res = await increase(tokenOf('user'), id, 1);
    expect(res.statusCode, res.body).toBe(428);
    expectErrorShape(res.json(), 'precondition_required');
    expect(res.json<{ description_code: string }>().description_code).toBe(
      'increase_desktops_not_stopped',
    );
    expect(await stateOf(id)).toBe('started');
    expect(await virtualGiB(id)).toBe(4);
    await t.app.hypervisor.stop(id);
  });

  it('refuses shrinking, zero, fractional, huge or malformed increments and bad priorities with 400', async () => {
    const owner = await userRow(t.app, 'user');
    const id = await diskDesktop(owner, 'Validated disk', 4);
    const before = await snapshot(id);
    for (const [increment, priority] of [
      ['-1', 'low'],
      ['-100', 'low'],
      ['0', 'low'],
      ['1.5', 'low'],
      ['501', 'low'],
      ['99999999999999999999', 'low'],
      ['abc', 'low'],
      ['1', 'urgent'],
    ] as const) {
      const res = await increase(tokenOf('user'), id, increment, priority);
      expect(res.statusCode, `${increment} ${priority}: ${res.body}`).toBe(400);
      expectErrorShape(res.json(), 'bad_request');
      if (Number(increment) < 1)
        expect(res.json()).toMatchObject({ description_code: 'increase_size_too_small' });
    }
    expect(await snapshot(id)).toEqual(before);
  });

  it('refuses an increase beyond the disk size quota with increase_quota_exceeded', async () => {
    const { row, token } = await quotaUser('disk-quota', 5);
    const id = await diskDesktop(row, 'Quota disk', 4);
    const before = await snapshot(id);
    const res = await increase(token, id, 2);
    expect(res.statusCode, res.body).toBe(428);
    expect(res.json()).toMatchObject({
      error: 'precondition_required',
      description_code: 'increase_quota_exceeded',
      params: { limit: 5 },
    });
    expect(await snapshot(id)).toEqual(before);
    expect((await increase(token, id, 1)).statusCode).toBe(200);
    await settled(id);
    expect(await virtualGiB(id)).toBe(5);
  });

  it('admits exactly one of 20 parallel increases on the last quota unit', async () => {
    const { row, token } = await quotaUser('disk-race', 5);
    const id = await diskDesktop(row, 'Raced disk', 4);
    const answers = await Promise.all(Array.from({ length: 20 }, () => increase(token, id, 1)));
    const codes = answers.map((a) =>
      a.statusCode === 200 ? 200 : a.json<{ description_code: string }>().description_code,
    );
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c === 'increase_quota_exceeded')).toHaveLength(19);
    await settled(id);
    expect(await virtualGiB(id)).toBe(5);
    expect((await increase(token, id, 1)).json()).toMatchObject({
      description_code: 'increase_quota_exceeded',
    });
  });

  it("answers 403 on another user's disk and 404 on an unknown one, changing nothing", async () => {
    const owner = await userRow(t.app, 'user');
    const id = await diskDesktop(owner, 'Foreign disk', 4);
    const before = await snapshot(id);
    const foreign = [
      await increase(tokenOf('advanced'), id, 1),
      await abort(tokenOf('advanced'), id),
    ];
    for (const res of foreign) {
      expect(res.statusCode, res.body).toBe(403);
      expectErrorShape(res.json(), 'forbidden');
    }
    for (const res of [
      await increase(tokenOf('user'), 'no-such-disk', 1),
      await abort(tokenOf('user'), 'no-such-disk'),
    ]) {
      expect(res.statusCode, res.body).toBe(404);
      expectErrorShape(res.json(), 'not_found');
    }
    expect(await snapshot(id)).toEqual(before);
  });

  it('lets every role list and grow its own disks, and admins and managers the disks they manage', async () => {
    for (const role of ['admin', 'manager', 'advanced', 'user'] as const) {
      const id = await diskDesktop(await userRow(t.app, role), `Own ${role} disk`, 1);
      expect((await list(tokenOf(role))).map((s) => s.id)).toContain(id);
      const res = await increase(tokenOf(role), id, 1);
      expect(res.statusCode, `${role}: ${res.body}`).toBe(200);
      await settled(id);
      expect(await virtualGiB(id)).toBe(2);
    }
    const managed = await diskDesktop(await userRow(t.app, 'user'), 'Managed disk', 1);
    for (const role of ['admin', 'manager'] as const) {
      expect((await increase(tokenOf(role), managed, 1)).statusCode).toBe(200);
      await settled(managed);
    }
    expect(await virtualGiB(managed)).toBe(3);
    // the owner's list, not the manager's, shows it
    expect((await list(tokenOf('manager'))).map((s) => s.id)).not.toContain(managed);
  });
});

describe('storage operations queue', () => {
  /** Holds every resize until released; records the order the disks were resized in. */
  const gateResizes = () => {
    const driver = t.app.hypervisor;
    const original = driver.resizeDisk.bind(driver);
    let open: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const release = () => open?.();
    const order: string[] = [];
    const spy = vi.spyOn(driver, 'resizeDisk').mockImplementation(async (path, size) => {
      order.push(path);
      await gate;
      return original(path, size);
    });
    return { release, order, restore: () => spy.mockRestore() };
  };

  it('lets only the initiator cancel a waiting operation; a running one ends first', async () => {
    const owner = await userRow(t.app, 'user');
    const gate = gateResizes();
    try {
      const running: string[] = [];
      for (let i = 0; i < STORAGE_CONCURRENCY; i++) {
        const id = await diskDesktop(owner, `Busy disk ${i}`, 1);
        expect((await increase(tokenOf('user'), id, 1)).statusCode).toBe(200);
        running.push(id);
      }
      const waiting = await diskDesktop(owner, 'Waiting disk', 1);
      expect((await increase(tokenOf('user'), waiting, 1)).statusCode).toBe(200);
      expect(await stateOf(waiting)).toBe('maintenance');

      const byAdmin = await abort(tokenOf('admin'), waiting);
      expect(byAdmin.statusCode, byAdmin.body).toBe(403);
      expect(byAdmin.json()).toMatchObject({ description_code: 'operation_not_owned' });
      expect(await stateOf(waiting)).toBe('maintenance');

      const byOwner = await abort(tokenOf('user'), waiting);
      expect(byOwner.statusCode, byOwner.body).toBe(200);
      expect(await stateOf(waiting)).toBe('stopped');

      const [first] = running;
      if (!first) throw new Error('no running disk');
      // The resize is released only once the cancel has read the desktop (and, after the
      // microtasks it then runs, waits for the operation): the cancel must outlast the resize.
      const byId = t.app.desktops.byId.bind(t.app.desktops);
      let cancelReadIt: (() => void) | undefined;
      const readIt = new Promise<void>((resolve) => {
        cancelReadIt = resolve;
      });
      const spy = vi.spyOn(t.app.desktops, 'byId').mockImplementation(async (id, on) => {
        const row = await byId(id, on);
        if (id === first) cancelReadIt?.();
        return row;
      });
      const cancelRunning = abort(tokenOf('user'), first);
      await readIt;
      spy.mockRestore();
      await new Promise((resolve) => setImmediate(resolve));
      expect(await stateOf(first)).toBe('maintenance');
      gate.release();
      expect((await cancelRunning).statusCode).toBe(200);
      expect(await stateOf(first)).toBe('stopped');
      for (const id of running) {
        await settled(id);
        expect(await virtualGiB(id)).toBe(2);
      }
      expect(gate.order).not.toContain(pathOf(waiting));
      expect(await virtualGiB(waiting)).toBe(1);
    } finally {
      gate.release();
      gate.restore();
    }
    const idle = await abort(tokenOf('user'), await diskDesktop(owner, 'Idle disk', 1));
    expect(idle.statusCode).toBe(428);
    expect(idle.json()).toMatchObject({ description_code: 'no_storage_operation' });
  });

  it("runs an admin's high-priority operation before waiting low ones", async () => {
    const owner = await userRow(t.app, 'user');
    const gate = gateResizes();
    try {
      for (let i = 0; i < STORAGE_CONCURRENCY; i++)
        await increase(tokenOf('user'), await diskDesktop(owner, `Slot disk ${i}`, 1), 1);
      const low = await diskDesktop(owner, 'Low disk', 1);
      const high = await diskDesktop(owner, 'High disk', 1);
      expect((await increase(tokenOf('user'), low, 1, 'high')).statusCode).toBe(200);
      expect((await increase(tokenOf('admin'), high, 1, 'high')).statusCode).toBe(200);
      gate.release();
      await settled(low);
      await settled(high);
      // a user's priority counts as low: the admin's high one went first
      expect(gate.order.indexOf(pathOf(high))).toBeLessThan(gate.order.indexOf(pathOf(low)));
    } finally {
      gate.release();
      gate.restore();
    }
  });
});
