/**
 * The hypervisor driver contract.
 *
 * A driver runs one virtual machine ("domain") per started desktop and manages the disk files those
 * machines use. The portal's desktop lifecycle (jobs, reconciler, socket events) talks only to this
 * interface; `qemu-driver.ts` runs one detached `qemu-system-x86_64` per domain on this machine,
 * `libvirt-driver.ts` one libvirt domain per start on a libvirt host (`HYPERVISOR_URI`), and
 * `fake-driver.ts` is an in-memory double for unit tests of the state machine. `driver-suite.ts`
 * holds the tests both real drivers pass.
 *
 * Identity: a domain is addressed by the `id` given to {@link Hypervisor.start} (the desktop id).
 * One domain per id at a time. Ids must match {@link DOMAIN_ID_PATTERN} (they name a directory).
 *
 * Portal states vs. hypervisor states: the driver reports what the machine is doing
 * (`running`, `paused`, `shutdown`, `absent`). Portal states such as `starting`, `shutting-down`
 * or "idle-paused but shown as started" (see `idle.ts`) are the caller's business.
 */

import type { LibvirtPool } from './libvirt-pool.ts';

/** CPU accelerator. `tcg` (pure emulation) is the default; `kvm` only when configured. */
export type Accel = 'tcg' | 'kvm';

/** A boot device class, in `DomainHardware.bootOrder`. */
export type BootDevice = 'disk' | 'iso' | 'floppy' | 'pxe';

/** Bus of the main disk. `sata` = an AHCI controller (`ich9-ahci`) with one `ide-hd`. */
export type DiskBus = 'virtio' | 'ide' | 'sata';

/** Video adapter. `default` and `vga` = standard VGA (`-device VGA`), `virtio` = `virtio-vga`, `none` = headless. */
export type VideoModel = 'default' | 'vga' | 'virtio' | 'none';

/** Virtual hardware of one start. Validated by the driver (it throws `HypervisorError` `invalid_spec`). */
export interface DomainHardware {
  /** Virtual CPUs (1..64). */
  vcpus: number;
  /** Guest RAM in MiB (16..1048576). */
  memoryMiB: number;
  /** Boot devices in priority order, e.g. `['iso', 'disk']`. Empty = firmware default (disk first). */
  bootOrder: BootDevice[];
  /** Bus of `DomainSpec.diskPath`. */
  diskBus: DiskBus;
  video: VideoModel;
  /** Absolute paths of ISO images, attached read-only as IDE CD-ROMs (at most 4, 3 when `diskBus` is `ide`). */
  isos: string[];
  /** Absolute paths of raw floppy images, attached read-only (at most 2). */
  floppies: string[];
}

/** One network card of a domain. */
export interface DomainNic {
  /** The portal network it joins (`default` = the NAT network). */
  network: string;
  /** Its MAC address (`52:54:00:xx:xx:xx`), chosen per desktop so its DHCP lease follows it. */
  mac: string;
  /**
   * The host side, set by the driver's host networks (`host-networks.ts`) at start: a TAP device
   * on the network's bridge, or QEMU's user-mode network. A card without one is left out.
   */
  backend?: { kind: 'tap'; ifname: string } | { kind: 'user' };
}

/** What to start. */
export interface DomainSpec {
  /** Desktop id; also the run directory name (`<DATA_DIR>/run/<id>/`). */
  id: string;
  /** Human name, shown as the VNC desktop name and in `ps`. */
  name: string;
  /** Absolute path of the main disk (normally a qcow2 overlay made by {@link Hypervisor.prepareDisk}). Empty string = diskless. */
  diskPath: string;
  hardware: DomainHardware;
  /**
   * VNC password of this start. VNC authentication (DES) only uses the first 8 characters;
   * generate 8 random printable characters. Required (non-empty): VNC is never exposed without auth.
   */
  vncPassword: string;
  /** SPICE ticket of this start (any length). Required (non-empty). */
  spicePassword: string;
  /** Network cards (none when absent or empty). */
  network?: DomainNic[];
}

/**
 * A running domain, as persisted in `<runDir>/runtime.json` (passwords are NOT persisted: keep
 * them in the database, they stay valid across a server restart because QEMU keeps running).
 */
export interface DomainRuntime {
  id: string;
  /** Display name given at start. */
  name: string;
  /** PID of the QEMU process; 0 when the driver does not know it (libvirt: it runs on the host). */
  pid: number;
  /** VNC TCP port on 127.0.0.1 (RFB 3.8, auth type 2 "VNC authentication"). Target of the websocket proxy. */
  vncPort: number;
  /** SPICE TCP port on 127.0.0.1 (ticketing with `spicePassword`). */
  spicePort: number;
  /** True when the SPICE port speaks TLS only (the portal's SPICE certificates). */
  spiceTls: boolean;
  /**
   * The address VNC and SPICE listen on, where the console proxies connect (a libvirt host's
   * console address); absent: 127.0.0.1.
   */
  consoleHost?: string;
  /** Path of the QMP unix socket the driver is connected to ('' for libvirt, which keeps its own). */
  qmpPath: string;
  /** `<DATA_DIR>/run/<id>/`: the portal's files of the domain (QEMU: qmp.sock, qemu.pid, runtime.json, qemu.log). */
  runDir: string;
  /** ISO-8601 time the process was spawned. */
  startedAt: string;
  accel: Accel;
}

/** Status of a domain as the hypervisor sees it. */
export type DomainStatus = 'running' | 'paused' | 'shutdown' | 'absent';

/** State reported by the `state` event. */
export type DomainRunState = 'running' | 'paused' | 'shutdown';

/** The QMP event (or driver action) behind a `state` event. */
export interface StateChangeDetail {
  /**
   * `STOP` -> paused, `RESUME` -> running, `RESET` -> running, `SHUTDOWN` -> shutdown (the process is
   * about to exit), `POWERDOWN` -> state unchanged (reported as the current state): the ACPI power
   * button was pressed, the guest may or may not honour it (GRUB does not).
   */
  event: 'STOP' | 'RESUME' | 'RESET' | 'SHUTDOWN' | 'POWERDOWN';
  /** For SHUTDOWN / RESET: whether the guest initiated it. */
  guest?: boolean;
  /** For SHUTDOWN / RESET: QEMU's reason (`guest-shutdown`, `host-qmp-quit`, `host-signal`, ...). */
  reason?: string;
}

/** Why a domain ended. */
export interface ExitInfo {
  /** Exit code when known (only for processes spawned by this driver instance), else null. */
  code: number | null;
  /** Terminating signal (`SIGKILL`, ...) when known, else null. */
  signal: string | null;
  /** Human-readable cause, with the tail of `qemu.log` for unexpected ends. Never empty. */
  reason: string;
  /**
   * true when the end was asked for (`stop()`, a guest shutdown, QMP `quit`), false for a crash,
   * an outside kill or an unknown cause. Lets the caller choose between "stopped" and "failed".
   */
  expected: boolean;
  /** ISO-8601 time the end was noticed. */
  at: string;
}

export interface PrepareDiskOptions {
  /** Absolute path of the disk to create (parent directories are created). Must not exist. */
  path: string;
  /** Template disk (qcow2): the new disk is a qcow2 overlay on it (`-b <backing> -F qcow2`). */
  backingFile?: string;
  /** Virtual size in GiB: of the empty disk, or a bigger size for the overlay. Required without `backingFile`. */
  sizeGiB?: number;
}

export interface ConvertDiskOptions {
  /** Absolute path of the qcow2 to copy; its whole backing chain is read. Must not be in use by a running domain. */
  source: string;
  /** Absolute path of the standalone qcow2 to write (parent directories are created). Must not exist. */
  target: string;
  /** Called with the percentage done (0..100) as the copy goes. */
  onProgress?: (percent: number) => void;
  /** Aborting kills the copy; the call rejects and leaves no target file behind. */
  signal?: AbortSignal;
}

/** `qemu-img info` of a disk. Sizes in bytes. */
export interface DiskInfo {
  virtualSize: number;
  actualSize: number;
  /** Backing file as written in the image (absolute for disks made by this driver), or null. */
  backingFile: string | null;
}

/** Result of {@link Hypervisor.adopt}. */
export interface AdoptResult {
  /** Domains found alive (pid alive and QMP reachable) and now monitored by this driver. */
  adopted: DomainRuntime[];
  /** Run directories whose QEMU is gone (or unreachable), with the reason (log tail). Their run files are cleaned. */
  dead: { id: string; info: ExitInfo }[];
}

/** Event map of a driver (`on(event, listener)`). */
export interface HypervisorEvents {
  /** A domain's process ended, for any reason (stop, guest shutdown, crash, killed from outside). Fired once per start. */
  exit: [id: string, info: ExitInfo];
  /** A domain changed state (from QMP events). */
  state: [id: string, state: DomainRunState, detail: StateChangeDetail];
}

/** Error codes of {@link HypervisorError}. */
export type HypervisorErrorCode =
  | 'invalid_spec'
  | 'already_running'
  | 'not_running'
  | 'disk_exists'
  | 'disk_not_found'
  | 'start_failed'
  | 'qmp_error'
  | 'command_failed';

/** Every driver failure is a HypervisorError with a stable `code` (map it to the portal's error kinds). */
export class HypervisorError extends Error {
  readonly code: HypervisorErrorCode;
  constructor(code: HypervisorErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'HypervisorError';
    this.code = code;
  }
}

/**
 * A hypervisor driver. All methods are async and reject with {@link HypervisorError}.
 * Control methods (`shutdown` ... `screenshot`) reject with `not_running` for an unknown/ended id.
 */
export interface Hypervisor {
  /** `qemu`, `libvirt` or `fake`. */
  readonly kind: string;
  /** Accelerator used for new starts. */
  readonly accel: Accel;
  /** The host's storage pool, when its disks are volumes there (libvirt hosts). */
  readonly volumes?: LibvirtPool;

  // ---- disks ------------------------------------------------------------------------------
  /** Create a disk: a qcow2 overlay on `backingFile`, or an empty qcow2 of `sizeGiB`. Rejects `disk_exists`. */
  prepareDisk(options: PrepareDiskOptions): Promise<DiskInfo>;
  /** Delete a disk file. Deleting a missing file is not an error. */
  deleteDisk(path: string): Promise<void>;
  /** `qemu-img info --output=json`. Rejects `disk_not_found`. */
  diskInfo(path: string): Promise<DiskInfo>;
  /** Grow a disk to `sizeGiB` (shrinking is refused by qemu-img). The domain must not be running. */
  resizeDisk(path: string, sizeGiB: number): Promise<DiskInfo>;
  /**
   * Flatten a disk and its backing chain into a new standalone qcow2 (`qemu-img convert -O qcow2`):
   * the target has no backing file and the source is left as it was. The target appears only once
   * it is complete (written under a temporary name, then renamed). Rejects `disk_not_found` (source),
   * `disk_exists` (target), `already_running` (the source is a running domain's disk),
   * `command_failed` (qemu-img failed or the copy was aborted).
   */
  convertDisk(options: ConvertDiskOptions): Promise<DiskInfo>;
  /**
   * The disk path a start of `id` uses for its disk `file`, the disk first copied where the host
   * that takes the start keeps its disks (`onPercent` hears the copy's progress); absent: `file`.
   */
  stageDisk?(id: string, file: string, onPercent?: (percent: number) => void): Promise<string>;
  /**
   * The paths a start of `id` uses for its media files (ISOs, then floppy images, in the order
   * given), each first copied where the host that takes the start keeps them (`onPercent` hears
   * the copy's progress); absent: the files themselves.
   */
  stageMedia?(
    id: string,
    files: string[],
    onPercent?: (percent: number) => void,
  ): Promise<string[]>;

  // ---- power --------------------------------------------------------------------------------
  /**
   * Start a domain and resolve once it runs: VNC/SPICE listen on loopback with this start's
   * passwords and the guest CPU is running. Rejects `already_running`, `invalid_spec`, `start_failed`
   * (with QEMU's log tail in the message).
   */
  start(spec: DomainSpec): Promise<DomainRuntime>;
  /** Press the ACPI power button (graceful). Resolves when delivered; `exit` fires when the guest powers off. */
  shutdown(id: string): Promise<void>;
  /**
   * Force off: QMP `quit`, SIGKILL after `timeoutMs` (default 5000). Resolves after the process is gone
   * (the `exit` event has fired). Stopping an absent domain resolves (idempotent).
   */
  stop(id: string, options?: { timeoutMs?: number }): Promise<void>;
  /** Hard reset (`system_reset`). */
  reset(id: string): Promise<void>;
  /** Freeze the vCPUs (QMP `stop`); the process uses no CPU, VNC stays connected, screenshots still work. */
  pause(id: string): Promise<void>;
  /** Unfreeze (QMP `cont`). */
  resume(id: string): Promise<void>;
  /** Current status; `absent` when no process runs for this id. Never rejects for an unknown id. */
  status(id: string): Promise<DomainStatus>;
  /** PNG of the current screen (works while paused). */
  screenshot(id: string): Promise<Buffer>;
  /**
   * Replace the VNC and/or SPICE password of a running domain (connected clients stay connected).
   * With `validForSeconds`, the new passwords stop admitting new connections after that long
   * (QMP `expire_password`); without it they never expire.
   */
  setPasswords(
    id: string,
    passwords: { vnc?: string; spice?: string },
    options?: { validForSeconds?: number },
  ): Promise<void>;

  // ---- inventory ----------------------------------------------------------------------------
  /** Runtimes of every domain this driver monitors whose process is alive (for the reconciler). */
  list(): Promise<DomainRuntime[]>;
  /** Runtime of one monitored, alive domain. */
  get(id: string): DomainRuntime | undefined;
  /** Why the last start of `id` ended (kept in `<runDir>/exit.json`, survives restarts), if it did. */
  lastExit(id: string): Promise<ExitInfo | undefined>;
  /**
   * Re-attach after a server restart: scan `<DATA_DIR>/run/*`, monitor every QEMU whose pid is
   * alive and whose QMP answers, and report the others as dead (cleaning their run files).
   * Call once at boot, before the reconciler. Idempotent.
   */
  adopt(): Promise<AdoptResult>;
  /**
   * Resolves when the host answers a command (the health probe of a hypervisor host); rejects
   * `command_failed` when it does not (the local QEMU driver always answers).
   */
  ping(): Promise<void>;
  /**
   * Detach: stop monitoring, close QMP sockets, LEAVE QEMU PROCESSES RUNNING (server shutdown).
   * Use `stop()` per domain to end them.
   */
  close(): Promise<void>;

  on<E extends keyof HypervisorEvents>(
    event: E,
    listener: (...args: HypervisorEvents[E]) => void,
  ): this;
  off<E extends keyof HypervisorEvents>(
    event: E,
    listener: (...args: HypervisorEvents[E]) => void,
  ): this;
}

/** Id check shared by the drivers. */
export const DOMAIN_ID_PATTERN = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$/;
