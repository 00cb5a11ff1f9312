import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFakeDriver, type FakeHypervisor } from '../../platform/hypervisor/fake-driver.ts';
import type { DesktopState } from '../../../../src/generated/types.ts';
import { DesktopEngine } from './desktop-engine.ts';
import type { DesktopStore, EngineDesktop, EnginePatch } from './types.ts';

/** In-memory store for the engine's unit tests: same conditional-update contract as the DB store. */
class MemoryStore implements DesktopStore {
  rows = new Map<string, EngineDesktop & { version: number; queue: EnginePatch['queue'] }>();
  history: { id: string; state: DesktopState }[] = [];
  add(row: Partial<EngineDesktop> & { id: string }) {
    this.rows.set(row.id, {
      user_id: 'u1',
      name: row.id,
      type: 'persistent',
      state: 'stopped',
      detail: null,
      hardware: { vcpus: 1, memory: 0.5 },
      disk_path: null,
      template_disk_path: '/tpl.qcow2',
      runtime: null,
      updated_at: new Date(),
      version: 1,
      queue: null,
      ...row,
      node: row.node ?? null,
    });
  }
  async get(id: string) {
    return this.rows.get(id);
  }
  async update(id: string, patch: EnginePatch, from?: readonly DesktopState[]) {
    const row = this.rows.get(id);
    if (!row || (from && !from.includes(row.state))) return undefined;
    const { accessed: _accessed, ...rest } = patch;
    Object.assign(row, rest, { version: row.version + 1, updated_at: new Date() });
    if (patch.state) this.history.push({ id, state: patch.state });
    return row;
  }
  async listInStates(states: readonly DesktopState[]) {
    return [...this.rows.values()].filter((r) => states.includes(r.state));
  }
  async mediaPaths(ids: string[]) {
    return new Map(ids.map((i) => [i, `/media/${i}.iso`]));
  }
}

const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
const until = async (check: () => boolean | Promise<boolean>, ms = 3000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not reached');
};

describe('DesktopEngine', () => {
  let dir: string;
  let store: MemoryStore;
  let driver: FakeHypervisor;
  let engine: DesktopEngine;
  /** The engine of the tests (one start at a time), with `extra` options. */
  const engineWith = (extra: Partial<ConstructorParameters<typeof DesktopEngine>[0]> = {}) =>
    new DesktopEngine({
      store,
      driver,
      dataDir: dir,
      log,
      shutdownTimeoutMs: 200,
      startConcurrency: 1,
      ...extra,
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'engine-'));
    mkdirSync(join(dir, 'disks'));
    store = new MemoryStore();
    driver = createFakeDriver({ honourPowerdown: false });
    engine = engineWith();
  });
  afterEach(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const row = (id: string) => {
    const r = store.rows.get(id);
    if (!r) throw new Error(`no row ${id}`);
    return r;
  };
  const withDisk = (id: string) => {
    const path = join(dir, 'disks', `${id}.qcow2`);
    writeFileSync(path, '');
    store.add({ id, disk_path: path });
  };

  it('starts a stopped desktop through starting to started and records its runtime', async () => {
    withDisk('d1');
    await expect(engine.start('d1')).resolves.toBe('starting');
    await until(() => store.rows.get('d1')?.state === 'started');
    const row = store.rows.get('d1');
    expect(row?.runtime?.vncPassword).toHaveLength(8);
    expect(row?.runtime?.vncPort).toBeGreaterThan(0);
    expect(driver.inspect('d1')?.passwords.vnc).toBe(row?.runtime?.vncPassword);
    expect(store.history.map((h) => h.state)).toEqual(['starting', 'started']);
  });

  it('returns the current state when start is asked twice and starts only one VM', async () => {
    withDisk('d1');
    const [a, b] = await Promise.all([engine.start('d1'), engine.start('d1')]);
    expect([a, b].sort()).toEqual(['starting', 'starting']);
    await until(() => store.rows.get('d1')?.state === 'started');
    expect((await driver.list()).length).toBe(1);
  });

  it('refuses to start from a state without a start action', async () => {
    withDisk('d1');
    row('d1').state = 'maintenance';
    await expect(engine.start('d1')).rejects.toMatchObject({
      descriptionCode: 'unable_to_start_desktop_from',
      statusCode: 428,
    });
  });

  it('refuses to start a desktop whose disk is missing', async () => {
    store.add({ id: 'nodisk', disk_path: join(dir, 'disks', 'missing.qcow2') });
    await expect(engine.start('nodisk')).rejects.toMatchObject({
      descriptionCode: 'desktop_storage_not_ready',
    });
  });

  it('queues starts beyond the concurrency and publishes queue positions', async () => {
    const slow = createFakeDriver({ startDelayMs: 150 });
    const e2 = new DesktopEngine({ store, driver: slow, dataDir: dir, log, startConcurrency: 1 });
    withDisk('a');
    withDisk('b');
    withDisk('c');
    await e2.start('a');
    await e2.start('b');
    await e2.start('c');
    expect(store.rows.get('b')?.queue?.position).toBe(1);
    expect(store.rows.get('c')?.queue?.position).toBe(2);
    await until(() => ['a', 'b', 'c'].every((id) => store.rows.get(id)?.state === 'started'), 5000);
    expect(store.rows.get('c')?.queue).toBeNull();
    await e2.close();
  });

  it('marks a desktop failed with the reason when the start fails', async () => {
    withDisk('d1');
    driver.failNextStart('qemu: could not open disk');
    await engine.start('d1');
    await until(() => store.rows.get('d1')?.state === 'failed');
    expect(store.rows.get('d1')?.detail).toContain('could not open disk');
  });

  it('stops gracefully first, forces on the second stop, and ends stopped', async () => {
    withDisk('d1');
    await engine.start('d1');
    await until(() => store.rows.get('d1')?.state === 'started');
    await expect(engine.stop('d1')).resolves.toBe('shutting-down');
    expect(store.rows.get('d1')?.state).toBe('shutting-down');
    await expect(engine.stop('d1')).resolves.toBe('stopping');
    await until(() => store.rows.get('d1')?.state === 'stopped');
    expect(await driver.status('d1')).toBe('absent');
    expect(store.rows.get('d1')?.runtime).toBeNull();
  });

  it('forces a stop when the guest ignores the power button past the timeout', async () => {
    withDisk('d1');
    await engine.start('d1');
    await until(() => store.rows.get('d1')?.state === 'started');
    await engine.stop('d1');
    await until(() => store.rows.get('d1')?.state === 'stopped', 2000);
  });

  it('turns a desktop whose VM dies unexpectedly into failed with the reason', async () => {
    withDisk('d1');
    await engine.start('d1');
    await until(() => store.rows.get('d1')?.state === 'started');
    driver.crash('d1', 'killed by signal SIGKILL');
    await until(() => store.rows.get('d1')?.state === 'failed');
    expect(store.rows.get('d1')?.detail).toContain('SIGKILL');
  });

  it('a guest powering itself off ends stopped, not failed', async () => {
    withDisk('d1');
    await engine.start('d1');
    await until(() => store.rows.get('d1')?.state === 'started');
    driver.guestPowerOff('d1');
    await until(() => store.rows.get('d1')?.state === 'stopped');
  });

  it('does not act on a row that changed after the reconciler listed it (no lost start)', async () => {
    await engine.close();
    driver = createFakeDriver({ honourPowerdown: false, startDelayMs: 200 });
    engine = new DesktopEngine({ store, driver, dataDir: dir, log, shutdownTimeoutMs: 200 });
    withDisk('slow');
    // The reconciler lists the row while it is `starting`; the start completes before the
    // reconciler gets to it. Acting on the listed copy would stop a VM that just started.
    const list = store.listInStates.bind(store);
    let listed = false;
    store.listInStates = async (states) => {
      const rows = (await list(states)).map((r) => ({ ...r }));
      listed = rows.some((r) => r.id === 'slow' && r.state === 'starting');
      if (listed) await until(() => row('slow').state === 'started');
      return rows;
    };
    await engine.start('slow');
    await engine.reconcile();
    expect(listed).toBe(true);
    expect(row('slow').state).toBe('started');
    expect(store.history.map((h) => h.state)).toEqual(['starting', 'started']);
    expect((await driver.list()).map((d) => d.id)).toEqual(['slow']);
  });

  it('boots once when the reconciler lists a start before its boot is queued', async () => {
    await engine.close();
    driver = createFakeDriver({ honourPowerdown: false, startDelayMs: 50 });
    engine = new DesktopEngine({ store, driver, dataDir: dir, log, startConcurrency: 4 });
    withDisk('race');
    // The reconciler runs the moment the start has written `starting`, before the start queues
    // the boot: it takes the row for an interrupted start and queues a boot of its own.
    const update = store.update.bind(store);
    store.update = async (id, patch, from) => {
      const written = await update(id, patch, from);
      if (patch.state === 'starting') await engine.reconcile();
      return written;
    };
    await engine.start('race');
    await until(() => row('race').state !== 'starting');
    expect(row('race').state).toBe('started');
    expect(store.history.map((h) => h.state)).toEqual(['starting', 'started']);
    expect((await driver.list()).map((d) => d.id)).toEqual(['race']);
  });

  it('reconciles rows left in transitional states by a restart', async () => {
    withDisk('gone');
    withDisk('mid');
    withDisk('halting');
    row('gone').state = 'started';
    row('mid').state = 'starting';
    row('halting').state = 'stopping';
    await engine.init();
    await until(() => store.rows.get('mid')?.state === 'started');
    expect(store.rows.get('gone')?.state).toBe('failed');
    expect(store.rows.get('halting')?.state).toBe('stopped');
  });

  it('creates the disk of a new desktop as an overlay of its template, then it is stopped', async () => {
    store.add({ id: 'new', state: 'creating', template_disk_path: '/templates/demo.qcow2' });
    await engine.createDisk('new');
    expect(store.rows.get('new')?.state).toBe('stopped');
    expect(driver.disks()).toContain(join(dir, 'disks', 'new.qcow2'));
  });

  it('boots a new desktop once its disk is made (create, then start), without the reconciler', async () => {
    // the fake driver makes no files: the disk is there already, so the creation only records it
    const disk = join(dir, 'disks', 'new.qcow2');
    writeFileSync(disk, '');
    store.add({ id: 'new', state: 'notCreated', disk_path: disk });
    await expect(engine.start('new')).resolves.toBe('creating');
    await until(() => row('new').state === 'started');
    expect(store.history.map((h) => h.state)).toEqual([
      'creating',
      'stopped',
      'starting',
      'started',
    ]);
  });

  it('queues a start asked while the disk creation is still ending (its lease given back)', async () => {
    await engine.close();
    let leaseGone: () => void = () => undefined;
    engine = engineWith({
      // the disk is made (the row says stopped) before the lease is given back
      exclusive: async (_key, make) => {
        await make();
        await new Promise<void>((resolve) => (leaseGone = resolve));
        return true;
      },
    });
    const disk = join(dir, 'disks', 'new.qcow2');
    writeFileSync(disk, '');
    store.add({ id: 'new', state: 'creating', disk_path: disk });
    const creating = engine.createDisk('new');
    await until(() => row('new').state === 'stopped');
    await expect(engine.start('new')).resolves.toBe('starting');
    leaseGone();
    await creating;
    await until(() => row('new').state === 'started');
  });

  it('retry on a failed desktop verifies the disk and ends stopped', async () => {
    withDisk('d1');
    row('d1').state = 'failed';
    await driver
      .prepareDisk({ path: join(dir, 'disks', 'd1.qcow2'), backingFile: '/tpl.qcow2' })
      .catch(() => undefined);
    await expect(engine.retry('d1')).resolves.toBe('stopped');
  });
});
