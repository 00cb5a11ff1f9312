/**
 * Ends a process group a benchmark started detached (a portal and the QEMUs it spawned): SIGTERM,
 * a grace period, then SIGKILL. A group already gone is fine.
 */
import { setTimeout as sleep } from 'node:timers/promises';

const signal = (pid: number, name: NodeJS.Signals): void => {
  try {
    process.kill(-pid, name);
  } catch {
    // already gone
  }
};

export async function stopProcessGroup(pid: number | undefined, graceMs = 1500): Promise<void> {
  if (!pid) return;
  signal(pid, 'SIGTERM');
  await sleep(graceMs);
  signal(pid, 'SIGKILL');
}
