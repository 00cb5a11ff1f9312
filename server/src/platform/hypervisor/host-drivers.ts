/**
 * The hypervisor hosts' drivers behind one {@link Hypervisor}: the portal talks to this registry,
 * and every call about a domain goes to the driver of the host that runs it.
 *
 * - One driver per host, made when first needed: the local QEMU driver for the host `local`, a
 *   libvirt driver for each other host's URI. `sync()` hands over the hosts as the database has
 *   them; a driver is dropped once its host is deleted, disabled or changed (URI, key) and it runs
 *   nothing any more (a changed console address too).
 * - The host of a domain is the one its desktop records (`hostOf`, the desktop's runtime), kept
 *   here once a start or an adoption found it, until the domain ends.
 * - Disks (`host-disks.ts`): a path that names a libvirt host's volume is a call to its storage
 *   pool; any other is a file of the portal (the local driver's, given to `diskOwner`, a session
 *   daemon's account, when one is set). A start on a libvirt host brings the desktop's disk into
 *   its pool first (`stageDisk`).
 * - Events (`exit`, `state`) of every driver are this registry's events.
 */
import { EventEmitter } from 'node:events';
import { HostDisks } from './host-disks.ts';
import type { OnPercent } from './host-volumes.ts';
import {
  HypervisorError,
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

/** The host that runs the desktops without a recorded host: the portal's own QEMU. */
export const LOCAL_HOST = 'local';

/** A host as the registry needs it. */
export interface HostConfig {
  id: string;
  /** Its libvirt URI; null for the host `local`. */
  uri: string | null;
  /** The SSH private key file its URI is reached with; null: the URI's own (or the agent's). */
  sshKey: string | null;
  /** Where its consoles listen and the console proxies connect. */
  consoleAddress: string;
  enabled: boolean;
  /** Desktops running or starting there (its driver is kept while any does). */
  running: number;
}

export interface HostDriversOptions {
  /** The driver of the host `local`. */
  local: Hypervisor;
  /** Makes the driver of another host. */
  make(host: HostConfig): Hypervisor;
  /** The host a desktop's runtime records (null: none, i.e. `local`). */
  hostOf(id: string): Promise<string | null>;
  /** Owner given to the disk files made (a libvirt session daemon's account). */
  diskOwner?: { uid: number; gid: number } | undefined;
  /** DATA_DIR, below which the hosts' volumes are named (unset: every disk is a portal file). */
  dataDir?: string | undefined;
  /** Where a host that cannot be adopted from is reported. */
  warn?: (obj: object, msg: string) => void;
}

interface Member {
  driver: Hypervisor;
  /**
   * What the driver was made from (a change makes a new driver once this one is idle); null for a
   * driver given with `use()`, kept until its host is deleted.
   */
  key: string | null;
  detach(): void;
}

const keyOf = (host: HostConfig) =>
  `${host.uri ?? ''}\n${host.sshKey ?? ''}\n${host.consoleAddress}`;

export class HostDrivers extends EventEmitter implements Hypervisor {
  readonly kind = 'hosts';
  readonly accel;
  private readonly options: HostDriversOptions;
  private readonly members = new Map<string, Member>();
  private readonly placed = new Map<string, string>();
  /** The host of a domain's last run once it ended (where its exit record is). */
  private readonly ended = new Map<string, string>();
  private hosts = new Map<string, HostConfig>();
  /** The disks of every host, routed by path. */
  readonly disks: HostDisks;

  constructor(options: HostDriversOptions) {
    super();
    this.options = options;
    this.accel = options.local.accel;
    this.members.set(LOCAL_HOST, this.attach(LOCAL_HOST, options.local, ''));
    this.disks = new HostDisks({
      local: options.local,
      dataDir: options.dataDir,
      diskOwner: options.diskOwner,
      driverOf: (hostId) => this.driverOf(hostId),
    });
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

  private attach(host: string, driver: Hypervisor, key: string | null): Member {
    const onExit = (id: string, info: ExitInfo) => {
      if (this.placed.get(id) === host) this.placed.delete(id);
      this.ended.set(id, host);
      this.emit('exit', id, info);
    };
    const onState = (id: string, state: DomainRunState, detail: StateChangeDetail) =>
      this.emit('state', id, state, detail);
    driver.on('exit', onExit);
    driver.on('state', onState);
    return {
      driver,
      key,
      detach: () => {
        driver.off('exit', onExit);
        driver.off('state', onState);
      },
    };
  }

  /**
   * Takes the hosts as the database has them now, and drops the driver of every host deleted,
   * disabled or changed once it runs nothing.
   */
  async sync(hosts: readonly HostConfig[]): Promise<void> {
    this.hosts = new Map(hosts.map((h) => [h.id, h]));
    for (const [id, member] of [...this.members]) {
      if (id === LOCAL_HOST) continue;
      const host = this.hosts.get(id);
      if (host && (member.key === null || (host.enabled && keyOf(host) === member.key))) continue;
      if (host && host.running > 0) continue;
      if ((await member.driver.list()).length > 0) continue;
      this.members.delete(id);
      member.detach();
      await member.driver.close();
    }
  }

  /** Gives a host a driver made elsewhere (tests: the fake driver) instead of making one. */
  use(hostId: string, driver: Hypervisor): void {
    this.members.set(hostId, this.attach(hostId, driver, null));
  }

  /** The hosts whose driver exists now. */
  activeHosts(): string[] {
    return [...this.members.keys()];
  }

  /** The driver of a host, made when first needed; undefined for a host not known (any more). */
  driverOf(hostId: string): Hypervisor | undefined {
    // A changed host keeps its driver until sync() drops it idle.
    const member = this.members.get(hostId);
    if (member) return member.driver;
    const host = this.hosts.get(hostId);
    if (!host?.uri) return undefined;
    const made = this.attach(hostId, this.options.make(host), keyOf(host));
    this.members.set(hostId, made);
    return made.driver;
  }

  /** The host a domain runs on (or is started on). */
  async hostFor(id: string): Promise<string> {
    return this.placed.get(id) ?? (await this.options.hostOf(id)) ?? LOCAL_HOST;
  }

  private async route(id: string): Promise<Hypervisor | undefined> {
    return this.driverOf(await this.hostFor(id));
  }

  private async mustRoute(id: string): Promise<Hypervisor> {
    const driver = await this.route(id);
    if (!driver) throw new HypervisorError('not_running', `domain ${id} runs on no known host`);
    return driver;
  }

  // ---------------------------------------------------------------- disks
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
  /** The disk path the start of `id` on its host uses (see HostDisks.stageDisk). */
  async stageDisk(id: string, file: string, onPercent?: OnPercent): Promise<string> {
    return this.disks.stageDisk(await this.hostFor(id), file, onPercent);
  }

  /** The media paths the start of `id` on its host uses (see HostDisks.stageMedia). */
  async stageMedia(id: string, files: string[], onPercent?: OnPercent): Promise<string[]> {
    return this.disks.stageMedia(await this.hostFor(id), files, onPercent);
  }

  // ---------------------------------------------------------------- power
  async start(spec: DomainSpec): Promise<DomainRuntime> {
    const host = await this.hostFor(spec.id);
    const driver = this.driverOf(host);
    if (!driver)
      throw new HypervisorError('start_failed', `the hypervisor host ${host} is not configured`);
    const runtime = await driver.start(spec);
    this.placed.set(spec.id, host);
    this.ended.delete(spec.id);
    return runtime;
  }
  async shutdown(id: string): Promise<void> {
    return (await this.mustRoute(id)).shutdown(id);
  }
  async stop(id: string, options?: { timeoutMs?: number }): Promise<void> {
    return (await this.route(id))?.stop(id, options);
  }
  async reset(id: string): Promise<void> {
    return (await this.mustRoute(id)).reset(id);
  }
  async pause(id: string): Promise<void> {
    return (await this.mustRoute(id)).pause(id);
  }
  async resume(id: string): Promise<void> {
    return (await this.mustRoute(id)).resume(id);
  }
  async status(id: string): Promise<DomainStatus> {
    return (await (await this.route(id))?.status(id)) ?? 'absent';
  }
  async screenshot(id: string): Promise<Buffer> {
    return (await this.mustRoute(id)).screenshot(id);
  }
  async setPasswords(
    id: string,
    passwords: { vnc?: string; spice?: string },
    options?: { validForSeconds?: number },
  ): Promise<void> {
    return (await this.mustRoute(id)).setPasswords(id, passwords, options);
  }

  // ---------------------------------------------------------------- inventory
  async list(): Promise<DomainRuntime[]> {
    const lists = await Promise.all([...this.members.values()].map((m) => m.driver.list()));
    return lists.flat();
  }

  get(id: string): DomainRuntime | undefined {
    const host = this.placed.get(id);
    const first = host ? this.members.get(host)?.driver.get(id) : undefined;
    if (first) return first;
    for (const member of this.members.values()) {
      const runtime = member.driver.get(id);
      if (runtime) return runtime;
    }
    return undefined;
  }

  async lastExit(id: string): Promise<ExitInfo | undefined> {
    const ended = this.placed.has(id) ? undefined : this.ended.get(id);
    return (ended ? this.driverOf(ended) : await this.route(id))?.lastExit(id);
  }

  /**
   * Adopts the domains of every host enabled or running desktops (sync first); a host that does
   * not answer is left to the health probe.
   */
  async adopt(): Promise<AdoptResult> {
    const result: AdoptResult = { adopted: [], dead: [] };
    const hosts = [
      LOCAL_HOST,
      ...[...this.hosts.values()].flatMap((h) =>
        h.uri && (h.enabled || h.running > 0) ? [h.id] : [],
      ),
    ];
    for (const host of hosts) {
      const driver = this.driverOf(host);
      if (!driver) continue;
      try {
        const { adopted, dead } = await driver.adopt();
        for (const runtime of adopted) this.placed.set(runtime.id, host);
        result.adopted.push(...adopted);
        result.dead.push(...dead);
      } catch (error) {
        this.options.warn?.({ host, err: error }, 'hypervisor host not adopted');
      }
    }
    return result;
  }

  /** Whether a host answers (its driver made if needed); rejects when it does not. */
  async pingHost(hostId: string): Promise<void> {
    const driver = this.driverOf(hostId);
    if (!driver) throw new HypervisorError('command_failed', `unknown host ${hostId}`);
    await driver.ping();
  }

  ping(): Promise<void> {
    return this.options.local.ping();
  }

  async close(): Promise<void> {
    for (const member of this.members.values()) {
      member.detach();
      await member.driver.close();
    }
    this.members.clear();
    this.removeAllListeners();
  }
}
