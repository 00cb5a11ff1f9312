/**
 * Benchmark of the hypervisor hosts, on this machine (as root, with libvirt and sshd installed):
 * the local QEMU driver against libvirt hosts made as the tests make them (a local user's session
 * daemon behind its own sshd on loopback, `libvirt-test-host.ts`), the demo guest (TCG).
 *  1. One driver call: the median of 51 `status()` of a running domain, local QEMU (a QMP query)
 *     vs a libvirt host over SSH (`virsh domstate` through the kept connection).
 *  2. Start -> first frame: from `start()` to the first non-blank screenshot of the guest, local
 *     vs libvirt over SSH (the driver side of the card's Open).
 *  3. Through a portal with both hosts added (`hosts-portal.ts`): click Open -> first frame in
 *     Chromium, a desktop on the host local vs one on host A (`--runs`, default 3, medians), and
 *     start-all of N desktops (`--n`, default 30) placed by the portal over the 2 hosts, from the
 *     start calls until every one is `started`. Needs the SPA built (`npx vite build`).
 *  4. Template copy: a template image of `--mib` MiB (default 256, its clusters all written) copied
 *     from the portal into host A's storage pool (`vol-upload` over SSH), then from A's pool into
 *     B's (`vol-download` streamed into `vol-upload`), in MB/s. The pools (`bench<pid>`) are
 *     removed at the end.
 * Everything it starts is stopped and its temp dirs removed at the end, also after a failure. The
 * load average is printed beside each figure (the machine is shared: read them against it).
 *
 * Usage: npx vite build && npx tsx scripts/bench/hosts.ts [--n 30] [--runs 3] [--mib 256]
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DiskImages } from '../../server/src/platform/hypervisor/disk-images.ts';
import { HostDisks } from '../../server/src/platform/hypervisor/host-disks.ts';
import { hostDiskDir } from '../../server/src/platform/hypervisor/host-volumes.ts';
import { createLibvirtDriver } from '../../server/src/platform/hypervisor/libvirt-driver.ts';
import {
  ensureTestUser,
  startSshTestHost,
  type SshTestHost,
} from '../../server/src/platform/hypervisor/libvirt-test-host.ts';
import { isBlankScreen } from '../../server/src/platform/hypervisor/png.ts';
import { createQemuDriver } from '../../server/src/platform/hypervisor/qemu-driver.ts';
import {
  demoImages,
  demoSpec,
  tempDataDir,
} from '../../server/src/platform/hypervisor/test-support.ts';
import type { Hypervisor } from '../../server/src/platform/hypervisor/types.ts';
import { benchPortal } from './hosts-portal.ts';

const argN = process.argv.indexOf('--n');
const N = argN > 0 ? Number(process.argv[argN + 1]) : 30;
const argRuns = process.argv.indexOf('--runs');
const RUNS = argRuns > 0 ? Number(process.argv[argRuns + 1]) : 3;
const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 256;
const PREFIX = `bench${process.pid}-`;
const POOL = `bench${process.pid}`;
/** The 1-minute load average now, for the figure beside it. */
const load = () => `load ${os.loadavg()[0]?.toFixed(1) ?? '?'}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const tmp = tempDataDir('vdi-bench-hosts-');
chmodSync(tmp.dir, 0o755);
const { template } = await demoImages();
const users = [ensureTestUser('vdi-hv-a'), ensureTestUser('vdi-hv-b')];
const sshHosts: SshTestHost[] = [];
const drivers: Hypervisor[] = [];
const started: { driver: Hypervisor; id: string }[] = [];

const disk = async (driver: Hypervisor, id: string) => {
  const file = path.join(tmp.dir, 'disks', `${id}.qcow2`);
  await driver.prepareDisk({ path: file, backingFile: template });
  return file;
};
const start = async (driver: Hypervisor, id: string) => {
  const spec = demoSpec(id, await disk(driver, id));
  const t0 = performance.now();
  await driver.start(spec);
  started.push({ driver, id });
  return t0;
};
const firstFrame = async (driver: Hypervisor, id: string): Promise<number> => {
  const t0 = await start(driver, id);
  for (;;) {
    const png = await driver.screenshot(id).catch(() => undefined);
    if (png && !isBlankScreen(png)) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 50));
  }
};
const oneCall = async (driver: Hypervisor, id: string): Promise<number> => {
  const times: number[] = [];
  for (let i = 0; i < 51; i++) {
    const t = performance.now();
    await driver.status(id);
    times.push(performance.now() - t);
  }
  return median(times);
};

try {
  const local = createQemuDriver({ dataDir: path.join(tmp.dir, 'local') });
  drivers.push(local);
  for (const [i, user] of users.entries()) {
    const host = await startSshTestHost(user);
    sshHosts.push(host);
    drivers.push(
      createLibvirtDriver({
        uri: host.uri,
        dataDir: path.join(tmp.dir, `host${i}`),
        domainPrefix: PREFIX,
        diskOwner: { uid: user.uid, gid: user.gid },
        pool: { name: POOL },
        volumeDir: hostDiskDir(tmp.dir, `h${i}`),
      }),
    );
  }
  const [, hostA, hostB] = drivers;
  if (!hostA || !hostB) throw new Error('no libvirt hosts');

  const loadFrames = load();
  const frameLocal = await firstFrame(local, 'frame-local');
  const frameLibvirt = await firstFrame(hostA, 'frame-libvirt');
  const callLocal = await oneCall(local, 'frame-local');
  const callLibvirt = await oneCall(hostA, 'frame-libvirt');
  for (const s of started.splice(0)) await s.driver.stop(s.id);

  // A template copied into A's pool from the portal, then from A's pool into B's.
  const image = path.join(tmp.dir, 'templates', 'big.qcow2');
  mkdirSync(path.dirname(image), { recursive: true });
  execFileSync('qemu-img', [
    'create',
    '-q',
    '-f',
    'qcow2',
    image.replace('big', 'seed'),
    `${MIB}M`,
  ]);
  execFileSync('qemu-io', ['-c', `write -P 0x5a 0 ${MIB}M`, image.replace('big', 'seed')]);
  execFileSync('qemu-img', ['convert', '-O', 'qcow2', image.replace('big', 'seed'), image]);
  const bytes = statSync(image).size;
  const hostDisks = new HostDisks({
    local: new DiskImages('qemu-img', () => false),
    dataDir: tmp.dir,
    driverOf: (id) => ({ h0: hostA, h1: hostB })[id],
  });
  const loadCopy = load();
  const t1 = performance.now();
  const onA = await hostDisks.stageDisk('h0', image);
  const upload = bytes / 1e6 / ((performance.now() - t1) / 1000);
  const t2 = performance.now();
  await hostDisks.copyDisk(onA, 'h1', null);
  const between = bytes / 1e6 / ((performance.now() - t2) / 1000);

  const loadPortal = load();
  const portal = await benchPortal(sshHosts, { runs: RUNS, n: N });
  const loadAfter = load();

  console.log('hypervisor hosts bench (TCG demo guest, libvirt over SSH on loopback)');
  console.log(
    `  one driver call (status), median of 51: local QEMU ${callLocal.toFixed(2)} ms, libvirt over SSH ${callLibvirt.toFixed(2)} ms`,
  );
  console.log(
    `  driver start -> first non-blank screenshot: local QEMU ${frameLocal.toFixed(0)} ms, libvirt over SSH ${frameLibvirt.toFixed(0)} ms (${loadFrames})`,
  );
  console.log(
    `  template copy of ${(bytes / 1e6).toFixed(0)} MB over SSH: portal -> pool ${upload.toFixed(1)} MB/s, pool -> pool ${between.toFixed(1)} MB/s (${loadCopy})`,
  );
  const runs = (xs: number[]) => `median ${median(xs)} ms (${xs.join(', ')})`;
  console.log(
    `  click Open -> first frame in Chromium: host local ${runs(portal.openLocal)}, libvirt host A ${runs(portal.openLibvirt)} (${loadPortal})`,
  );
  const { startAll } = portal;
  console.log(
    `  start-all of ${startAll.n} through the portal: ${(startAll.ms / 1000).toFixed(1)} s until all started, split ${JSON.stringify(startAll.split)} (${loadPortal} before, ${loadAfter} after)`,
  );
} finally {
  for (const s of started) await s.driver.stop(s.id).catch(() => undefined);
  for (const d of drivers) {
    const dir = await d.volumes?.pathOf('x').catch(() => undefined);
    if (dir) rmSync(path.dirname(dir), { recursive: true, force: true });
    await d.close();
  }
  for (const h of sshHosts) {
    for (const step of ['pool-destroy', 'pool-undefine'])
      try {
        execFileSync(h.directVirsh, ['-c', 'qemu:///session', step, POOL], { stdio: 'ignore' });
      } catch {
        /* not made */
      }
    await h.stop();
  }
  tmp.cleanup();
}
