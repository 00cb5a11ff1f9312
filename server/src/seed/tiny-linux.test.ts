import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TINY_LINUX_MODULES, syslinuxConfig, tinyLinuxTextFiles } from './tiny-linux-files.ts';
import { writeTinyLinuxDisk } from './tiny-linux.ts';

describe('Tiny Linux guest', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tiny-linux-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes the SSH keys on the kernel command line, base64 in one word', () => {
    const keys = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG0 someone@example.org\n';
    const cfg = syslinuxConfig(keys);
    const word = /tiny\.keys=(\S+)/.exec(cfg)?.[1] ?? '';
    expect(Buffer.from(word, 'base64').toString()).toBe(keys);
    expect(cfg).toContain('INITRD initrd.gz');
    expect(cfg).toMatch(/APPEND .*cryptomgr\.notests/);
    expect(syslinuxConfig('  \n')).not.toContain('tiny.keys');
  });

  it('loads each module after the ones it needs, and logs in the console account', () => {
    const order = [...TINY_LINUX_MODULES];
    expect(order.indexOf('virtio_ring')).toBeLessThan(order.indexOf('virtio'));
    expect(order.indexOf('virtio_pci')).toBeLessThan(order.indexOf('virtio_net'));
    expect(order.indexOf('net_failover')).toBeLessThan(order.indexOf('virtio_net'));
    expect(order.indexOf('virtio_pci')).toBeLessThan(order.indexOf('virtio-rng'));
    const files = tinyLinuxTextFiles({ user: 'isard', passwordHash: '$6$salt$hash' });
    const text = (p: string) => files.find((f) => f.path === p)?.text ?? '';
    expect(text('etc/passwd')).toContain('isard:$6$salt$hash:1000:1000');
    expect(text('etc/inittab')).toContain('tty1::respawn:/sbin/getty');
    expect(text('etc/rc')).toContain('udhcpc');
    expect(text('etc/rc')).toContain('httpd -h /www -p 80');
    expect(text('etc/rc')).toContain('dropbear -R -s');
    // The console account trusts the keys too; HTTPS answers on 443.
    expect(text('etc/rc')).toContain('for home in /root /home/isard; do');
    expect(text('etc/rc')).toContain('openssl s_server -quiet -accept 443');
  });

  it('writes a qcow2 disk from the machine cache, once per set of inputs', async () => {
    const disk = path.join(dir, 'images', 'tiny-linux.qcow2');
    expect(await writeTinyLinuxDisk(disk)).toBe(true);
    const info = JSON.parse(
      execFileSync('qemu-img', ['info', '--output=json', disk], { encoding: 'utf8' }),
    ) as { format: string; 'virtual-size': number };
    expect(info.format).toBe('qcow2');
    expect(info['virtual-size']).toBe(40 * 1024 * 1024);
    expect(readFileSync(`${disk}.stamp`, 'utf8')).toMatch(/^[0-9a-f]{64}$/);
    expect(await writeTinyLinuxDisk(disk)).toBe(false);
    // Other keys are other inputs: another disk.
    expect(await writeTinyLinuxDisk(disk, { authorizedKeys: 'ssh-ed25519 AAAA k\n' })).toBe(true);
  }, 60_000);
});
