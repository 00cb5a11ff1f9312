/**
 * The bookkeeping every browser console (VNC proxy, RDP tunnel) shares: one lease per console,
 * from its ticket check until its socket closes, counted per desktop and per user:
 * - ≤ 4 consoles per desktop and ≤ 10 per user, reserved synchronously, before any await, so
 *   concurrent upgrades cannot overshoot; with several nodes a slot counted across them is taken
 *   too (`takeShared`), so the limits hold for them together;
 * - a console ends at once when its session ends, its desktop stops, or its user may no longer
 *   open it (`recheck` looks the desktop up again; overlapping rechecks of a desktop run one after
 *   the other);
 * - a lease is released once: its slot freed, its upstream connection cut and the idle manager
 *   told the viewer left (once, when it was told one came).
 * A subclass says how a console is cut and how it ends for the page.
 */
import type { TicketStore } from './tickets.ts';

export const MAX_PER_DESKTOP = 4;
export const MAX_PER_USER = 10;

/** Why a console ends. */
export type EndReason = 'desktop stopped' | 'session ended' | 'not allowed';

export interface ConsoleLease {
  userId: string;
  sessionId: string;
  desktopId: string;
  /** viewerAttached was called: viewerDetached is owed once. */
  attached: boolean;
  /** Released (closed, refused or revoked): an upgrade in flight must not go on. */
  done: boolean;
  /** The slot counted across the nodes, given back with the lease. */
  shared?: { release(): void } | undefined;
}

export interface ConsoleLeasesDeps {
  tickets: TicketStore;
  /**
   * Takes a console slot counted across the nodes (the same limits), or answers undefined when
   * the user or the desktop is at its limit there. Absent on a single node.
   */
  slot?(userId: string, desktopId: string): Promise<{ release(): void } | undefined>;
  viewerDetached?(desktopId: string): void;
  log: { warn(obj: object, msg?: string): void };
}

export abstract class ConsoleLeases<L extends ConsoleLease> {
  private readonly byDesktop = new Map<string, Set<L>>();
  private readonly byUser = new Map<string, Set<L>>();
  private readonly rechecks = new Map<string, { again: boolean }>();

  constructor(private readonly base: ConsoleLeasesDeps) {}

  /** May the lease's user still open its desktop, and does it run? (looked up now) */
  protected abstract allowed(lease: L): Promise<{ ownerOk: boolean; running: boolean }>;
  /** Cuts the lease's upstream connection (called on every release). */
  protected abstract cut(lease: L): void;
  /** Ends an open or opening console for the page (the lease is already released). */
  protected abstract finish(lease: L, reason: EndReason): void;

  /** Consoles of a desktop (open or being opened). */
  count(desktopId: string): number {
    return this.byDesktop.get(desktopId)?.size ?? 0;
  }

  /** Login sessions that hold a console. */
  sessions(): Set<string> {
    const out = new Set<string>();
    for (const set of this.byUser.values()) for (const lease of set) out.add(lease.sessionId);
    return out;
  }

  /** Closes every console of a desktop (it stopped, was deleted, or changed owner). */
  closeDesktop(desktopId: string): void {
    for (const lease of [...(this.byDesktop.get(desktopId) ?? [])])
      this.end(lease, 'desktop stopped');
    this.base.tickets.revokeDesktop(desktopId);
  }

  /** Closes every console opened from a login session and forgets its tickets (it ended). */
  closeSession(sessionId: string): void {
    for (const set of [...this.byUser.values()])
      for (const lease of [...set])
        if (lease.sessionId === sessionId) this.end(lease, 'session ended');
    this.base.tickets.revokeSession(sessionId);
  }

  /** Closes every console (the server is closing). */
  closeAll(): void {
    for (const set of [...this.byUser.values()])
      for (const lease of [...set]) this.end(lease, 'desktop stopped');
  }

  /**
   * Looks again at every console of a desktop (its record changed: owner, state) and closes those
   * whose user may no longer open it. Overlapping calls for one desktop run one after the other.
   */
  recheck(desktopId: string): void {
    if (!this.byDesktop.has(desktopId)) return;
    const running = this.rechecks.get(desktopId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.rechecks.set(desktopId, state);
    const run = async (): Promise<void> => {
      do {
        state.again = false;
        for (const lease of [...(this.byDesktop.get(desktopId) ?? [])]) {
          if (lease.done) continue;
          const target = await this.allowed(lease);
          if (!target.ownerOk) this.end(lease, 'not allowed');
          else if (!target.running) this.end(lease, 'desktop stopped');
        }
      } while (state.again);
    };
    void run()
      .catch((err: unknown) => this.base.log.warn({ err }, 'console recheck failed'))
      .finally(() => this.rechecks.delete(desktopId));
  }

  /** Looks again at every console of a user (the account changed: role, group). */
  recheckUser(userId: string): void {
    const desktops = new Set([...(this.byUser.get(userId) ?? [])].map((l) => l.desktopId));
    for (const desktopId of desktops) this.recheck(desktopId);
  }

  /** Reserves a slot for a new console, or undefined beyond the limits. */
  protected reserve(lease: L): L | undefined {
    const forDesktop = this.byDesktop.get(lease.desktopId) ?? new Set<L>();
    const forUser = this.byUser.get(lease.userId) ?? new Set<L>();
    if (forDesktop.size >= MAX_PER_DESKTOP || forUser.size >= MAX_PER_USER) return undefined;
    forDesktop.add(lease);
    forUser.add(lease);
    this.byDesktop.set(lease.desktopId, forDesktop);
    this.byUser.set(lease.userId, forUser);
    return lease;
  }

  /**
   * Frees the slot of a lease (once), cuts its upstream connection and tells the idle manager the
   * viewer left (once). Safe to call again: an upgrade that was in flight calls it when it notices.
   */
  protected release(lease: L): void {
    if (!lease.done) {
      lease.done = true;
      const forDesktop = this.byDesktop.get(lease.desktopId);
      forDesktop?.delete(lease);
      if (forDesktop?.size === 0) this.byDesktop.delete(lease.desktopId);
      const forUser = this.byUser.get(lease.userId);
      forUser?.delete(lease);
      if (forUser?.size === 0) this.byUser.delete(lease.userId);
    }
    lease.shared?.release();
    lease.shared = undefined;
    this.cut(lease);
    if (lease.attached) {
      lease.attached = false;
      this.base.viewerDetached?.(lease.desktopId);
    }
  }

  /** Ends a console now. */
  protected end(lease: L, reason: EndReason): void {
    this.release(lease);
    this.finish(lease, reason);
  }

  /**
   * Takes the lease's slot counted across the nodes, when there are several: `full` (the lease
   * released) beyond the limits there, `gone` when the lease was released meanwhile.
   */
  protected async takeShared(lease: L): Promise<'ok' | 'full' | 'gone'> {
    if (!this.base.slot) return 'ok';
    const shared = await this.base.slot(lease.userId, lease.desktopId);
    if (!shared) {
      this.release(lease);
      return 'full';
    }
    lease.shared = shared;
    if (!lease.done) return 'ok';
    this.release(lease);
    return 'gone';
  }
}
