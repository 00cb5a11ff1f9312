/**
 * The QEMU driver: one detached `qemu-system-x86_64` per running domain, controlled over QMP.
 *
 * Every start owns `<dataDir>/run/<id>/` (see `qemu-run-dir.ts` for its files). QEMU survives a
 * server restart; `adopt()` re-attaches to it (`qemu-adopt.ts`). Exits are detected through the
 * child `exit` event (processes this instance spawned) and by polling the pid every second (adopted
 * ones, and as a safety net); the QMP socket closing triggers an immediate check.
 *
 * The driver's concerns, one file each: disk images (`disk-images.ts`, qemu-img, shared by any
 * qcow2 driver), host processes (`host-process.ts`), the QEMU command line (`qemu-command.ts`),
 * spawning a start (`qemu-spawn.ts`, retried on other ports up to 3 times when a port was taken),
 * the running domains, their QMP connections and end detection (`qemu-domains.ts`), the monitor of
 * one domain and what its events mean (`qemu-monitor.ts`), adoption and screenshots. A second
 * driver (libvirt) sits beside these files and shares the driver-neutral ones.
 */
import { EventEmitter } from 'node:events';
import { promises as fsp, existsSync } from 'node:fs';
import path from 'node:path';
import { DiskImages } from './disk-images.ts';
import { errorMessage, isPidAlive, isRecord, sleep } from './host-process.ts';
import { adoptRunDirs } from './qemu-adopt.ts';
import { validateSpec } from './qemu-command.ts';
import { QemuDomains } from './qemu-domains.ts';
import { mapQmpStatus } from './qemu-monitor.ts';
import { cleanRunDir, pidServes, publicRuntime, readExit, readRuntime } from './qemu-run-dir.ts';
import { takeScreenshot } from './qemu-screenshots.ts';
import { RetryablePortError, spawnQemu } from './qemu-spawn.ts';
import { spiceCertificatesDir } from './spice-pki.ts';
import type { HostNetworks } from './host-networks.ts';
import { spawnWithCards } from './qemu-cards.ts';
import { createPortAllocator, type PortAllocator, type PortRange } from './port-allocator.ts';
import {
  DOMAIN_ID_PATTERN,
  HypervisorError,
  type Accel,
  type AdoptResult,
  type ConvertDiskOptions,
  type DiskInfo,
  type DomainRuntime,
  type DomainSpec,
  type DomainStatus,
  type ExitInfo,
  type Hypervisor,
  type HypervisorEvents,
  type PrepareDiskOptions,
} from './types.ts';

export {
  buildQemuArgs,
  bootOrderLetters,
  validateSpec,
  escapeOptionValue,
  type QemuLaunchContext,
} from './qemu-command.ts';
export { isPidAlive, logTail } from './host-process.ts';

export interface QemuDriverOptions {
  /** DATA_DIR; run directories go to `<dataDir>/run/<id>/`. */
  dataDir: string;
  /** Accelerator for new starts. Default `tcg`. */
  accel?: Accel;
  /** Default `qemu-system-x86_64`. */
  qemuBinary?: string;
  /** Default `qemu-img`. */
  qemuImg?: string;
  /** VNC ports (>= 5900). Default 5900-6899. */
  vncPorts?: PortRange;
  /** SPICE ports. Default 15900-16899. */
  spicePorts?: PortRange;
  /** Pid poll period in ms (exit detection for adopted domains). Default 1000. */
  pollMs?: number;
  /** Enable QEMU's seccomp sandbox (`-sandbox on,...`). Default true. */
  sandbox?: boolean;
  /** How long a start may take to answer on QMP. Default 15000. */
  startTimeoutMs?: number;
  /**
   * SPICE over TLS with the portal's certificates (`<dataDir>/pki/spice/`, created with `openssl`
   * at the first start). Default true.
   */
  spiceTls?: boolean;
  /** The host side of the desktops' networks; without it a domain gets no network card. */
  network?: HostNetworks;
}

/** Create the QEMU driver. See the module comment for the files it keeps. */
export function createQemuDriver(options: QemuDriverOptions): Hypervisor {
  return new QemuDriver(options);
}

class QemuDriver extends EventEmitter implements Hypervisor {
  readonly kind = 'qemu';
  readonly accel: Accel;
  private readonly dataDir: string;
  private readonly runRoot: string;
  private readonly qemuBinary: string;
  private readonly disks: DiskImages;
  private readonly vncPorts: PortAllocator;
  private readonly spicePorts: PortAllocator;
  private readonly sandbox: boolean;
  private readonly startTimeoutMs: number;
  private readonly spiceTls: boolean;
  private readonly starting = new Set<string>();
  private readonly domains: QemuDomains;
  private readonly network: HostNetworks | undefined;

  constructor(options: QemuDriverOptions) {
    super();
    this.network = options.network;
    this.dataDir = path.resolve(options.dataDir);
    this.runRoot = path.join(this.dataDir, 'run');
    this.accel = options.accel ?? 'tcg';
    this.qemuBinary = options.qemuBinary ?? 'qemu-system-x86_64';
    this.disks = new DiskImages(options.qemuImg ?? 'qemu-img', (file) => this.diskInUse(file));
    this.vncPorts = createPortAllocator(options.vncPorts ?? { from: 5900, to: 6899 });
    this.spicePorts = createPortAllocator(options.spicePorts ?? { from: 15900, to: 16899 });
    this.sandbox = options.sandbox ?? true;
    this.startTimeoutMs = options.startTimeoutMs ?? 15_000;
    this.spiceTls = options.spiceTls ?? true;
    this.domains = new QemuDomains(
      { vnc: this.vncPorts, spice: this.spicePorts },
      (event, ...args) => this.emitTyped(event, ...args),
      options.pollMs ?? 1000,
    );
    super.on('exit', (id: string) => void this.network?.release(id));
  }

  // typed EventEmitter surface
  override on<E extends keyof HypervisorEvents>(
    event: E,
    listener: (...args: HypervisorEvents[E]) => void,
  ): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }
  override off<E extends keyof HypervisorEvents>(
    event: E,
    listener: (...args: HypervisorEvents[E]) => void,
  ): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }
  private emitTyped<E extends keyof HypervisorEvents>(
    event: E,
    ...args: HypervisorEvents[E]
  ): void {
    this.emit(event, ...args);
  }

  private runDirOf(id: string): string {
    if (!DOMAIN_ID_PATTERN.test(id))
      throw new HypervisorError('invalid_spec', `invalid domain id ${JSON.stringify(id)}`);
    return path.join(this.runRoot, id);
  }

  // ---------------------------------------------------------------- disks
  private diskInUse(file: string): boolean {
    const abs = path.resolve(file);
    for (const m of this.domains.values()) if (m.runtime.diskPath === abs) return true;
    return false;
  }

  prepareDisk(opts: PrepareDiskOptions): Promise<DiskInfo> {
    return this.disks.prepareDisk(opts);
  }

  deleteDisk(file: string): Promise<void> {
    return this.disks.deleteDisk(file);
  }

  diskInfo(file: string): Promise<DiskInfo> {
    return this.disks.diskInfo(file);
  }

  resizeDisk(file: string, sizeGiB: number): Promise<DiskInfo> {
    return this.disks.resizeDisk(file, sizeGiB);
  }

  convertDisk(opts: ConvertDiskOptions): Promise<DiskInfo> {
    return this.disks.convertDisk(opts);
  }

  // ---------------------------------------------------------------- start
  async start(spec: DomainSpec): Promise<DomainRuntime> {
    if (this.domains.closed) throw new HypervisorError('start_failed', 'driver is closed');
    validateSpec(spec);
    const id = spec.id;
    if (this.domains.has(id) || this.starting.has(id))
      throw new HypervisorError('already_running', `domain ${id} is already running`);
    this.starting.add(id);
    try {
      for (const file of [spec.diskPath, ...spec.hardware.isos, ...spec.hardware.floppies]) {
        if (file && !existsSync(file))
          throw new HypervisorError('invalid_spec', `file not found: ${file}`);
      }
      const runDir = this.runDirOf(id);
      await fsp.mkdir(runDir, { recursive: true, mode: 0o700 });
      // a runtime.json with a live QEMU means a domain we have not adopted: refuse rather than double-start
      const previous = await readRuntime(runDir);
      if (previous && isPidAlive(previous.pid) && pidServes(previous.pid, previous.qmpPath)) {
        throw new HypervisorError(
          'already_running',
          `domain ${id} has a live QEMU (pid ${previous.pid}); call adopt()`,
        );
      }
      await cleanRunDir(runDir, false);
      let lastError: unknown;
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          return await spawnWithCards(
            this.network,
            spec,
            this.startTimeoutMs,
            (wired) => this.spawnOnce(wired, runDir),
            () => this.stop(id),
          );
        } catch (error) {
          lastError = error;
          if (!(error instanceof RetryablePortError)) break;
        }
      }
      await this.network?.release(id);
      if (!(lastError instanceof RetryablePortError)) throw lastError;
      throw new HypervisorError(
        'start_failed',
        `start of ${id} failed: ${errorMessage(lastError)}`,
        { cause: lastError },
      );
    } finally {
      this.starting.delete(id);
    }
  }

  private async spawnOnce(spec: DomainSpec, runDir: string): Promise<DomainRuntime> {
    const spiceX509Dir = this.spiceTls ? await spiceCertificatesDir(this.dataDir) : undefined;
    const { runtime, qmp, child, earlyExit } = await spawnQemu(
      {
        qemuBinary: this.qemuBinary,
        accel: this.accel,
        sandbox: this.sandbox,
        startTimeoutMs: this.startTimeoutMs,
        vncPorts: this.vncPorts,
        spicePorts: this.spicePorts,
        spiceX509Dir,
      },
      spec,
      runDir,
    );
    const monitor = this.domains.attach(runtime, qmp, 'running');
    monitor.child = child;
    child.removeAllListeners('exit');
    child.once('exit', (code, signal) => {
      void this.domains.finalize(monitor, { code, signal });
    });
    const ended = earlyExit();
    if (ended) void this.domains.finalize(monitor, ended);
    return publicRuntime(runtime);
  }

  // ---------------------------------------------------------------- power
  async shutdown(id: string): Promise<void> {
    await this.domains.command(id, 'system_powerdown');
  }

  async stop(id: string, options?: { timeoutMs?: number }): Promise<void> {
    const monitor = this.domains.get(id);
    if (!monitor || monitor.done) return;
    monitor.stopRequested = true;
    const timeoutMs = options?.timeoutMs ?? 5000;
    const qmp = monitor.qmp && !monitor.qmp.closed ? monitor.qmp : undefined;
    if (qmp) {
      try {
        await qmp.execute('quit', undefined, { timeoutMs: Math.min(timeoutMs, 2000) });
      } catch {
        /* the socket closing under us is the normal answer to quit */
      }
    }
    const first = await Promise.race([
      monitor.exited,
      sleep(qmp ? timeoutMs : 0).then(() => undefined),
    ]);
    if (first) return;
    const { pid, qmpPath } = monitor.runtime;
    if (isPidAlive(pid) && pidServes(pid, qmpPath)) {
      monitor.killed = true;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    const second = await Promise.race([monitor.exited, sleep(5000).then(() => undefined)]);
    if (!second) await this.domains.finalize(monitor, { code: null, signal: 'SIGKILL' });
  }

  async reset(id: string): Promise<void> {
    await this.domains.command(id, 'system_reset');
  }

  async pause(id: string): Promise<void> {
    await this.domains.command(id, 'stop');
    const monitor = this.domains.get(id);
    if (monitor) monitor.state = 'paused';
  }

  async resume(id: string): Promise<void> {
    await this.domains.command(id, 'cont');
    const monitor = this.domains.get(id);
    if (monitor) monitor.state = 'running';
  }

  async status(id: string): Promise<DomainStatus> {
    const monitor = this.domains.get(id);
    if (!monitor || monitor.done) return 'absent';
    if (monitor.state === 'shutdown') return 'shutdown';
    try {
      const result = await this.domains.command(id, 'query-status', undefined, 3000);
      if (isRecord(result) && typeof result.status === 'string') {
        monitor.state = mapQmpStatus(result.status);
        return monitor.state;
      }
      return monitor.state;
    } catch {
      if (monitor.done || !isPidAlive(monitor.runtime.pid)) return 'absent';
      return monitor.state;
    }
  }

  async screenshot(id: string): Promise<Buffer> {
    const monitor = this.domains.monitorOf(id);
    return takeScreenshot(monitor.runtime.runDir, ++monitor.screenshotSeq, (file) =>
      this.domains.command(id, 'screendump', { filename: file, format: 'png' }, 10_000),
    );
  }

  async setPasswords(
    id: string,
    passwords: { vnc?: string; spice?: string },
    options: { validForSeconds?: number } = {},
  ): Promise<void> {
    const { validForSeconds } = options;
    if (
      validForSeconds !== undefined &&
      !(Number.isInteger(validForSeconds) && validForSeconds > 0)
    )
      throw new HypervisorError('invalid_spec', 'validForSeconds must be a positive integer');
    // `never` resets an expiry an earlier call may have set.
    const time = validForSeconds === undefined ? 'never' : `+${validForSeconds}`;
    if (passwords.vnc !== undefined) {
      if (!passwords.vnc) throw new HypervisorError('invalid_spec', 'empty VNC password');
      await this.domains.command(id, 'set_password', { protocol: 'vnc', password: passwords.vnc });
      await this.domains.command(id, 'expire_password', { protocol: 'vnc', time });
    }
    if (passwords.spice !== undefined) {
      if (!passwords.spice) throw new HypervisorError('invalid_spec', 'empty SPICE password');
      await this.domains.command(id, 'set_password', {
        protocol: 'spice',
        password: passwords.spice,
      });
      await this.domains.command(id, 'expire_password', { protocol: 'spice', time });
    }
  }

  // ---------------------------------------------------------------- inventory
  async list(): Promise<DomainRuntime[]> {
    return [...this.domains.values()]
      .filter((m) => !m.done && isPidAlive(m.runtime.pid))
      .map((m) => publicRuntime(m.runtime));
  }

  get(id: string): DomainRuntime | undefined {
    const monitor = this.domains.get(id);
    return monitor && !monitor.done ? publicRuntime(monitor.runtime) : undefined;
  }

  lastExit(id: string): Promise<ExitInfo | undefined> {
    return readExit(this.runDirOf(id));
  }

  adopt(): Promise<AdoptResult> {
    return adoptRunDirs({
      runRoot: this.runRoot,
      isStarting: (id) => this.starting.has(id),
      monitorOf: (id) => this.domains.get(id),
      attach: (runtime, qmp, state) => this.domains.attach(runtime, qmp, state),
    });
  }

  /** The portal's own machine always answers. */
  ping = (): Promise<void> => Promise.resolve();

  async close(): Promise<void> {
    this.domains.close();
    this.removeAllListeners();
  }
}
