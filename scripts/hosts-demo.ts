/**
 * `npm run hosts:demo` (as root): two libvirt hypervisor hosts on this machine, as the tests make
 * them: two local users (`vdi-demo-a`, `vdi-demo-b`) whose session daemons (`qemu:///session`)
 * run the desktops, each reached over its own private `sshd` on loopback like a remote host. It
 * prints what to enter in the Hypervisors screen of a running portal (Administration ->
 * Hypervisors -> New) and then takes commands, so a newcomer can watch placement spread starts
 * over both hosts and a host fail and come back:
 *   down a | down b   the host's sshd and its connections end (its desktops fail within 10 s)
 *   up a | up b       it answers again (its running domains are adopted)
 *   quit              ends the sshds (the hosts' domains keep running until stopped)
 * The desktops' disks and media go into each host's storage pool `vdi` (in the user's
 * `~/.local/share/libvirt/images/vdi`, made at the first start, the template and the media copied
 * there with their progress on the card). Both users are in the group `vdi-demo-hosts`: start the
 * portal with `HYPERVISOR_DISK_OWNER=<uid of vdi-demo-a>:<gid of vdi-demo-hosts>` (printed) and a
 * DATA_DIR they can walk into (mode 0755), so both hosts' QEMUs may read a file a host is given at
 * its path on the portal (a disk path outside the pools).
 * Needs the packages libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients openssh-server.
 */
import { execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import {
  ensureTestUser,
  startSshTestHost,
  type SshTestHost,
} from '../server/src/platform/hypervisor/libvirt-test-host.ts';

const GROUP = 'vdi-demo-hosts';

if (process.getuid?.() !== 0) {
  console.error('hosts:demo needs root (it creates two users and starts two sshd).');
  process.exit(1);
}
for (const tool of ['virsh', '/usr/sbin/sshd', 'qemu-system-x86_64']) {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
  } catch {
    console.error(
      `${tool} is missing: apt-get install -y libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients openssh-server qemu-system-x86`,
    );
    process.exit(1);
  }
}

execFileSync('groupadd', ['-f', GROUP]);
const gid = Number(execFileSync('getent', ['group', GROUP], { encoding: 'utf8' }).split(':')[2]);
const hosts = new Map<string, { name: string; host: SshTestHost; consoleAddress: string }>();
for (const [key, consoleAddress] of [
  ['a', '127.0.0.1'],
  ['b', '127.0.0.2'],
] as const) {
  const user = ensureTestUser(`vdi-demo-${key}`);
  execFileSync('usermod', ['-aG', GROUP, user.name]);
  hosts.set(key, { name: `demo-${key}`, host: await startSshTestHost(user), consoleAddress });
}

const first = hosts.get('a');
console.log(
  `\nStart the portal with HYPERVISOR_DISK_OWNER=${first?.host.user.uid ?? 0}:${gid} (and chmod 755 its DATA_DIR),`,
);
console.log('then add these hosts in Administration -> Hypervisors -> New:\n');
for (const { name, host, consoleAddress } of hosts.values()) {
  const keyfile = /keyfile=([^&]+)/.exec(host.uri)?.[1] ?? '';
  console.log(`  Name             ${name}`);
  console.log(`  Libvirt URI      ${host.uri.replace(/keyfile=[^&]+&?/, '')}`);
  console.log(`  SSH key file     ${keyfile}`);
  console.log(`  Console address  ${consoleAddress}`);
  console.log('  vCPUs 4, Memory (MiB) 8192\n');
}
console.log('Commands: down a | down b | up a | up b | quit');

const stopAll = async () => {
  for (const { host } of hosts.values()) await host.stop();
};
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [command, key = ''] = line.trim().split(/\s+/);
  const entry = hosts.get(key);
  if (command === 'quit') {
    lines.close();
    return;
  }
  if (!entry || (command !== 'down' && command !== 'up')) {
    console.log('Commands: down a | down b | up a | up b | quit');
    return;
  }
  void (command === 'down' ? entry.host.down() : entry.host.up()).then(() =>
    console.log(`${entry.name} is ${command === 'down' ? 'silent' : 'answering again'}`),
  );
});
lines.on('close', () => void stopAll().then(() => process.exit(0)));
process.on('SIGINT', () => lines.close());
