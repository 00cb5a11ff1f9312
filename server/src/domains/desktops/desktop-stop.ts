/**
 * Stopping a desktop: a guest that runs is asked to shut down (its power button, a timer forces
 * the stop if it does not); a start not done yet, a shutdown asked again or a paused guest are
 * stopped by force; a desktop already stopped, stopping or failed is answered as it is.
 */
import type { DesktopState } from '../../../../src/generated/types.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import type { Hypervisor } from '../../platform/hypervisor/types.ts';
import { desktopState, desktopStates } from '../../../../src/generated/policy.ts';
import type { DesktopStore, EngineDesktop, EngineLogger } from './types.ts';

/** States whose guest can be asked to shut down (a paused one can not see the button). */
const SHUTDOWN_ABLE: readonly DesktopState[] = desktopStates.vm.filter(
  (s) => s !== desktopState.paused,
);

export interface StopParts {
  store: DesktopStore;
  driver: Hypervisor;
  idle: IdleManager | undefined;
  log: EngineLogger;
  mustGet(id: string): Promise<EngineDesktop>;
  /** Takes the desktop's start out of the start queue, if it waits there. */
  unqueue(id: string): void;
  /** State → stopping from one of `from`, the VM killed, then stopped. */
  forceStop(id: string, from: readonly DesktopState[]): Promise<void>;
  /** Forces the stop if the guest has not shut down in time. */
  armShutdownTimer(id: string): void;
}

export async function stopDesktop(parts: StopParts, id: string): Promise<DesktopState> {
  const desktop = await parts.mustGet(id);
  switch (desktop.state) {
    case 'stopped':
    case 'stopping':
    case 'failed':
      return desktop.state;
    case 'starting':
      // Still queued or booting: cancel the start.
      parts.unqueue(id);
      await parts.forceStop(id, ['starting']);
      return 'stopping';
    case 'started':
    case 'waitingip':
    case 'reset': {
      const updated = await parts.store.update(id, { state: 'shutting-down' }, SHUTDOWN_ABLE);
      if (!updated) return (await parts.mustGet(id)).state;
      await parts.idle?.viewerAttached(id).catch(() => undefined); // a paused guest can't see the power button
      parts.idle?.viewerDetached(id);
      await parts.driver
        .shutdown(id)
        .catch((err: unknown) => parts.log.warn({ err, id }, 'ACPI shutdown failed'));
      parts.armShutdownTimer(id);
      return 'shutting-down';
    }
    case 'shutting-down':
      await parts.forceStop(id, ['shutting-down']);
      return 'stopping';
    case 'paused':
      await parts.forceStop(id, ['paused']);
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
