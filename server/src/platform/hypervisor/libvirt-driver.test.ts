import { execFile } from 'node:child_process';
import { chmodSync, existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiskImages } from './disk-images.ts';
import { describeDriver } from './driver-suite.ts';
import { HostDisks } from './host-disks.ts';
import { hostDiskDir, templateVolume } from './host-volumes.ts';
import { createLibvirtDriver } from './libvirt-driver.ts';
import {
  destroySessionDomains,
  ensureTestUser,
  freePort,
  sessionDomainPid,
  startSshTestHost,
  type SshTestHost,
} from './libvirt-test-host.ts';
import { demoImages, demoSpec, tempDataDir } from './test-support.ts';
import type { Hypervisor } from './types.ts';
import { VirshSession } from './virsh-session.ts';

const execFileAsync = promisify(execFile);
const USER = 'vdi-hv-a';
/** Domain names of this run: a run never touches another's domains on the shared test user. */
const PREFIX = `t${process.pid}-`;

describeDriver('libvirt driver (qemu+ssh to a session daemon on loopback, TCG)', async () => {
  const user = ensureTestUser(USER);
  const host = await startSshTestHost(user);
  const tmp = tempDataDir('vdi-libvirt-driver-');
  // The session daemon's QEMU runs as the test user: it walks into the data dir to its disks.
  chmodSync(tmp.dir, 0o755);
  return {
    dataDir: tmp.dir,
    make: () =>
      createLibvirtDriver({
        uri: host.uri,
        dataDir: tmp.dir,
        accel: 'tcg',
        domainPrefix: PREFIX,
        diskOwner: { uid: user.uid, gid: user.gid },
        pollMs: 1000,
      }),
    pidOf: (rt) => sessionDomainPid(user, `${PREFIX}${rt.id}`),
    exitCodes: false,
    exitSignals: false,
    killedReason: /ended unexpectedly|disappeared/,
    staleReason: /no longer runs on qemu\+ssh:\/\/vdi-hv-a@127\.0\.0\.1:\d+\/session$/,
    spiceTls: false,
    runFiles: ['runtime.json'],
    keptFiles: [],
    cleanup: async () => {
      destroySessionDomains(user, PREFIX);
      await host.stop();
      tmp.cleanup();
    },
  };
});

describe('libvirt connection latency', () => {
  let host: SshTestHost;
  beforeAll(async () => {
    host = await startSshTestHost(ensureTestUser(USER));
  });
  afterAll(async () => {
    await host.stop();
  });

  /** Time of one `virsh list --name` run as a process of its own (a connection per call). */
  async function oneShot(virsh: string, uri: string): Promise<number> {
    const t = performance.now();
    await execFileAsync(virsh, ['-q', '-c', uri, 'list', '--name'], { cwd: '/' });
    return performance.now() - t;
  }

  /**
   * Through a long-lived virsh: the first call (connecting, and a `domstate` of a missing domain),
   * then the median of 21 `list --name`.
   */
  async function medianCall(session: VirshSession): Promise<{ first: number; median: number }> {
    const t0 = performance.now();
    await expect(session.run(['domstate', `${PREFIX}none`])).rejects.toThrow(
      /failed to get domain/,
    );
    const first = performance.now() - t0;
    const times: number[] = [];
    for (let i = 0; i < 21; i++) {
      const t = performance.now();
      expect(await session.run(['list', '--name'])).toBeTypeOf('string');
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { first, median: times[10] ?? 0 };
  }

  it('answers one call in a few milliseconds over SSH and directly, the connection kept open', async () => {
    const ssh = new VirshSession({ uri: host.uri });
    const direct = new VirshSession({ uri: 'qemu:///session', virsh: host.directVirsh });
    try {
      const overSsh = await medianCall(ssh);
      const local = await medianCall(direct);
      const sshOnce = await oneShot('virsh', host.uri);
      const localOnce = await oneShot(host.directVirsh, 'qemu:///session');
      console.log(
        `[measure] one virsh call: over SSH ${overSsh.median.toFixed(2)} ms (connect + first ${overSsh.first.toFixed(0)} ms, ` +
          `a virsh process per call ${sshOnce.toFixed(0)} ms), direct ${local.median.toFixed(2)} ms ` +
          `(connect + first ${local.first.toFixed(0)} ms, a virsh process per call ${localOnce.toFixed(0)} ms)`,
      );
      expect(overSsh.median).toBeLessThan(100);
      expect(local.median).toBeLessThan(100);
    } finally {
      ssh.close();
      direct.close();
    }
  });
});

describe('libvirt driver and a host that does not answer', () => {
  it('refuses a start with start_failed naming the host (not its key file), and runs nothing', async () => {
    const tmp = tempDataDir('vdi-libvirt-down-');
    const port = await freePort();
    const host = `qemu+ssh://nobody@127.0.0.1:${port}/session`;
    const driver = createLibvirtDriver({
      uri: `${host}?keyfile=/nonexistent/key&no_verify=1`,
      dataDir: tmp.dir,
      domainPrefix: PREFIX,
    });
    try {
      const disk = path.join(tmp.dir, 'disk.qcow2');
      await driver.prepareDisk({ path: disk, backingFile: (await demoImages()).template });
      const error: unknown = await driver.start(demoSpec('down', disk)).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'HypervisorError', code: 'start_failed' });
      const message = error instanceof Error ? error.message : '';
      expect(message).toContain(host);
      expect(message).not.toContain('keyfile');
      expect(await driver.status('down')).toBe('absent');
      expect(await driver.list()).toEqual([]);
      await expect(driver.pause('down')).rejects.toMatchObject({ code: 'not_running' });
      await expect(driver.adopt()).rejects.toMatchObject({ code: 'command_failed' });
      // the disk is not held by a domain that never ran
      await driver.deleteDisk(disk);
    } finally {
      await driver.close();
      tmp.cleanup();
    }
  });
});

describe('disks as volumes of two libvirt hosts’ storage pools (over SSH, no guest)', () => {
  const POOL = `t${process.pid}`;
  const names = ['vdi-hv-a', 'vdi-hv-b'] as const;
  let hosts: SshTestHost[] = [];
  let drivers: Hypervisor[] = [];
  const tmp = tempDataDir('vdi-libvirt-pools-');
  const qemuImg = (...args: string[]) => execFileAsync('qemu-img', args);

  beforeAll(async () => {
    hosts = await Promise.all(names.map((n) => startSshTestHost(ensureTestUser(n))));
    drivers = hosts.map((h, i) =>
      createLibvirtDriver({
        uri: h.uri,
        dataDir: path.join(tmp.dir, 'hosts', `h${i}`),
        domainPrefix: PREFIX,
        pool: { name: POOL },
        volumeDir: hostDiskDir(tmp.dir, `h${i}`),
      }),
    );
  });
  afterAll(async () => {
    for (const [i, host] of hosts.entries()) {
      const dir = await drivers[i]?.volumes?.pathOf('x').catch(() => undefined);
      if (dir) rmSync(path.dirname(dir), { recursive: true, force: true });
      await drivers[i]?.close();
      for (const step of ['pool-destroy', 'pool-undefine'])
        await execFileAsync(host.directVirsh, ['-c', 'qemu:///session', step, POOL]).catch(
          () => undefined,
        );
      await host.stop();
    }
    tmp.cleanup();
  });

  it('makes each pool, brings a template chain and two disks there with progress, copies between pools and back', async () => {
    const disks = new HostDisks({
      local: new DiskImages('qemu-img', () => false),
      dataDir: tmp.dir,
      driverOf: (id) => drivers[Number(id.slice(1))],
    });
    // A template on a base (a chain of two), a desktop disk that never ran and one with data.
    const base = (await demoImages()).template;
    const template = path.join(tmp.dir, 'templates', 'tpl.qcow2');
    await disks.prepareDisk({ path: template, backingFile: base });
    const fresh = path.join(tmp.dir, 'disks', 'fresh.qcow2');
    const used = path.join(tmp.dir, 'disks', 'used.qcow2');
    for (const file of [fresh, used])
      await disks.prepareDisk({ path: file, backingFile: template });
    await execFileAsync('qemu-io', ['-c', 'write -P 0x5a 1M 64k', used]);

    const percents: number[] = [];
    const t0 = performance.now();
    const onA = await disks.stageDisk('h0', used, (p) => percents.push(p));
    const seconds = (performance.now() - t0) / 1000;
    expect(onA).toBe(path.join(hostDiskDir(tmp.dir, 'h0'), 'used.qcow2'));
    expect(percents.at(-1)).toBe(100);
    expect(percents.length).toBeGreaterThan(2);
    const pool = (i: number) => drivers[i]?.volumes;
    const poolA = pool(0);
    const dirA = path.dirname((await poolA?.pathOf('x')) ?? '');
    const dirB = path.dirname((await pool(1)?.pathOf('x')) ?? '');
    expect(dirA).not.toBe(dirB);
    expect(existsSync(dirA) && existsSync(dirB)).toBe(true);
    for (const image of [base, template])
      expect(await poolA?.exists(templateVolume(image))).toBe(true);
    // The uploaded disk reads as the portal's, its chain found in the pool by relative names.
    await qemuImg('compare', '-U', used, path.join(dirA, 'used.qcow2'));
    // The disk that never ran is made on the host, an overlay on the template's volume.
    const made = await disks.stageDisk('h0', fresh);
    expect(await disks.diskInfo(made)).toMatchObject({
      backingFile: path.join(dirA, templateVolume(template)),
    });
    const bytes = [base, template, used].reduce((sum, f) => sum + statSync(f).size, 0);
    const mib = bytes / 1024 / 1024 / seconds;
    console.log(
      `[measure] base + template + disk (5 MB, a connection each) into a pool over SSH: ${mib.toFixed(1)} MB/s`,
    );

    // A call's latency: one volume's XML.
    const times: number[] = [];
    for (let i = 0; i < 11; i++) {
      const t = performance.now();
      await disks.diskInfo(made);
      times.push(performance.now() - t);
    }
    console.log(`[measure] vol-dumpxml over SSH: ${times.sort((a, b) => a - b)[5]?.toFixed(2)} ms`);

    // Resize and delete act on the volumes; a missing volume is disk_not_found.
    expect((await disks.resizeDisk(made, 2)).virtualSize).toBe(2 * 1024 ** 3);
    await disks.deleteDisk(made);
    await expect(disks.diskInfo(made)).rejects.toMatchObject({ code: 'disk_not_found' });

    // Host to host: downloaded from A into an upload to B (with the chain B lacks), then back to
    // the portal as a file on the template; each copy reads as the original.
    const moved: number[] = [];
    const onB = await disks.copyDisk(onA, 'h1', template, (p) => moved.push(p));
    expect(moved.at(-1)).toBe(100);
    await qemuImg('compare', '-U', used, path.join(dirB, 'used.qcow2'));
    await disks.deleteDisk(used);
    const back = await disks.copyDisk(onB, 'local', template);
    expect(back).toBe(used);
    expect((await disks.diskInfo(back)).backingFile).toBe(template);
    await qemuImg('compare', '-U', back, path.join(dirB, 'used.qcow2'));
  });
});
