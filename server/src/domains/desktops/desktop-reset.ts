/**
 * Reset (a hard reboot) of a desktop whose guest runs: only from a state that offers a console; a
 * VM that is gone is `desktop_not_running`, a hypervisor that does not answer
 * `hypervisors_not_available`. The desktop keeps its state.
 */
import type { DesktopState } from '../../../../src/generated/types.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { HypervisorError, type Hypervisor } from '../../platform/hypervisor/types.ts';
import { desktopStates, inSet } from '../../../../src/generated/policy.ts';
import type { EngineDesktop } from './types.ts';

export async function resetDesktop(
  desktop: EngineDesktop,
  driver: Hypervisor,
): Promise<DesktopState> {
  if (!inSet(desktopStates.openable, desktop.state))
    throw new ApiError(
      'precondition_required',
      `Desktop can not be reset from ${desktop.state}`,
      'unable_to_reset_desktop_from',
      { state: desktop.state },
    );
  await driver.reset(desktop.id).catch((err: unknown) => {
    throw err instanceof HypervisorError && err.code === 'not_running'
      ? new ApiError('conflict', 'The desktop is not running', 'desktop_not_running', null)
      : new ApiError(
          'service_unavailable',
          'The hypervisor did not answer',
          'hypervisors_not_available',
        );
  });
  return desktop.state;
}
