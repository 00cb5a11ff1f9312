/**
 * Idle management: a started desktop nobody is looking at must not burn a CPU core.
 *
 * Under TCG a guest sitting at the GRUB menu uses ~95 % of a core (GRUB busy-polls the keyboard);
 * paused (QMP `stop`) it uses 0 %. So, per started domain:
 *   1. `started(id)`: the guest runs until it has drawn its first screen (at least `firstFrameMinMs`,
 *      then until a screendump is not blank, at most `firstFrameMaxMs`); that screenshot is kept as
 *      the thumbnail (`lastScreenshot`), then the guest is paused if no viewer is attached.
 *   2. `viewerAttached(id)` (ref-counted) resumes it at once.
 *   3. When the last viewer detaches, it is paused again after `graceMs` (with a fresh screenshot).
 *
 * The pause is INTERNAL: the desktop stays "started" for users. The driver still emits `state`
 * events (`paused` / `running`) for these pauses: use `isIdlePaused(id)` (or the `idle` event)
 * to tell them apart from a user pause. A pause made by someone else (the portal's "pause" action)
 * is never undone by a viewer attaching.
 */
import { EventEmitter } from 'node:events';
import { isBlankScreen } from './png.ts';
import type { Hypervisor, HypervisorEvents } from './types.ts';

export interface Screenshot {
  png: Buffer;
  at: Date;
}

export interface IdleManagerOptions {
  /** Delay between the last viewer detaching and the pause. */
  graceMs: number;
  /** Minimum run time after start before the first screenshot. Default 1500 ms. */
  firstFrameMinMs?: number;
  /** Pause after this even if the screen is still blank. Default 10000 ms. */
  firstFrameMaxMs?: number;
  /** Screendump period while waiting for the first frame. Default 250 ms. */
  pollMs?: number;
  /**
   * Fraction of non-background pixels that makes a screen "drawn". Default 0.01: the GRUB menu is
   * ~8 %, SeaBIOS's single "Booting from Hard Disk..." line ~0.3 % (not enough).
   */
  contentThreshold?: number;
  /**
   * Domains not idle-paused for now: those that serve on a network (a paused guest answers
   * nothing). Asked again after each `graceMs` while it holds.
   */
  keepRunning?: (id: string) => boolean;
}

export type IdleManagerEvents = {
  /** A new thumbnail was taken. */
  screenshot: [id: string, shot: Screenshot];
  /** The manager paused (true) or resumed (false) a domain. */
  idle: [id: string, idlePaused: boolean];
  /** A background operation failed (the domain probably ended). */
  warning: [id: string, error: unknown];
};

export interface IdleManager {
  /** Call after `driver.start()` resolved: first-frame capture, then idle pause. */
  started(id: string): void;
  /**
   * Call after `driver.adopt()` for each adopted domain. `idlePaused`: the portal thinks the desktop
   * is started but the hypervisor has it paused (so it was an idle pause before the restart).
   */
  adopted(id: string, options: { idlePaused: boolean }): void;
  /** A viewer connected (VNC/SPICE/RDP proxy). Resolves once the guest runs again. */
  viewerAttached(id: string): Promise<void>;
  /** A viewer disconnected; the last one starts the grace timer. */
  viewerDetached(id: string): void;
  /** Attached viewer count. */
  viewers(id: string): number;
  /** true while the manager holds the domain paused. */
  isIdlePaused(id: string): boolean;
  /** The last thumbnail, if any. */
  lastScreenshot(id: string): Screenshot | undefined;
  /** Take a new screenshot now (works while paused) and keep it. */
  refreshScreenshot(id: string): Promise<Screenshot>;
  /** Resolves when the first-frame phase of `id` is over (tests, benchmarks). */
  settled(id: string): Promise<void>;
  /** Drop all state of a domain (automatic on the driver's `exit` event). */
  forget(id: string): void;
  /** Stop timers and listeners. Does not resume anything. */
  close(): void;
  on<E extends keyof IdleManagerEvents>(
    event: E,
    listener: (...args: IdleManagerEvents[E]) => void,
  ): this;
  off<E extends keyof IdleManagerEvents>(
    event: E,
    listener: (...args: IdleManagerEvents[E]) => void,
  ): this;
}

interface Entry {
  viewers: number;
  phase: 'booting' | 'ready';
  idlePaused: boolean;
  /** true while the manager itself is pausing/resuming (to recognise its own STOP/RESUME events). */
  acting: boolean;
  graceTimer: NodeJS.Timeout | undefined;
  chain: Promise<void>;
  bootDone: Promise<void>;
  shot: Screenshot | undefined;
  forgotten: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createIdleManager(driver: Hypervisor, options: IdleManagerOptions): IdleManager {
  return new IdleManagerImpl(driver, options);
}

class IdleManagerImpl extends EventEmitter implements IdleManager {
  private readonly entries = new Map<string, Entry>();
  private readonly graceMs: number;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly pollMs: number;
  private readonly threshold: number;
  private readonly keepRunning: ((id: string) => boolean) | undefined;
  private readonly onExit: (...args: HypervisorEvents['exit']) => void;
  private readonly onState: (...args: HypervisorEvents['state']) => void;

  constructor(
    private readonly driver: Hypervisor,
    options: IdleManagerOptions,
  ) {
    super();
    this.graceMs = options.graceMs;
    this.minMs = options.firstFrameMinMs ?? 1500;
    this.maxMs = Math.max(this.minMs, options.firstFrameMaxMs ?? 10_000);
    this.pollMs = options.pollMs ?? 250;
    this.threshold = options.contentThreshold ?? 0.01;
    this.keepRunning = options.keepRunning;
    this.onExit = (id) => this.forget(id);
    this.onState = (id, state, detail) => {
      const entry = this.entries.get(id);
      if (!entry || entry.acting) return;
      if (state === 'running' && detail.event === 'RESUME' && entry.idlePaused) {
        // resumed by someone else: no longer ours; re-arm the grace timer if nobody watches
        entry.idlePaused = false;
        this.emit('idle', id, false);
        if (entry.viewers === 0 && entry.phase === 'ready') this.armGrace(id, entry);
      }
    };
    driver.on('exit', this.onExit);
    driver.on('state', this.onState);
  }

  override on<E extends keyof IdleManagerEvents>(
    event: E,
    listener: (...args: IdleManagerEvents[E]) => void,
  ): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }
  override off<E extends keyof IdleManagerEvents>(
    event: E,
    listener: (...args: IdleManagerEvents[E]) => void,
  ): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }

  private entry(id: string): Entry {
    let entry = this.entries.get(id);
    if (!entry) {
      entry = {
        viewers: 0,
        phase: 'ready',
        idlePaused: false,
        acting: false,
        graceTimer: undefined,
        chain: Promise.resolve(),
        bootDone: Promise.resolve(),
        shot: undefined,
        forgotten: false,
      };
      this.entries.set(id, entry);
    }
    return entry;
  }

  /** Serialise pause/resume work per domain. */
  private enqueue(id: string, entry: Entry, op: () => Promise<void>): Promise<void> {
    const next = entry.chain.then(async () => {
      if (entry.forgotten) return;
      try {
        await op();
      } catch (error) {
        if (!entry.forgotten) this.emit('warning', id, error);
      }
    });
    entry.chain = next;
    return next;
  }

  private keep(id: string, entry: Entry, png: Buffer) {
    const shot = { png, at: new Date() };
    entry.shot = shot;
    this.emit('screenshot', id, shot);
  }

  started(id: string): void {
    // A console opened with the start may have attached while QEMU booted: it still counts.
    const viewers = this.entries.get(id)?.viewers ?? 0;
    this.forget(id);
    const entry = this.entry(id);
    entry.viewers = viewers;
    entry.phase = 'booting';
    entry.bootDone = this.firstFrame(id, entry);
  }

  private async firstFrame(id: string, entry: Entry): Promise<void> {
    const t0 = Date.now();
    await sleep(this.minMs);
    let png: Buffer | undefined;
    while (!entry.forgotten) {
      try {
        png = await this.driver.screenshot(id);
        if (!isBlankScreen(png, this.threshold)) break;
      } catch (error) {
        // video none, or the domain ended: stop trying
        if (!entry.forgotten) this.emit('warning', id, error);
        break;
      }
      if (Date.now() - t0 >= this.maxMs) break;
      await sleep(this.pollMs);
    }
    if (entry.forgotten) return;
    if (png) this.keep(id, entry, png);
    entry.phase = 'ready';
    if (entry.viewers === 0) await this.enqueue(id, entry, () => this.pauseNow(id, entry, false));
  }

  private async pauseNow(id: string, entry: Entry, withScreenshot: boolean): Promise<void> {
    if (entry.viewers > 0 || entry.idlePaused || entry.phase !== 'ready') return;
    if (this.keepRunning?.(id)) {
      this.armGrace(id, entry);
      return;
    }
    if ((await this.driver.status(id)) !== 'running') return; // paused by someone else, or gone
    entry.acting = true;
    try {
      await this.driver.pause(id);
    } finally {
      entry.acting = false;
    }
    entry.idlePaused = true;
    this.emit('idle', id, true);
    if (withScreenshot) {
      try {
        this.keep(id, entry, await this.driver.screenshot(id));
      } catch {
        /* keep the previous thumbnail */
      }
    }
  }

  adopted(id: string, options: { idlePaused: boolean }): void {
    this.forget(id);
    const entry = this.entry(id);
    entry.idlePaused = options.idlePaused;
    if (!options.idlePaused) this.armGrace(id, entry);
  }

  private armGrace(id: string, entry: Entry) {
    if (entry.graceTimer) clearTimeout(entry.graceTimer);
    entry.graceTimer = setTimeout(() => {
      entry.graceTimer = undefined;
      void this.enqueue(id, entry, () => this.pauseNow(id, entry, true));
    }, this.graceMs);
    entry.graceTimer.unref();
  }

  viewerAttached(id: string): Promise<void> {
    const entry = this.entry(id);
    entry.viewers++;
    if (entry.graceTimer) {
      clearTimeout(entry.graceTimer);
      entry.graceTimer = undefined;
    }
    return this.enqueue(id, entry, async () => {
      if (!entry.idlePaused || entry.viewers === 0) return;
      entry.acting = true;
      try {
        await this.driver.resume(id);
      } finally {
        entry.acting = false;
      }
      entry.idlePaused = false;
      this.emit('idle', id, false);
    });
  }

  viewerDetached(id: string): void {
    const entry = this.entries.get(id);
    if (!entry || entry.viewers === 0) return;
    entry.viewers--;
    if (entry.viewers === 0 && entry.phase === 'ready') this.armGrace(id, entry);
  }

  viewers(id: string): number {
    return this.entries.get(id)?.viewers ?? 0;
  }

  isIdlePaused(id: string): boolean {
    return this.entries.get(id)?.idlePaused ?? false;
  }

  lastScreenshot(id: string): Screenshot | undefined {
    return this.entries.get(id)?.shot;
  }

  async refreshScreenshot(id: string): Promise<Screenshot> {
    const png = await this.driver.screenshot(id);
    const entry = this.entry(id);
    this.keep(id, entry, png);
    return { png, at: entry.shot?.at ?? new Date() };
  }

  async settled(id: string): Promise<void> {
    const entry = this.entries.get(id);
    if (!entry) return;
    await entry.bootDone;
    await entry.chain;
  }

  forget(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.forgotten = true;
    if (entry.graceTimer) clearTimeout(entry.graceTimer);
    this.entries.delete(id);
  }

  close(): void {
    for (const id of [...this.entries.keys()]) this.forget(id);
    this.driver.off('exit', this.onExit);
    this.driver.off('state', this.onState);
    this.removeAllListeners();
  }
}
