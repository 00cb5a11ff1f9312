/**
 * The network part of the QEMU command (pure, no I/O): one `-netdev` and one `virtio-net-pci` per
 * network card, and the MAC address each desktop's card gets.
 *
 * The host side of a card ("backend") is chosen by the driver's host networks
 * (`host-networks.ts`): a TAP device already plugged into the network's Linux bridge when the
 * server runs as root, QEMU's user-mode network (`-netdev user`, outbound only, no address the host
 * can reach) otherwise. No card: `-nic none`.
 */
import { createHash } from 'node:crypto';
import { HypervisorError } from './types.ts';
import type { DomainNic } from './types.ts';

/** The host side of one network card. */
export type NetdevBackend = NonNullable<DomainNic['backend']>;

const MAC_PATTERN = /^52:54:00(:[0-9a-f]{2}){3}$/;
const IFNAME_PATTERN = /^[A-Za-z0-9_-]{1,15}$/;

/**
 * The MAC address of card `index` of desktop `id`: QEMU's locally administered prefix 52:54:00 and
 * three bytes of a hash of both, so a desktop keeps its address (and its DHCP lease) across starts.
 */
export function macFor(id: string, index = 0): string {
  const digest = createHash('sha256').update(`${id}\0${index}`).digest();
  const bytes = [...digest.subarray(0, 3)].map((b) => b.toString(16).padStart(2, '0'));
  return `52:54:00:${bytes.join(':')}`;
}

/** The `-netdev`/`-device` arguments of the cards that have a host side, or `-nic none`. */
export function nicArgs(nics: readonly DomainNic[]): string[] {
  const wired = nics.filter((nic) => nic.backend);
  if (wired.length === 0) return ['-nic', 'none'];
  const args: string[] = [];
  wired.forEach((nic, i) => {
    if (!MAC_PATTERN.test(nic.mac))
      throw new HypervisorError('invalid_spec', `invalid MAC address ${JSON.stringify(nic.mac)}`);
    const backend = nic.backend;
    if (backend?.kind === 'tap') {
      if (!IFNAME_PATTERN.test(backend.ifname))
        throw new HypervisorError('invalid_spec', `invalid TAP name ${backend.ifname}`);
      args.push('-netdev', `tap,id=net${i},ifname=${backend.ifname},script=no,downscript=no`);
    } else {
      args.push('-netdev', `user,id=net${i}`);
    }
    args.push('-device', `virtio-net-pci,netdev=net${i},mac=${nic.mac}`);
  });
  return args;
}
