/**
 * The reconciler: every row in a transitional or running state is settled against what the driver
 * really runs, so nothing stays `starting`, `stopping` or `shutting-down` forever and a VM that is
 * gone makes its desktop `failed` with the reason; a VM's exit event settles its desktop the same way.
 */
import type { DesktopState } from '../../../../src/generated/types.ts';
import type { ExitInfo, Hypervisor } from '../../platform/hypervisor/types.ts';
import type { DesktopStore, EngineDesktop } from './types.ts';
import { desktopStates, inSet } from '../../../../src/generated/policy.ts';

/** What the reconciler needs of the engine. */
export interface ReconcileParts {
  store: DesktopStore;
  driver: Hypervisor;
  /** Whether this process settles the row (its VM runs here, or it is the leader's share). */
  reconciles(desktop: EngineDesktop): boolean;
  shutdownTimeoutMs: number;
  transitionalLimitMs: number;
  /** Whether the engine is starting the desktop or has it queued. */
  isBusy(id: string): boolean;
  /** Queues a start of the desktop again. */
  requeue(id: string): Promise<void>;
  hasShutdownTimer(id: string): boolean;
  armShutdownTimer(id: string): void;
  forceStop(id: string, from: readonly DesktopState[]): Promise<void>;
  /** Creates the desktop's disk in the background. */
  createDiskInBackground(id: string): void;
}

/** Settles every row whose state disagrees with the hypervisor. Safe to run any time. */
export async function reconcileRows(parts: ReconcileParts): Promise<void> {
  const rows = await parts.store.listInStates([
    ...new Set([...desktopStates.transitional, ...desktopStates.vm]),
  ]);
  const now = Date.now();
  for (const listed of rows) {
    if (parts.isBusy(listed.id) || !parts.reconciles(listed)) continue;
    // The row as it is now: a start that finished since the list was read must not be taken
    // for an interrupted one (its VM would be stopped and the start lost).
    const d = await parts.store.get(listed.id);
    if (
      !d ||
      d.state !== listed.state ||
      d.updated_at.getTime() !== listed.updated_at.getTime() ||
      !parts.reconciles(d)
    )
      continue;
    const status = await parts.driver.status(d.id);
    // A start that began while the row and the VM's status were read: its boot settles the row.
    if (parts.isBusy(d.id)) continue;
    const alive = status === 'running' || status === 'paused';
    const age = now - d.updated_at.getTime();
    switch (d.state) {
      case 'started':
      case 'waitingip':
      case 'paused':
      case 'reset':
        if (!alive) {
          const last = await parts.driver.lastExit(d.id);
          await parts.store.update(
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
          await parts.store.update(d.id, { state: 'started', queue: null }, ['starting']);
        else if (alive) {
          await parts.driver.stop(d.id).catch(() => undefined);
          await parts.requeue(d.id);
        } else {
          await parts.requeue(d.id);
        }
        break;
      case 'stopping':
        if (alive) await parts.driver.stop(d.id).catch(() => undefined);
        await parts.store.update(d.id, { state: 'stopped', runtime: null }, ['stopping']);
        break;
      case 'shutting-down':
        if (!alive)
          await parts.store.update(d.id, { state: 'stopped', runtime: null }, ['shutting-down']);
        else if (!parts.hasShutdownTimer(d.id)) {
          if (age > parts.shutdownTimeoutMs) await parts.forceStop(d.id, ['shutting-down']);
          else parts.armShutdownTimer(d.id);
        }
        break;
      case 'creating':
        // Not being created by this process (new seed rows, or interrupted by a restart or a node's
        // death): create the disk (under its lease: a node making it now keeps it).
        parts.createDiskInBackground(d.id);
        break;
      case 'updating':
        if (age > parts.transitionalLimitMs)
          await parts.store.update(
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

/** A VM ended: its desktop is `stopped` when that was meant, `failed` with the reason otherwise. */
export async function settleExit(store: DesktopStore, id: string, info: ExitInfo): Promise<void> {
  const desktop = await store.get(id);
  if (!desktop) return;
  if (
    inSet(desktopStates.stopping, desktop.state) ||
    (info.expected && desktop.state !== 'starting')
  ) {
    await store.update(id, { state: 'stopped', runtime: null, detail: null }, [
      ...desktopStates.stopping,
      ...desktopStates.vm,
    ]);
  } else if (inSet(desktopStates.vm, desktop.state)) {
    await store.update(
      id,
      { state: 'failed', runtime: null, detail: info.reason },
      desktopStates.vm,
    );
  }
}
