/**
 * A hypervisor host that answers again after it fell silent. Its desktops were turned `failed`
 * with their runtime kept (the ports and passwords of the domain the host may still run); now:
 * - a desktop still `failed` whose domain still runs there is adopted: `started` again with that
 *   runtime, so its consoles open as before (a paused domain is resumed first);
 * - a desktop still `failed` whose domain is gone settles `stopped`;
 * - every domain the host runs for a desktop that no longer runs there (started elsewhere
 *   meanwhile, stopped, deleted) is stopped, so a desktop never runs on two hosts.
 * Each change is a conditional update from `failed`: a start of the desktop elsewhere that came
 * first wins, and the domain it would have adopted is then stopped.
 */
import type { IdleManager } from '../../platform/hypervisor/idle.ts';
import { LOCAL_HOST } from '../../platform/hypervisor/host-drivers.ts';
import type { Hypervisor } from '../../platform/hypervisor/types.ts';
import { desktopStates, inSet } from '../../../../src/generated/policy.ts';
import type { DesktopStore } from './types.ts';

export interface HostReturnParts {
  store: DesktopStore;
  idle?: IdleManager | undefined;
  warn(obj: object, msg: string): void;
}

/** Settles the desktops and domains of a host that answers again (see the module comment). */
export async function settleReturnedHost(
  parts: HostReturnParts,
  hostId: string,
  driver: Hypervisor,
): Promise<void> {
  const { store } = parts;
  // The host's domains as it runs them now (watched again when this driver lost track of them).
  await driver.adopt().catch((err: unknown) => {
    parts.warn({ err, host: hostId }, 'returning host not adopted');
  });
  for (const desktop of await store.listInStates(['failed'])) {
    if ((desktop.host ?? LOCAL_HOST) !== hostId) continue;
    const runtime = desktop.runtime;
    const status = runtime ? await driver.status(desktop.id) : 'absent';
    if (runtime && (status === 'running' || status === 'paused')) {
      if (status === 'paused') await driver.resume(desktop.id);
      const back = await store.update(desktop.id, { state: 'started', detail: null, runtime }, [
        'failed',
      ]);
      if (back) parts.idle?.started(desktop.id);
      continue;
    }
    await store.update(desktop.id, { state: 'stopped', detail: null, runtime: null }, ['failed']);
  }
  for (const domain of await driver.list()) {
    const desktop = await store.get(domain.id);
    const runsThere =
      !!desktop &&
      inSet(desktopStates.maybeRunning, desktop.state) &&
      (desktop.host ?? LOCAL_HOST) === hostId;
    if (runsThere) continue;
    await driver.stop(domain.id).catch((err: unknown) => {
      parts.warn({ err, id: domain.id, host: hostId }, 'leftover domain not stopped');
    });
  }
}
