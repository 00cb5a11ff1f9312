/**
 * A QEMU start with its network cards: the spec's cards are attached (their TAP devices named),
 * QEMU is spawned and makes the devices as it starts, and they are put on their bridges
 * meanwhile (`HostNetworks.plug`), so the start does not wait for `ip` before QEMU.
 */
import type { HostNetworks } from './host-networks.ts';
import type { DomainSpec } from './types.ts';

/**
 * Spawns the domain of `spec` through `spawn` with its cards plugged in while it starts. When
 * the cards cannot be plugged, the started domain is stopped (`stop`) and the plug's error is
 * thrown; when the spawn fails, the plugging is given up and the spawn's error is thrown (the
 * caller releases the cards, or attaches them again for another attempt).
 */
export async function spawnWithCards<T>(
  network: HostNetworks | undefined,
  spec: DomainSpec,
  timeoutMs: number,
  spawn: (wired: DomainSpec) => Promise<T>,
  stop: () => Promise<void>,
): Promise<T> {
  const wired = (await network?.attach(spec)) ?? { ...spec, network: [] };
  const started = new AbortController();
  const plugging = network?.plug(spec.id, started.signal, timeoutMs);
  plugging?.catch(() => undefined);
  let spawned: T;
  try {
    spawned = await spawn(wired);
  } catch (error) {
    started.abort();
    await plugging?.catch(() => undefined);
    throw error;
  }
  try {
    await plugging;
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return spawned;
}
