/**
 * What the desktop engine needs from the rest of the server. The engine owns the desktop state
 * machine on top of a hypervisor driver; the
 * store persists desktops (every write bumps `version` and publishes the socket event).
 */
import type { DesktopHardware, DesktopState } from '../../../../src/generated/types.ts';
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import type { Hypervisor } from '../../platform/hypervisor/types.ts';

/** Hypervisor runtime of a started desktop, kept in the desktop row (passwords included: QEMU keeps them across a server restart). */
export interface DesktopRuntime {
  pid: number;
  vncPort: number;
  spicePort: number;
  /** The SPICE port speaks TLS only (absent in rows written before SPICE had TLS). */
  spiceTls?: boolean;
  vncPassword: string;
  spicePassword: string;
  startedAt: string;
  /** The guest's address on its network, from the DHCP leases (absent until it has one). */
  ip?: string;
  /** The guest's address on each network it has one on, by network id (`ip` is its first card's). */
  addresses?: Record<string, string>;
  /** The hypervisor host that runs the VM (absent in rows written before there were hosts: local). */
  host?: string;
  /** Where its VNC and SPICE listen, the console proxies' target (absent: 127.0.0.1). */
  consoleHost?: string;
}

/**
 * The viewer passwords of one start, chosen when the start is accepted (never reused by another
 * start): a browser console can be issued its ticket while QEMU boots.
 */
export interface StartPasswords {
  vnc: string;
  spice: string;
}

/** The part of a desktop row the engine reads and writes. */
export interface EngineDesktop {
  id: string;
  user_id: string;
  name: string;
  type: 'persistent' | 'nonpersistent';
  state: DesktopState;
  detail: string | null;
  hardware: DesktopHardware;
  disk_path: string | null;
  template_disk_path: string | null;
  runtime: DesktopRuntime | null;
  /** With `state: 'starting'`: the passwords of this start (absent: the boot chooses them). */
  passwords?: StartPasswords | null;
  /** The portal node that runs the desktop's VM or is starting it (null: none, or not recorded). */
  node: string | null;
  /** The hypervisor host that runs the desktop's VM or is starting it (null: none, or local). */
  host?: string | null;
  /** The hypervisor host every start of the desktop goes to (null: placement chooses). */
  forced_hyp?: string | null;
  updated_at: Date;
}

export interface EnginePatch {
  state?: DesktopState;
  detail?: string | null;
  runtime?: DesktopRuntime | null;
  disk_path?: string | null;
  accessed?: boolean;
  /** Its start queue place, or the progress of long work on it (`copy_disk`, `copy_media`: percent done). */
  queue?: { position?: number; event: string; percent?: number } | null;
  /** With `state: 'starting'`: the hypervisor host placement chose. */
  host?: string;
  /** With `state: 'starting'`: the passwords of this start. */
  passwords?: StartPasswords;
}

export interface DesktopStore {
  get(id: string): Promise<EngineDesktop | undefined>;
  /**
   * Atomic conditional update: applies `patch` only when the current state is one of `from`
   * (any state when omitted). Bumps the version and publishes the change. Returns the new row, or
   * undefined when the condition did not hold (or the row is gone).
   */
  update(
    id: string,
    patch: EnginePatch,
    from?: readonly DesktopState[],
  ): Promise<EngineDesktop | undefined>;
  /** Rows in any of these states (reconciler). */
  listInStates(states: readonly DesktopState[]): Promise<EngineDesktop[]>;
  /** Media file paths by media id (ISOs / floppies attached to a desktop). */
  mediaPaths(ids: string[]): Promise<Map<string, string>>;
}

export interface EngineLogger {
  /** The console path's timings (`phase`, `id`), read by `scripts/bench/desktop.ts`. */
  debug?(obj: object, msg?: string): void;
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
  /**
   * Runs `fn` under the lease `name` unless another process holds it (answers whether it ran):
   * one node at a time makes a desktop's disk. Without it, `fn` just runs (one process).
   */
  exclusive?: (name: string, fn: () => Promise<void>) => Promise<boolean>;
  /**
   * Which rows this process reconciles, asked once per pass: with several nodes each settles the
   * desktops whose VM it runs, and one node (the leader) the others (no node, or a dead one).
   * Without it, every row.
   */
  reconciles?: () => Promise<(desktop: EngineDesktop) => boolean>;
  /**
   * The hypervisor host a start goes to (placement); throws the refusal, so a start that no host
   * takes answers at once. Without it, the driver runs every start.
   */
  place?: (desktop: EngineDesktop) => Promise<string>;
  /**
   * A booting desktop's VNC port on this node, once QEMU answers with its password set (null once
   * the boot is over, the port then in the row): a console opened with the start connects before
   * the state is written.
   */
  vncReady?: (id: string, vncPort: number | null) => void;
}

/**
 * A check every start passes first (the booking gate): it throws the refusal. A desktop that
 * already runs or is starting is not checked again.
 */
export type StartGate = (desktop: EngineDesktop) => Promise<void>;
