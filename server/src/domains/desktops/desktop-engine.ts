/**
 * The desktop engine: the desktops' state machine on top of a hypervisor driver.
 *
 * - Every transition is an atomic conditional update in the store (so two clicks or two server
 *   nodes never start one desktop twice) that bumps the version and pushes the socket event.
 * - Long work (starting a VM, creating a disk) runs after the intent is committed, in a bounded
 *   start queue whose positions are pushed to the cards.
 * - The reconciler (at boot and on a timer) settles every transitional state against what the
 *   driver runs: nothing stays transitional forever, and a QEMU that dies becomes `failed`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../platform/http/api-error.ts';
import type { DesktopState } from '../../../../src/generated/types.ts';
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import type { ExitInfo, Hypervisor } from '../../platform/hypervisor/types.ts';
import type {
  DesktopEngineOptions,
  DesktopStore,
  EngineDesktop,
  EngineLogger,
  StartGate,
} from './types.ts';
import {
  createDiskNow,
  diskUsage,
  recreateDisk,
  verifyDisk,
  type DiskParts,
} from './desktop-disks.ts';
import { reconcileRows, settleExit } from './desktop-reconcile.ts';
import { bootDesktop, type BootParts } from './desktop-boot.ts';
import { resetDesktop } from './desktop-reset.ts';
import { stopDesktop } from './desktop-stop.ts';
import { startPlacer, type StartPlacer } from './desktop-placement.ts';
import { startPasswords } from './domain-spec.ts';
import { desktopStates, inSet } from '../../../../src/generated/policy.ts';

export class DesktopEngine {
  private readonly store: DesktopStore;
  private readonly driver: Hypervisor;
  private readonly idle: IdleManager | undefined;
  private readonly dataDir: string;
  private readonly log: EngineLogger;
  private readonly shutdownTimeoutMs: number;
  private readonly startConcurrency: number;
  private readonly reconcileMs: number;
  private readonly transitionalLimitMs: number;
  private readonly queue: string[] = [];
  /** Desktops whose boot runs now. */
  private readonly booting = new Set<string>();
  /** Desktops whose disk this process makes now (they take a start slot too). */
  private readonly creatingDisks = new Set<string>();
  private readonly shutdownTimers = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private startGate: StartGate | undefined;
  private readonly exclusive: DesktopEngineOptions['exclusive'];
  private readonly reconciles: DesktopEngineOptions['reconciles'];
  private readonly placer: StartPlacer;
  private readonly vncReady: DesktopEngineOptions['vncReady'];
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly onExit = (id: string, info: ExitInfo) =>
    this.background(this.handleExit(id, info), 'exit handling failed', id);

  /**
   * Runs work after the request that asked for it answered: failures are logged (the desktop
   * itself records them as `failed`), and close() waits for what is still running.
   */
  background(work: Promise<unknown>, what: string, id?: string): void {
    const tracked = work
      .catch((err: unknown) => {
        if (!this.closed) this.log.error({ err, id }, what);
      })
      .finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }

  constructor(options: DesktopEngineOptions) {
    this.store = options.store;
    this.driver = options.driver;
    this.idle = options.idle;
    this.dataDir = options.dataDir;
    this.log = options.log;
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 60_000;
    this.startConcurrency = options.startConcurrency ?? 2;
    this.reconcileMs = options.reconcileMs ?? 5_000;
    this.transitionalLimitMs = options.transitionalLimitMs ?? 120_000;
    this.exclusive = options.exclusive;
    this.reconciles = options.reconciles;
    this.placer = startPlacer(options.place);
    this.vncReady = options.vncReady;
    this.driver.on('exit', this.onExit);
  }

  /** Sets the check every start passes first (see StartGate). */
  setStartGate(gate: StartGate): void {
    this.startGate = gate;
  }

  /** Disk path of a desktop (a host's volume when below `<dataDir>/hosts`: its host checks it). */
  diskPath(id: string): string {
    return join(this.dataDir, 'disks', `${id}.qcow2`);
  }

  /** Adopts running VMs, settles the database against them, and starts the reconcile timer. */
  async init(): Promise<void> {
    const { adopted, dead } = await this.driver.adopt();
    for (const d of dead) await this.handleExit(d.id, d.info);
    for (const runtime of adopted) {
      const desktop = await this.store.get(runtime.id);
      const status = await this.driver.status(runtime.id);
      this.idle?.adopted(runtime.id, {
        idlePaused: status === 'paused' && desktop?.state === 'started',
      });
    }
    await this.reconcile();
    this.timer = setInterval(
      () => this.background(this.reconcile(), 'reconcile failed'),
      this.reconcileMs,
    );
    this.timer.unref();
  }

  /** Stops timers, lets running work finish (≤ 10 s), detaches from the driver (QEMU processes keep running). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    for (const t of this.shutdownTimers.values()) clearTimeout(t);
    this.shutdownTimers.clear();
    this.queue.length = 0;
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
    await Promise.race([Promise.allSettled([...this.inflight]), deadline]);
    this.driver.off('exit', this.onExit);
  }

  private async mustGet(id: string): Promise<EngineDesktop> {
    const desktop = await this.store.get(id);
    if (!desktop) throw new ApiError('not_found', 'Desktop not found', 'not_found');
    return desktop;
  }

  /** `GET /desktop/start/{id}`: stopped/failed → starting (queued) → started. Returns the state after the request. */
  async start(id: string): Promise<DesktopState> {
    const desktop = await this.mustGet(id);
    if (inSet(desktopStates.runningOrStarting, desktop.state)) return desktop.state;
    if (this.startGate) {
      await this.startGate(desktop);
      // Another start may have gone ahead while the gate was checked.
      const now = await this.mustGet(id);
      if (inSet(desktopStates.runningOrStarting, now.state)) return now.state;
    }
    if (desktop.state === 'notCreated') {
      // The card's "create" action: make the disk, then start.
      if (!(await this.store.update(id, { state: 'creating', detail: null }, ['notCreated'])))
        return (await this.mustGet(id)).state;
      this.background(this.createDisk(id, { startAfter: true }), 'disk creation failed', id);
      return 'creating';
    }
    if (!inSet(desktopStates.startable, desktop.state))
      throw new ApiError(
        'precondition_required',
        `Desktop can not be started from ${desktop.state}`,
        'unable_to_start_desktop_from',
        { state: desktop.state },
      );
    const diskPath = desktop.disk_path ?? this.diskPath(id);
    if (!diskPath.startsWith(join(this.dataDir, 'hosts')) && !existsSync(diskPath))
      throw new ApiError(
        'precondition_required',
        'Desktop storage is not ready',
        'desktop_storage_not_ready',
      );
    const updated = await this.placer(desktop, (host) =>
      this.store.update(
        id,
        { state: 'starting', detail: null, accessed: true, passwords: startPasswords(), ...host },
        desktopStates.startable,
      ),
    );
    if (!updated) return (await this.mustGet(id)).state;
    // Never a second boot of one desktop (it would fail it): the reconciler may have queued one.
    // A disk still being made (its creation's last step, or a create-then-start) does not stop
    // the boot from being queued: the row says stopped, so the disk is there.
    if (!this.bootPending(id)) this.queue.push(id);
    await this.pump(updated);
    return 'starting';
  }

  private async publishQueue(): Promise<void> {
    await Promise.all(
      this.queue.map((qid, index) =>
        this.store.update(qid, { queue: { position: index + 1, event: 'start_domain' } }, [
          'starting',
        ]),
      ),
    );
  }

  /** Whether a boot of the desktop is queued or running. */
  private readonly bootPending = (id: string) => this.booting.has(id) || this.queue.includes(id);

  /** Whether a boot of the desktop (or its disk's creation) is queued or running. */
  private readonly isBusy = (id: string) => this.bootPending(id) || this.creatingDisks.has(id);

  /** Boots what the queue lets run; `fresh`: a row just written `starting` (not read again). */
  private async pump(fresh?: EngineDesktop): Promise<void> {
    if (this.closed) return;
    while (
      this.booting.size + this.creatingDisks.size < this.startConcurrency &&
      this.queue.length > 0
    ) {
      const id = this.queue.shift();
      if (id === undefined) break;
      this.booting.add(id);
      this.background(
        bootDesktop(this.bootParts(), id, fresh?.id === id ? fresh : undefined).finally(() => {
          this.booting.delete(id);
          if (!this.closed) this.background(this.pump(), 'start queue failed');
        }),
        'start failed',
        id,
      );
    }
    await this.publishQueue();
  }

  /** `GET /desktop/stop/{id}`: started → shutting-down (ACPI); shutting-down → stopping (forced); paused → stopped. */
  stop(id: string): Promise<DesktopState> {
    return stopDesktop(
      {
        store: this.store,
        driver: this.driver,
        idle: this.idle,
        log: this.log,
        mustGet: (d) => this.mustGet(d),
        unqueue: (d) => {
          const i = this.queue.indexOf(d);
          if (i >= 0) this.queue.splice(i, 1);
        },
        forceStop: (d, from) => this.forceStop(d, from),
        armShutdownTimer: (d) => this.armShutdownTimer(d),
      },
      id,
    );
  }

  private armShutdownTimer(id: string): void {
    clearTimeout(this.shutdownTimers.get(id));
    const t = setTimeout(() => {
      this.shutdownTimers.delete(id);
      this.background(
        this.forceStop(id, ['shutting-down']),
        'forced stop after timeout failed',
        id,
      );
    }, this.shutdownTimeoutMs);
    t.unref();
    this.shutdownTimers.set(id, t);
  }

  /** Forced stop: state → stopping, kill the VM; the driver's exit event settles `stopped`. */
  private async forceStop(id: string, from: readonly DesktopState[]): Promise<void> {
    clearTimeout(this.shutdownTimers.get(id));
    this.shutdownTimers.delete(id);
    const updated = await this.store.update(id, { state: 'stopping', queue: null }, from);
    if (!updated) return;
    await this.driver.stop(id);
    // The exit listener normally settles this; make sure even without a running process.
    await this.store.update(id, { state: 'stopped', runtime: null, detail: null }, ['stopping']);
  }

  /** Reset (hard reboot) of a started desktop. */
  async reset(id: string): Promise<DesktopState> {
    return resetDesktop(await this.mustGet(id), this.driver);
  }

  /** `GET /desktop/updating/{id}` ("retry" on failed): verify the disk, then stopped or failed again. */
  retry(id: string): Promise<DesktopState> {
    return verifyDisk(this.diskParts(), id);
  }

  /**
   * Creates the disk of a desktop in `creating` (overlay on its template) → stopped, or failed;
   * under the desktop's lease, so no two nodes make one disk. Answers false when another process
   * is making it now (true when this one is, in another call).
   */
  async createDisk(id: string, options: { startAfter?: boolean } = {}): Promise<boolean> {
    if (this.creatingDisks.has(id)) return true;
    this.creatingDisks.add(id);
    try {
      const make = () => createDiskNow(this.diskParts(), id, options);
      if (this.exclusive) return await this.exclusive(`desktop-disk:${id}`, make);
      await make();
      return true;
    } finally {
      this.creatingDisks.delete(id);
      // its start slot is free: a queued boot may go
      if (!this.closed) this.background(this.pump(), 'start queue failed');
    }
  }

  /** Stops the VM if any (forced) and, when asked, deletes the disk. Used by delete and recycle. */
  async destroy(id: string, options: { deleteDisk: boolean }): Promise<void> {
    const i = this.queue.indexOf(id);
    if (i >= 0) this.queue.splice(i, 1);
    clearTimeout(this.shutdownTimers.get(id));
    if ((await this.driver.status(id)) !== 'absent') await this.driver.stop(id);
    if (options.deleteDisk)
      await this.driver.deleteDisk((await this.store.get(id))?.disk_path ?? this.diskPath(id));
  }

  /** Deletes a disk file (recycle-bin purge). */
  async deleteDisk(path: string): Promise<void> {
    await this.driver.deleteDisk(path);
  }

  /** Bytes a disk file takes on the host (0 when it is gone). */
  diskUsage(path: string): Promise<number> {
    return diskUsage(this.driver, path);
  }

  /** Replaces a stopped desktop's disk with a fresh overlay on its template's disk. */
  recreateDisk(id: string, backingFile: string): Promise<void> {
    return recreateDisk(this.diskParts(), id, backingFile);
  }

  /** What booting a queued desktop uses. */
  private bootParts(): BootParts {
    return {
      store: this.store,
      driver: this.driver,
      idle: this.idle,
      log: this.log,
      diskPath: (id) => this.diskPath(id),
      vncReady: this.vncReady,
    };
  }

  /** What the disk operations use. */
  private diskParts(): DiskParts {
    return {
      store: this.store,
      driver: this.driver,
      log: this.log,
      diskPath: (id) => this.diskPath(id),
      mustGet: (id) => this.mustGet(id),
      start: (id) => this.start(id),
    };
  }

  /** A VM ended: its desktop is `stopped` when that was meant, `failed` with the reason otherwise. */
  private async handleExit(id: string, info: ExitInfo): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.shutdownTimers.get(id));
    this.shutdownTimers.delete(id);
    await settleExit(this.store, id, info);
  }

  /**
   * Settles every row this process reconciles (all of them on one node) whose state disagrees
   * with the hypervisor. Safe to run any time.
   */
  async reconcile(): Promise<void> {
    const reconciles = this.reconciles ? await this.reconciles() : () => true;
    return reconcileRows({
      reconciles,
      store: this.store,
      driver: this.driver,
      shutdownTimeoutMs: this.shutdownTimeoutMs,
      transitionalLimitMs: this.transitionalLimitMs,
      isBusy: this.isBusy,
      requeue: async (id) => {
        if (!this.bootPending(id)) this.queue.push(id);
        await this.pump();
      },
      hasShutdownTimer: (id) => this.shutdownTimers.has(id),
      armShutdownTimer: (id) => this.armShutdownTimer(id),
      forceStop: (id, from) => this.forceStop(id, from),
      createDiskInBackground: (id) =>
        this.background(this.createDisk(id), 'disk creation failed', id),
    });
  }
}
