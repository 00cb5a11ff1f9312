/**
 * In-memory Hypervisor FOR UNIT TESTS OF THE DESKTOP STATE MACHINE ONLY.
 *
 * No process, no file, no port is real: "disks" live in a Map, "domains" are records, ports are
 * counters, screenshots are generated solid-colour PNGs. It follows the same contract as the QEMU
 * driver (errors, events, idempotent stop, adopt) so the lifecycle code can be tested fast and
 * deterministically, and it adds hooks to inject what real QEMU does on its own:
 * `crash(id)`, `guestPowerOff(id)`, `failNextStart(msg)`, `startDelayMs`, `honourPowerdown`.
 * Never wire it in production: real desktops need `createQemuDriver`.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { validateSpec } from './qemu-command.ts';
import { encodePng } from './png.ts';
import {
  HypervisorError,
  type Accel,
  type AdoptResult,
  type ConvertDiskOptions,
  type DiskInfo,
  type DomainRunState,
  type DomainRuntime,
  type DomainSpec,
  type DomainStatus,
  type ExitInfo,
  type Hypervisor,
  type HypervisorEvents,
  type PrepareDiskOptions,
  type StateChangeDetail,
} from './types.ts';

export interface FakeDriverOptions {
  accel?: Accel;
  /** Artificial start latency. Default 0. */
  startDelayMs?: number;
  /** When true, `shutdown()` makes the guest power off (after `powerdownDelayMs`). Default true. */
  honourPowerdown?: boolean;
  powerdownDelayMs?: number;
  /** Pretend these files exist (isos, floppies, templates). Default: every path exists. */
  fileExists?: (file: string) => boolean;
}

interface FakeDomain {
  runtime: DomainRuntime;
  spec: DomainSpec;
  state: DomainRunState;
  passwords: { vnc: string; spice: string };
}

/** The fake driver, with its test hooks. */
export interface FakeHypervisor extends Hypervisor {
  /** Simulate a crash / outside kill: the domain ends with `expected: false`. */
  crash(id: string, reason?: string): void;
  /** Simulate the guest powering itself off (`expected: true`). */
  guestPowerOff(id: string): void;
  /** Make the next start reject with `start_failed`. */
  failNextStart(message: string): void;
  /** The spec and current passwords of a running domain. */
  inspect(id: string): { spec: DomainSpec; passwords: { vnc: string; spice: string } } | undefined;
  /** Disk paths currently "on disk". */
  disks(): string[];
  /** Running domains (read-only view, for assertions). */
  readonly domains: ReadonlyMap<string, unknown>;
  /** While true, `ping()` rejects as a host that does not answer. */
  unreachable: boolean;
  /** `ping()` answers this late (a busy host). */
  pingDelayMs: number;
}

export function createFakeDriver(options: FakeDriverOptions = {}): FakeHypervisor {
  return new FakeDriver(options);
}

class FakeDriver extends EventEmitter implements FakeHypervisor {
  readonly kind = 'fake';
  readonly accel: Accel;
  private readonly diskMap = new Map<string, DiskInfo>();
  private readonly domainMap = new Map<string, FakeDomain>();
  private readonly exits = new Map<string, ExitInfo>();
  private readonly starting = new Set<string>();
  private nextPort = 0;
  private nextPid = 100_000;
  private pendingFailure: string | undefined;
  unreachable = false;
  pingDelayMs = 0;

  constructor(private readonly options: FakeDriverOptions) {
    super();
    this.accel = options.accel ?? 'tcg';
  }

  get domains(): ReadonlyMap<string, unknown> {
    return this.domainMap;
  }

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

  private exists(file: string): boolean {
    return this.diskMap.has(path.resolve(file)) || (this.options.fileExists ?? (() => true))(file);
  }

  async prepareDisk(opts: PrepareDiskOptions): Promise<DiskInfo> {
    const file = path.resolve(opts.path);
    if (this.diskMap.has(file))
      throw new HypervisorError('disk_exists', `disk ${file} already exists`);
    let virtualSize: number;
    if (opts.backingFile) {
      if (!this.exists(opts.backingFile))
        throw new HypervisorError('disk_not_found', `backing file ${opts.backingFile} not found`);
      const base = this.diskMap.get(path.resolve(opts.backingFile));
      virtualSize =
        opts.sizeGiB !== undefined ? opts.sizeGiB * 2 ** 30 : (base?.virtualSize ?? 5_081_088);
    } else {
      if (opts.sizeGiB === undefined)
        throw new HypervisorError('invalid_spec', 'prepareDisk needs backingFile or sizeGiB');
      virtualSize = opts.sizeGiB * 2 ** 30;
    }
    const info: DiskInfo = {
      virtualSize,
      actualSize: 196_608,
      backingFile: opts.backingFile ? path.resolve(opts.backingFile) : null,
    };
    this.diskMap.set(file, info);
    return { ...info };
  }

  private diskInUse(file: string): boolean {
    const abs = path.resolve(file);
    return [...this.domainMap.values()].some(
      (d) => d.spec.diskPath && path.resolve(d.spec.diskPath) === abs,
    );
  }

  async deleteDisk(file: string): Promise<void> {
    if (this.diskInUse(file))
      throw new HypervisorError('already_running', `disk ${file} is used by a running domain`);
    this.diskMap.delete(path.resolve(file));
  }

  async diskInfo(file: string): Promise<DiskInfo> {
    const info = this.diskMap.get(path.resolve(file));
    if (!info) throw new HypervisorError('disk_not_found', `disk ${file} not found`);
    return { ...info };
  }

  async resizeDisk(file: string, sizeGiB: number): Promise<DiskInfo> {
    const info = this.diskMap.get(path.resolve(file));
    if (!info) throw new HypervisorError('disk_not_found', `disk ${file} not found`);
    if (this.diskInUse(file))
      throw new HypervisorError('already_running', `disk ${file} is used by a running domain`);
    const size = sizeGiB * 2 ** 30;
    if (size < info.virtualSize)
      throw new HypervisorError('command_failed', 'shrinking is not supported');
    info.virtualSize = size;
    return { ...info };
  }

  async convertDisk(opts: ConvertDiskOptions): Promise<DiskInfo> {
    const source = path.resolve(opts.source);
    const target = path.resolve(opts.target);
    if (!this.exists(source))
      throw new HypervisorError('disk_not_found', `disk ${source} not found`);
    if (this.diskMap.has(target))
      throw new HypervisorError('disk_exists', `disk ${target} already exists`);
    if (this.diskInUse(source))
      throw new HypervisorError('already_running', `disk ${source} is used by a running domain`);
    if (opts.signal?.aborted)
      throw new HypervisorError('command_failed', 'qemu-img convert failed: aborted');
    const base = this.diskMap.get(source);
    opts.onProgress?.(0);
    opts.onProgress?.(100);
    const info: DiskInfo = {
      virtualSize: base?.virtualSize ?? 5_081_088,
      actualSize: base?.actualSize ?? 196_608,
      backingFile: null,
    };
    this.diskMap.set(target, info);
    return { ...info };
  }

  async start(spec: DomainSpec): Promise<DomainRuntime> {
    validateSpec(spec);
    if (this.domainMap.has(spec.id) || this.starting.has(spec.id))
      throw new HypervisorError('already_running', `domain ${spec.id} is already running`);
    for (const file of [spec.diskPath, ...spec.hardware.isos, ...spec.hardware.floppies]) {
      if (file && !this.exists(file))
        throw new HypervisorError('invalid_spec', `file not found: ${file}`);
    }
    this.starting.add(spec.id);
    try {
      if (this.options.startDelayMs)
        await new Promise((r) => setTimeout(r, this.options.startDelayMs));
      if (this.pendingFailure !== undefined) {
        const message = this.pendingFailure;
        this.pendingFailure = undefined;
        throw new HypervisorError('start_failed', message);
      }
      const n = this.nextPort++;
      const runtime: DomainRuntime = {
        id: spec.id,
        name: spec.name,
        pid: this.nextPid++,
        vncPort: 5900 + n,
        spicePort: 15900 + n,
        spiceTls: false,
        qmpPath: `/fake/run/${spec.id}/qmp.sock`,
        runDir: `/fake/run/${spec.id}`,
        startedAt: new Date().toISOString(),
        accel: this.accel,
      };
      this.domainMap.set(spec.id, {
        runtime,
        spec: structuredClone(spec),
        state: 'running',
        passwords: { vnc: spec.vncPassword, spice: spec.spicePassword },
      });
      this.exits.delete(spec.id);
      return { ...runtime };
    } finally {
      this.starting.delete(spec.id);
    }
  }

  private domain(id: string): FakeDomain {
    const d = this.domainMap.get(id);
    if (!d) throw new HypervisorError('not_running', `domain ${id} is not running`);
    return d;
  }

  private setState(id: string, d: FakeDomain, state: DomainRunState, detail: StateChangeDetail) {
    d.state = state;
    queueMicrotask(() => this.emitTyped('state', id, state, detail));
  }

  private end(id: string, info: Omit<ExitInfo, 'at'>) {
    const d = this.domainMap.get(id);
    if (!d) return;
    this.domainMap.delete(id);
    const full: ExitInfo = { ...info, at: new Date().toISOString() };
    this.exits.set(id, full);
    this.emitTyped('exit', id, full);
  }

  async shutdown(id: string): Promise<void> {
    const d = this.domain(id);
    this.setState(id, d, d.state, { event: 'POWERDOWN' });
    if (this.options.honourPowerdown ?? true) {
      setTimeout(() => this.guestPowerOff(id), this.options.powerdownDelayMs ?? 0);
    }
  }

  async stop(id: string): Promise<void> {
    if (!this.domainMap.has(id)) return;
    this.end(id, { code: 0, signal: null, reason: 'stopped by the portal', expected: true });
  }

  async reset(id: string): Promise<void> {
    const d = this.domain(id);
    this.setState(id, d, d.state, {
      event: 'RESET',
      guest: false,
      reason: 'host-qmp-system-reset',
    });
  }

  async pause(id: string): Promise<void> {
    const d = this.domain(id);
    if (d.state !== 'paused') this.setState(id, d, 'paused', { event: 'STOP' });
  }

  async resume(id: string): Promise<void> {
    const d = this.domain(id);
    if (d.state !== 'running') this.setState(id, d, 'running', { event: 'RESUME' });
  }

  async status(id: string): Promise<DomainStatus> {
    return this.domainMap.get(id)?.state ?? 'absent';
  }

  async screenshot(id: string): Promise<Buffer> {
    const d = this.domain(id);
    if (d.spec.hardware.video === 'none') throw new HypervisorError('qmp_error', 'no display');
    // a 64x40 grey frame with a lighter band, so it is not "blank"
    const w = 64;
    const h = 40;
    const pixels = Buffer.alloc(w * h * 3, 0x20);
    pixels.fill(0xc0, w * 3 * 10, w * 3 * 14);
    return encodePng(w, h, pixels);
  }

  async setPasswords(id: string, passwords: { vnc?: string; spice?: string }): Promise<void> {
    const d = this.domain(id);
    if (passwords.vnc !== undefined) d.passwords.vnc = passwords.vnc;
    if (passwords.spice !== undefined) d.passwords.spice = passwords.spice;
  }

  async list(): Promise<DomainRuntime[]> {
    return [...this.domainMap.values()].map((d) => ({ ...d.runtime }));
  }

  get(id: string): DomainRuntime | undefined {
    const d = this.domainMap.get(id);
    return d ? { ...d.runtime } : undefined;
  }

  async lastExit(id: string): Promise<ExitInfo | undefined> {
    return this.exits.get(id);
  }

  async adopt(): Promise<AdoptResult> {
    return { adopted: await this.list(), dead: [] };
  }

  async ping(): Promise<void> {
    if (this.pingDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pingDelayMs));
    if (this.unreachable) throw new HypervisorError('command_failed', 'the host does not answer');
  }

  async close(): Promise<void> {
    this.removeAllListeners();
  }

  crash(
    id: string,
    reason = 'the QEMU process disappeared (killed from outside or crashed)',
  ): void {
    this.end(id, { code: null, signal: 'SIGKILL', reason, expected: false });
  }

  guestPowerOff(id: string): void {
    const d = this.domainMap.get(id);
    if (!d) return;
    d.state = 'shutdown';
    this.emitTyped('state', id, 'shutdown', {
      event: 'SHUTDOWN',
      guest: true,
      reason: 'guest-shutdown',
    });
    this.end(id, { code: 0, signal: null, reason: 'the guest powered off', expected: true });
  }

  failNextStart(message: string): void {
    this.pendingFailure = message;
  }

  inspect(id: string) {
    const d = this.domainMap.get(id);
    return d ? { spec: structuredClone(d.spec), passwords: { ...d.passwords } } : undefined;
  }

  disks(): string[] {
    return [...this.diskMap.keys()];
  }
}
