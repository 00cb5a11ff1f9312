/**
 * The libvirt driver: each started desktop is a transient libvirt domain (`virsh create`) on one
 * host, named `<prefix><id>`, reached by a libvirt URI (`qemu:///session`, `qemu:///system`,
 * `qemu+ssh://user@host/system`).
 *
 * How it talks to libvirt: through a long-lived interactive `virsh` per host (`virsh-session.ts`),
 * not a native binding. The npm bindings (`@unraid/libvirt`, `libvirt`) compile against libvirt's
 * headers with node-gyp: every fresh `npm ci` would then need `libvirt-dev`, a C++ toolchain and a
 * build, also where no libvirt host is used (the local QEMU driver stays the default). `virsh` is
 * in `libvirt-clients` on every distribution, speaks every URI libvirt does, and one interactive
 * process keeps one SSH connection open for all commands (about 1 ms a call on loopback instead of
 * a new SSH handshake per call).
 *
 * State: libvirt's lifecycle events, read from `virsh event --all --loop` (`libvirt-events.ts`);
 * the list of running domains is polled every `pollMs` as a safety net (an end missed while the
 * event stream was down). A `Stopped` event is checked against `domstate` before it ends a domain,
 * so the late event of a previous run never ends the next run of the same id
 * (`libvirt-domains.ts`). The domain XML is `libvirt-xml.ts`, adoption `libvirt-adopt.ts`.
 *
 * Disks: the host's storage pool (`libvirt-pool.ts`, `volumes`): a disk path in `volumeDir` names
 * the pool's volume of that file name, which the domain opens at its path on the host. Other disk
 * paths are qcow2 files made with `qemu-img` by the portal (`disk-images.ts`) that the host reaches
 * at the same path (the same machine, or a shared filesystem); `diskOwner` gives them to the
 * account a session daemon's QEMU runs as.
 *
 * The portal keeps `<dataDir>/run/<id>/runtime.json` while a domain runs and `exit.json` after it
 * ended (`lastExit`), so `adopt()` tells the domains that ended while the portal was down.
 * Passwords are never written there; the domain XML that carries them is a 0600 file removed once
 * libvirt read it.
 */
import { EventEmitter } from 'node:events';
import path from 'node:path';
import { DiskImages, giveDiskTo } from './disk-images.ts';
import { errorMessage } from './host-process.ts';
import { adoptDomains } from './libvirt-adopt.ts';
import { hostLabel, isDomainGone, LibvirtDomains, type LibvirtMonitor } from './libvirt-domains.ts';
import { LibvirtEventStream } from './libvirt-events.ts';
import { LibvirtPool } from './libvirt-pool.ts';
import { createDomain, HostNics } from './libvirt-start.ts';
import { takeScreenshot, updatePasswords, type ConsoleCommands } from './libvirt-consoles.ts';
import { validateSpec } from './qemu-command.ts';
import { publicRuntime, readExit } from './qemu-run-dir.ts';
import { VirshSession } from './virsh-session.ts';
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
  type HypervisorErrorCode,
  type HypervisorEvents,
  type PrepareDiskOptions,
} from './types.ts';

export interface LibvirtDriverOptions {
  /** Libvirt connection URI of the host. */
  uri: string;
  /** DATA_DIR; the portal's records of running domains go to `<dataDir>/run/<id>/`. */
  dataDir: string;
  /** Accelerator for new starts (`qemu` or `kvm` domain type). Default `tcg`. */
  accel?: Accel;
  /** Prefix of the domain names this driver owns on the host. Default `vdi-`. */
  domainPrefix?: string;
  /** Default `virsh`. */
  virsh?: string;
  /** Default `qemu-img`. */
  qemuImg?: string;
  /** Poll period of the running domains' list (ms). Default 2000. */
  pollMs?: number;
  /** How long `virsh create` may take (ms). Default 30000. */
  startTimeoutMs?: number;
  /** SPICE over TLS only: the host's `qemu.conf` must enable `spice_tls`. Default false. */
  spiceTls?: boolean;
  /** Owner given to the disk files the driver makes (the host's QEMU account). Default: unchanged. */
  diskOwner?: { uid: number; gid: number };
  /**
   * The host's console address: VNC and SPICE listen on it and the portal's console proxies
   * connect to it (the host as the portal reaches it). Default 127.0.0.1.
   */
  consoleAddress?: string;
  /** The host's storage pool (default `vdi`, made when missing; see `libvirt-pool.ts`). */
  pool?: { name?: string; path?: string };
  /** The portal's name for the pool's volumes: a disk path in this directory is a volume. */
  volumeDir?: string;
  /**
   * The bridge of each network by its id (read at each start that has cards): a card of a network
   * whose bridge the host has (`virsh iface-list --all`) is plugged into it, any other card is
   * user-mode. Absent: every card is user-mode.
   */
  bridges?: () => Promise<ReadonlyMap<string, string>>;
  /** Where the one-off line about a host that refused its bridges goes. */
  log?: (line: string) => void;
}

/** Create the libvirt driver. See the module comment. */
export function createLibvirtDriver(options: LibvirtDriverOptions): Hypervisor {
  return new LibvirtDriver(options);
}

class LibvirtDriver extends EventEmitter implements Hypervisor {
  readonly kind = 'libvirt';
  readonly accel: Accel;
  readonly volumes: LibvirtPool;
  private readonly host: string;
  private readonly runRoot: string;
  private readonly prefix: string;
  private readonly session: VirshSession;
  private readonly events: LibvirtEventStream;
  private readonly disks: DiskImages;
  private readonly startTimeoutMs: number;
  private readonly spiceTls: boolean;
  private readonly consoleAddress: string;
  private readonly diskOwner: { uid: number; gid: number } | undefined;
  private readonly domains: LibvirtDomains;
  private readonly starting = new Set<string>();
  private readonly nics: HostNics;
  private closed = false;

  constructor(options: LibvirtDriverOptions) {
    super();
    this.host = hostLabel(options.uri);
    this.runRoot = path.join(path.resolve(options.dataDir), 'run');
    this.accel = options.accel ?? 'tcg';
    this.prefix = options.domainPrefix ?? 'vdi-';
    this.session = new VirshSession({ uri: options.uri, virsh: options.virsh });
    this.volumes = new LibvirtPool({
      session: this.session,
      uri: options.uri,
      ...(options.virsh ? { virsh: options.virsh } : {}),
      ...options.pool,
      ...(options.volumeDir ? { portalDir: options.volumeDir } : {}),
    });
    this.events = new LibvirtEventStream({
      uri: options.uri,
      virsh: options.virsh,
      onEvent: (event) => this.domains.onEvent(event),
    });
    this.disks = new DiskImages(options.qemuImg ?? 'qemu-img', (file) => this.diskInUse(file));
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
    this.spiceTls = options.spiceTls ?? false;
    this.consoleAddress = options.consoleAddress ?? '127.0.0.1';
    this.diskOwner = options.diskOwner;
    this.nics = new HostNics(this.session, this.host, options.bridges, options.log);
    this.domains = new LibvirtDomains(
      this.session,
      this.prefix,
      this.host,
      (event, ...args) => this.emitTyped(event, ...args),
      options.pollMs ?? 2000,
    );
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
    if (!this.closed) this.emit(event, ...args);
  }

  private runDirOf(id: string): string {
    if (!DOMAIN_ID_PATTERN.test(id))
      throw new HypervisorError('invalid_spec', `invalid domain id ${JSON.stringify(id)}`);
    return path.join(this.runRoot, id);
  }

  /**
   * A virsh failure as a HypervisorError: a missing domain is `not_running`; anything else,
   * including a host that does not answer, is `code`.
   */
  private failure(error: unknown, code: HypervisorErrorCode, what: string): HypervisorError {
    if (error instanceof HypervisorError) return error;
    if (isDomainGone(error))
      return new HypervisorError('not_running', `${what}: ${errorMessage(error)}`, {
        cause: error,
      });
    return new HypervisorError(code, `${what}: ${errorMessage(error)}`, { cause: error });
  }

  /** Runs a command about a running domain; rejects `not_running` when it is not. */
  private async command(
    id: string,
    args: (name: string) => string[],
    timeoutMs?: number,
  ): Promise<{ monitor: LibvirtMonitor; output: string }> {
    const monitor = this.domains.monitorOf(id);
    try {
      const output = await this.session.run(args(monitor.domainName), timeoutMs);
      return { monitor, output };
    } catch (error) {
      const failure = this.failure(error, 'command_failed', `domain ${id}`);
      if (failure.code === 'not_running') void this.domains.checkEnded(monitor);
      throw failure;
    }
  }

  // ---------------------------------------------------------------- disks
  private diskInUse(file: string): boolean {
    const abs = path.resolve(file);
    for (const m of this.domains.values()) if (!m.done && m.runtime.diskPath === abs) return true;
    return false;
  }

  private async giveDisk(info: DiskInfo, file: string): Promise<DiskInfo> {
    await giveDiskTo(file, this.diskOwner);
    return info;
  }

  async prepareDisk(opts: PrepareDiskOptions): Promise<DiskInfo> {
    return this.giveDisk(await this.disks.prepareDisk(opts), opts.path);
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

  async convertDisk(opts: ConvertDiskOptions): Promise<DiskInfo> {
    return this.giveDisk(await this.disks.convertDisk(opts), opts.target);
  }

  // ---------------------------------------------------------------- start
  async start(spec: DomainSpec): Promise<DomainRuntime> {
    if (this.closed) throw new HypervisorError('start_failed', 'driver is closed');
    validateSpec(spec);
    const id = spec.id;
    if (this.domains.get(id) || this.starting.has(id))
      throw new HypervisorError('already_running', `domain ${id} is already running`);
    this.starting.add(id);
    try {
      this.events.start();
      const runtime = await createDomain(
        {
          session: this.session,
          host: this.host,
          accel: this.accel,
          spiceTls: this.spiceTls,
          consoleAddress: this.consoleAddress,
          startTimeoutMs: this.startTimeoutMs,
          domainName: this.domains.domainName(id),
          runDir: this.runDirOf(id),
          volumePath: (file) => this.volumes.hostPathOf(file),
          nics: await this.nics.of(spec),
          onBridgeRefused: (reason) => this.nics.refuse(reason),
          failure: (error, code, what) => this.failure(error, code, what),
        },
        spec,
      );
      this.domains.attach(runtime, 'running');
      return publicRuntime(runtime);
    } finally {
      this.starting.delete(id);
    }
  }

  // ---------------------------------------------------------------- power
  async shutdown(id: string): Promise<void> {
    const { monitor } = await this.command(id, (name) => ['shutdown', name, '--mode', 'acpi']);
    // libvirt has no event for the power button: the driver announces what it did.
    this.emitTyped('state', id, monitor.state, { event: 'POWERDOWN' });
  }

  /**
   * `virsh destroy --graceful` (SIGTERM, QEMU flushes its disks), and a plain `destroy` (SIGKILL
   * when SIGTERM was not enough) when that fails or takes longer than `timeoutMs`.
   */
  async stop(id: string, options?: { timeoutMs?: number }): Promise<void> {
    const monitor = this.domains.get(id);
    if (!monitor || monitor.done) return;
    monitor.stopRequested = true;
    const timeoutMs = options?.timeoutMs ?? 5000;
    try {
      await this.session.run(['destroy', monitor.domainName, '--graceful'], timeoutMs);
    } catch (error) {
      if (!isDomainGone(error)) {
        monitor.forced = true;
        try {
          await this.session.run(['destroy', monitor.domainName], 30_000);
        } catch (second) {
          if (!isDomainGone(second)) {
            monitor.stopRequested = false;
            throw this.failure(second, 'command_failed', `stop of ${id}`);
          }
        }
      }
    }
    await this.domains.finalize(monitor, { stopped: 'Destroyed' });
  }

  async reset(id: string): Promise<void> {
    await this.command(id, (name) => ['reset', name]);
  }

  async pause(id: string): Promise<void> {
    const { monitor } = await this.command(id, (name) => ['suspend', name]);
    monitor.state = 'paused';
  }

  async resume(id: string): Promise<void> {
    const { monitor } = await this.command(id, (name) => ['resume', name]);
    monitor.state = 'running';
  }

  status(id: string): Promise<DomainStatus> {
    return this.domains.status(id);
  }

  screenshot(id: string): Promise<Buffer> {
    return takeScreenshot(this.consoleCommands(), id);
  }

  setPasswords(
    id: string,
    passwords: { vnc?: string; spice?: string },
    options: { validForSeconds?: number } = {},
  ): Promise<void> {
    return updatePasswords(this.consoleCommands(), id, passwords, options);
  }

  /** What the console operations (screenshots, passwords) run through. */
  private consoleCommands(): ConsoleCommands {
    return {
      monitorOf: (id) => this.domains.monitorOf(id),
      command: (id, args, timeoutMs) => this.command(id, args, timeoutMs),
    };
  }

  // ---------------------------------------------------------------- inventory
  async list(): Promise<DomainRuntime[]> {
    return [...this.domains.values()].filter((m) => !m.done).map((m) => publicRuntime(m.runtime));
  }

  get(id: string): DomainRuntime | undefined {
    const monitor = this.domains.get(id);
    return monitor && !monitor.done ? publicRuntime(monitor.runtime) : undefined;
  }

  lastExit(id: string): Promise<ExitInfo | undefined> {
    return readExit(this.runDirOf(id));
  }

  /**
   * Watches every running domain of the host whose name has the driver's prefix and whose metadata
   * is the portal's, and reports the domains the portal recorded as running (`runtime.json`) that
   * the host no longer runs as dead.
   */
  async adopt(): Promise<AdoptResult> {
    this.events.start();
    return adoptDomains({
      session: this.session,
      domains: this.domains,
      host: this.host,
      consoleAddress: this.consoleAddress,
      runRoot: this.runRoot,
      isStarting: (id) => this.starting.has(id),
      failure: (error) => this.failure(error, 'command_failed', 'adoption'),
    });
  }

  async ping(): Promise<void> {
    try {
      await this.session.run(['list', '--name'], 5000);
    } catch (error) {
      throw this.failure(error, 'command_failed', `host ${this.host}`);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.domains.close();
    this.events.close();
    this.session.close();
    this.removeAllListeners();
  }
}
