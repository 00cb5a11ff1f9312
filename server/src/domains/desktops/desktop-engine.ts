/**
 * The desktop engine: the desktops' state machine on top of a hypervisor driver.
 *
 * - Every transition is an atomic conditional update in the store (so two clicks or two server
 *   nodes never start one desktop twice) that bumps the version and pushes the socket event.
 * - Long work (starting a VM, creating a disk) runs after the intent is committed, in a bounded
 *   start queue whose positions are pushed to the cards.
 * - The reconciler (at boot and on a timer) settles every transitional state against what the
 *   driver really runs: nothing stays in `starting`, `stopping` or `shutting-down` forever, and a
 *   QEMU that dies becomes `failed` with the reason.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../platform/http/api-error.ts';
import type { DesktopState } from '../../../../src/generated/types.ts';
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import {
  HypervisorError,
  type BootDevice,
  type DiskBus,
  type DomainSpec,
  type ExitInfo,
  type Hypervisor,
  type VideoModel,
} from '../../platform/hypervisor/types.ts';
import type { DesktopStore, EngineDesktop } from './types.ts';

export interface EngineLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface DesktopEngineOptions {
  store: DesktopStore;
  driver: Hypervisor;
  idle?: IdleManager | undefined;
  dataDir: string;
  log: EngineLogger;
  /** A graceful shutdown not finished after this becomes a forced stop. Default 60 s. */
  shutdownTimeoutMs?: number;
  /** Starts running at once; the others wait with a queue position. Default 2. */
  startConcurrency?: number;
  /** Reconciler period. Default 5 s. */
  reconcileMs?: number;
  /** A row stuck in a transitional state longer than this is settled by the reconciler. Default 120 s. */
  transitionalLimitMs?: number;
}

/** States a desktop can be started from. */
const STARTABLE: readonly DesktopState[] = ['stopped', 'failed'];
/** States in which the desktop already runs or is about to (start returns them unchanged). */
const RUNNING_OR_STARTING: readonly DesktopState[] = ['started', 'starting', 'waitingip', 'reset'];
const TRANSITIONAL: readonly DesktopState[] = [
  'starting',
  'stopping',
  'shutting-down',
  'creating',
  'updating',
  'reset',
];

/**
 * A check every start passes first (the booking gate): it throws the refusal. A desktop that
 * already runs or is starting is not checked again.
 */
export type StartGate = (desktop: EngineDesktop) => Promise<void>;

const password = (bytes: number) => randomBytes(bytes).toString('base64url').slice(0, bytes);

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
  private readonly active = new Set<string>();
  private readonly shutdownTimers = new Map<string, NodeJS.Timeout>();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private startGate: StartGate | undefined;
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
    this.driver.on('exit', this.onExit);
  }

  /** Sets the check every start passes first (see StartGate). */
  setStartGate(gate: StartGate): void {
    this.startGate = gate;
  }

  /** Disk path of a desktop. */
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
    if (RUNNING_OR_STARTING.includes(desktop.state)) return desktop.state;
    if (this.startGate) {
      await this.startGate(desktop);
      // Another start may have gone ahead while the gate was checked.
      const now = await this.mustGet(id);
      if (RUNNING_OR_STARTING.includes(now.state)) return now.state;
    }
    if (desktop.state === 'notCreated') {
      // The card's "create" action: make the disk, then start.
      if (!(await this.store.update(id, { state: 'creating', detail: null }, ['notCreated'])))
        return (await this.mustGet(id)).state;
      this.background(this.createDisk(id, { startAfter: true }), 'disk creation failed', id);
      return 'creating';
    }
    if (!STARTABLE.includes(desktop.state))
      throw new ApiError(
        'precondition_required',
        `Desktop can not be started from ${desktop.state}`,
        'unable_to_start_desktop_from',
        { state: desktop.state },
      );
    const diskPath = desktop.disk_path ?? this.diskPath(id);
    if (!existsSync(diskPath))
      throw new ApiError(
        'precondition_required',
        'Desktop storage is not ready',
        'desktop_storage_not_ready',
      );
    const updated = await this.store.update(
      id,
      { state: 'starting', detail: null, accessed: true },
      STARTABLE,
    );
    if (!updated) return (await this.mustGet(id)).state;
    this.queue.push(id);
    await this.pump();
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

  private async pump(): Promise<void> {
    if (this.closed) return;
    while (this.active.size < this.startConcurrency && this.queue.length > 0) {
      const id = this.queue.shift();
      if (id === undefined) break;
      this.active.add(id);
      this.background(
        this.runStart(id).finally(() => {
          this.active.delete(id);
          if (!this.closed) this.background(this.pump(), 'start queue failed');
        }),
        'start failed',
        id,
      );
    }
    await this.publishQueue();
  }

  private async specOf(desktop: EngineDesktop): Promise<DomainSpec> {
    const hw = desktop.hardware;
    const mediaIds = [...(hw.isos ?? []), ...(hw.floppies ?? [])].map((m) => m.id);
    const paths = mediaIds.length
      ? await this.store.mediaPaths(mediaIds)
      : new Map<string, string>();
    const pathOf = (m: { id: string }) => {
      const p = paths.get(m.id);
      if (!p)
        throw new ApiError(
          'precondition_required',
          `Media ${m.id} is not available`,
          'media_invalid',
          { id: m.id },
        );
      return p;
    };
    const bus = hw.disk_bus && hw.disk_bus !== 'default' ? hw.disk_bus : 'virtio';
    const video = hw.videos?.[0];
    return {
      id: desktop.id,
      name: desktop.name,
      diskPath: desktop.disk_path ?? this.diskPath(desktop.id),
      hardware: {
        vcpus: hw.vcpus ?? 1,
        memoryMiB: Math.round((hw.memory ?? 1) * 1024),
        bootOrder: (hw.boot_order ?? ['disk']).filter((b): b is BootDevice =>
          ['disk', 'iso', 'floppy', 'pxe'].includes(b),
        ),
        diskBus: (['virtio', 'ide', 'sata'].includes(bus) ? bus : 'virtio') as DiskBus,
        video: (video && ['default', 'vga', 'virtio', 'none'].includes(video)
          ? video
          : 'default') as VideoModel,
        isos: (hw.isos ?? []).map(pathOf),
        floppies: (hw.floppies ?? []).map(pathOf),
      },
      vncPassword: password(8),
      spicePassword: password(16),
    };
  }

  private async runStart(id: string): Promise<void> {
    const desktop = await this.store.get(id);
    if (!desktop || desktop.state !== 'starting') return;
    try {
      const spec = await this.specOf(desktop);
      const rt = await this.driver.start(spec);
      const runtime = {
        pid: rt.pid,
        vncPort: rt.vncPort,
        spicePort: rt.spicePort,
        vncPassword: spec.vncPassword,
        spicePassword: spec.spicePassword,
        startedAt: rt.startedAt,
      };
      const started = await this.store.update(id, { state: 'started', runtime, queue: null }, [
        'starting',
      ]);
      if (!started) {
        // Stopped or deleted while starting: do not leave an orphan VM behind.
        await this.driver.stop(id).catch(() => undefined);
        return;
      }
      this.idle?.started(id);
    } catch (err) {
      const detail =
        err instanceof HypervisorError || err instanceof ApiError
          ? err.message
          : 'Unable to start the desktop';
      this.log.warn({ err, id }, 'desktop start failed');
      await this.store.update(id, { state: 'failed', detail, runtime: null, queue: null }, [
        'starting',
      ]);
    }
  }

  /** `GET /desktop/stop/{id}`: started → shutting-down (ACPI); shutting-down → stopping (forced); paused → stopped. */
  async stop(id: string): Promise<DesktopState> {
    const desktop = await this.mustGet(id);
    switch (desktop.state) {
      case 'stopped':
      case 'stopping':
      case 'failed':
        return desktop.state;
      case 'starting': {
        // Still queued or booting: cancel the start.
        const i = this.queue.indexOf(id);
        if (i >= 0) this.queue.splice(i, 1);
        await this.forceStop(id, ['starting']);
        return 'stopping';
      }
      case 'started':
      case 'waitingip':
      case 'reset': {
        const updated = await this.store.update(id, { state: 'shutting-down' }, [
          'started',
          'waitingip',
          'reset',
        ]);
        if (!updated) return (await this.mustGet(id)).state;
        await this.idle?.viewerAttached(id).catch(() => undefined); // a paused guest can't see the power button
        this.idle?.viewerDetached(id);
        await this.driver
          .shutdown(id)
          .catch((err: unknown) => this.log.warn({ err, id }, 'ACPI shutdown failed'));
        this.armShutdownTimer(id);
        return 'shutting-down';
      }
      case 'shutting-down':
        await this.forceStop(id, ['shutting-down']);
        return 'stopping';
      case 'paused':
        await this.forceStop(id, ['paused']);
        return 'stopping';
      default:
        throw new ApiError(
          'precondition_required',
          `Desktop can not be stopped from ${desktop.state}`,
          'unable_to_stop_desktop_from',
          { state: desktop.state },
        );
    }
  }

  private armShutdownTimer(id: string): void {
    clearTimeout(this.shutdownTimers.get(id));
    const t = setTimeout(() => {
      this.shutdownTimers.delete(id);
      this.background(
        this.forceStop(id, ['shutting-down']),
        'forced stop after shutdown timeout failed',
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
    const desktop = await this.mustGet(id);
    if (!['started', 'waitingip'].includes(desktop.state))
      throw new ApiError(
        'precondition_required',
        `Desktop can not be reset from ${desktop.state}`,
        'unable_to_reset_desktop_from',
        { state: desktop.state },
      );
    await this.driver.reset(id).catch((err: unknown) => {
      throw err instanceof HypervisorError && err.code === 'not_running'
        ? new ApiError('conflict', 'The desktop is not running', 'desktop_not_running', null)
        : new ApiError(
            'service_unavailable',
            'The hypervisor did not answer',
            'hypervisors_not_available',
          );
    });
    return desktop.state;
  }

  /** `GET /desktop/updating/{id}` ("retry" on failed): verify the disk, then stopped or failed again. */
  async retry(id: string): Promise<DesktopState> {
    const desktop = await this.mustGet(id);
    if (desktop.state !== 'failed') return desktop.state;
    if (!(await this.store.update(id, { state: 'updating' }, ['failed'])))
      return (await this.mustGet(id)).state;
    try {
      const path = desktop.disk_path ?? this.diskPath(id);
      if (!existsSync(path)) {
        if (!desktop.template_disk_path)
          throw new Error(
            'The desktop disk is missing and there is no template to recreate it from',
          );
        await this.driver.prepareDisk({ path, backingFile: desktop.template_disk_path });
      } else await this.driver.diskInfo(path);
      if ((await this.driver.status(id)) !== 'absent') await this.driver.stop(id);
      await this.store.update(
        id,
        { state: 'stopped', detail: null, runtime: null, disk_path: path },
        ['updating'],
      );
      return 'stopped';
    } catch (err) {
      await this.store.update(id, { state: 'failed', detail: (err as Error).message }, [
        'updating',
      ]);
      return 'failed';
    }
  }

  /** Creates the disk of a desktop in `creating` (overlay on its template) → stopped, or failed. */
  async createDisk(id: string, options: { startAfter?: boolean } = {}): Promise<void> {
    if (this.active.has(id)) return;
    this.active.add(id);
    try {
      await this.createDiskNow(id, options);
    } finally {
      this.active.delete(id);
    }
  }

  private async createDiskNow(id: string, options: { startAfter?: boolean }): Promise<void> {
    const desktop = await this.mustGet(id);
    const path = desktop.disk_path ?? this.diskPath(id);
    try {
      if (!existsSync(path)) {
        if (desktop.template_disk_path)
          await this.driver.prepareDisk({
            path,
            backingFile: desktop.template_disk_path,
            ...(desktop.hardware.disk_size ? { sizeGiB: desktop.hardware.disk_size } : {}),
          });
        else await this.driver.prepareDisk({ path, sizeGiB: desktop.hardware.disk_size ?? 1 });
      }
      const ready = await this.store.update(
        id,
        { state: 'stopped', disk_path: path, detail: null },
        ['creating'],
      );
      if (ready && options.startAfter) await this.start(id);
    } catch (err) {
      this.log.warn({ err, id }, 'disk creation failed');
      await this.store.update(id, { state: 'failed', detail: (err as Error).message }, [
        'creating',
      ]);
    }
  }

  /** Stops the VM if any (forced) and, when asked, deletes the disk. Used by delete and recycle. */
  async destroy(id: string, options: { deleteDisk: boolean }): Promise<void> {
    const i = this.queue.indexOf(id);
    if (i >= 0) this.queue.splice(i, 1);
    clearTimeout(this.shutdownTimers.get(id));
    if ((await this.driver.status(id)) !== 'absent') await this.driver.stop(id);
    if (options.deleteDisk) await this.driver.deleteDisk(this.diskPath(id));
  }

  /** Deletes a disk file (recycle-bin purge). */
  async deleteDisk(path: string): Promise<void> {
    await this.driver.deleteDisk(path);
  }

  /** Bytes a disk file takes on the host (0 when it is gone). */
  async diskUsage(path: string): Promise<number> {
    return this.driver
      .diskInfo(path)
      .then((info) => info.actualSize)
      .catch(() => 0);
  }

  /** Replaces a stopped desktop's disk with a fresh overlay on its template's disk. */
  async recreateDisk(id: string, backingFile: string): Promise<void> {
    const desktop = await this.mustGet(id);
    const path = desktop.disk_path ?? this.diskPath(id);
    await this.driver.deleteDisk(path);
    await this.driver.prepareDisk({ path, backingFile });
  }

  private async handleExit(id: string, info: ExitInfo): Promise<void> {
    if (this.closed) return;
    clearTimeout(this.shutdownTimers.get(id));
    this.shutdownTimers.delete(id);
    const desktop = await this.store.get(id);
    if (!desktop) return;
    if (
      ['stopping', 'shutting-down'].includes(desktop.state) ||
      (info.expected && desktop.state !== 'starting')
    ) {
      await this.store.update(id, { state: 'stopped', runtime: null, detail: null }, [
        'stopping',
        'shutting-down',
        'started',
        'waitingip',
        'reset',
        'paused',
      ]);
    } else if (['started', 'waitingip', 'reset', 'paused'].includes(desktop.state)) {
      await this.store.update(id, { state: 'failed', runtime: null, detail: info.reason }, [
        'started',
        'waitingip',
        'reset',
        'paused',
      ]);
    }
  }

  /** Settles every row whose state disagrees with the hypervisor. Safe to run any time. */
  async reconcile(): Promise<void> {
    const rows = await this.store.listInStates([...TRANSITIONAL, 'started', 'waitingip', 'paused']);
    const now = Date.now();
    for (const listed of rows) {
      if (this.active.has(listed.id) || this.queue.includes(listed.id)) continue;
      // The row as it is now: a start that finished since the list was read must not be taken
      // for an interrupted one (its VM would be stopped and the start lost).
      const d = await this.store.get(listed.id);
      if (!d || d.state !== listed.state || d.updated_at.getTime() !== listed.updated_at.getTime())
        continue;
      const status = await this.driver.status(d.id);
      const alive = status === 'running' || status === 'paused';
      const age = now - d.updated_at.getTime();
      switch (d.state) {
        case 'started':
        case 'waitingip':
        case 'paused':
        case 'reset':
          if (!alive) {
            const last = await this.driver.lastExit(d.id);
            await this.store.update(
              d.id,
              {
                state: 'failed',
                runtime: null,
                detail: last?.reason ?? 'The desktop process is gone',
              },
              [d.state],
            );
          }
          break;
        case 'starting':
          // Interrupted start (server restart): a live VM is started; otherwise start it again.
          if (alive && d.runtime)
            await this.store.update(d.id, { state: 'started', queue: null }, ['starting']);
          else if (alive) {
            await this.driver.stop(d.id).catch(() => undefined);
            this.queue.push(d.id);
            await this.pump();
          } else {
            this.queue.push(d.id);
            await this.pump();
          }
          break;
        case 'stopping':
          if (alive) await this.driver.stop(d.id).catch(() => undefined);
          await this.store.update(d.id, { state: 'stopped', runtime: null }, ['stopping']);
          break;
        case 'shutting-down':
          if (!alive)
            await this.store.update(d.id, { state: 'stopped', runtime: null }, ['shutting-down']);
          else if (!this.shutdownTimers.has(d.id)) {
            if (age > this.shutdownTimeoutMs) await this.forceStop(d.id, ['shutting-down']);
            else this.armShutdownTimer(d.id);
          }
          break;
        case 'creating':
          // Not being created by this process (new seed rows, or interrupted by a restart): create the disk.
          this.background(this.createDisk(d.id), 'disk creation failed', d.id);
          break;
        case 'updating':
          if (age > this.transitionalLimitMs)
            await this.store.update(
              d.id,
              { state: 'failed', detail: 'Verification was interrupted' },
              ['updating'],
            );
          break;
        default:
          break;
      }
    }
  }
}
