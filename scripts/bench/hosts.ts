/**
 * Benchmark of the hypervisor hosts, on this machine (as root, with libvirt and sshd installed):
 * the local QEMU driver against libvirt hosts made as the tests make them (a local user's session
 * daemon behind its own sshd on loopback, `libvirt-test-host.ts`), the demo guest (TCG).
 *  1. One driver call: the median of 51 `status()` of a running domain, local QEMU (a QMP query)
 *     vs a libvirt host over SSH (`virsh domstate` through the kept connection).
 *  2. Start -> first frame: from `start()` to the first non-blank screenshot of the guest, local
 *     vs libvirt over SSH (the driver side of the card's Open; the browser side is
 *     `desktop.ts`, which is the same for both drivers).
 *  3. Start-all: N domains (`--n`, default 4) started at once over 2 libvirt hosts, placed the way
 *     placement does (the host with the most memory free after the start), until all run.
 *  4. Template copy: a template image of `--mib` MiB (default 256, its clusters all written) copied
 *     from the portal into host A's storage pool (`vol-upload` over SSH), then from A's pool into
 *     B's (`vol-download` streamed into `vol-upload`), in MB/s. The pools (`bench<pid>`) are
 *     removed at the end.
 * Everything it starts is stopped and its temp dirs removed at the end.
 *
 * Usage: npx tsx scripts/bench/hosts.ts [--n 4] [--mib 256]
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, statSync } from 'node:fs';
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
import { placeDesktop } from '../../server/src/platform/hypervisor/placement.ts';
import { isBlankScreen } from '../../server/src/platform/hypervisor/png.ts';
import { createQemuDriver } from '../../server/src/platform/hypervisor/qemu-driver.ts';
import {
  demoImages,
  demoSpec,
  tempDataDir,
} from '../../server/src/platform/hypervisor/test-support.ts';
import type { Hypervisor } from '../../server/src/platform/hypervisor/types.ts';

const argN = process.argv.indexOf('--n');
const N = argN > 0 ? Number(process.argv[argN + 1]) : 4;
const argMib = process.argv.indexOf('--mib');
const MIB = argMib > 0 ? Number(process.argv[argMib + 1]) : 256;
const PREFIX = `bench${process.pid}-`;
const POOL = `bench${process.pid}`;
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

  const frameLocal = await firstFrame(local, 'frame-local');
  const frameLibvirt = await firstFrame(hostA, 'frame-libvirt');
  const callLocal = await oneCall(local, 'frame-local');
  const callLibvirt = await oneCall(hostA, 'frame-libvirt');
  for (const s of started.splice(0)) await s.driver.stop(s.id);

  // Start-all over the two libvirt hosts, placed one after the other as the portal does.
  const used = new Map([
    ['a', 0],
    ['b', 0],
  ]);
  const byHost = { a: hostA, b: hostB };
  const placed: { host: 'a' | 'b'; id: string }[] = [];
  for (let i = 0; i < N; i++) {
    const choice = placeDesktop(
      [...used].map(([id, usedMemoryMib]) => ({
        id,
        enabled: true,
        draining: false,
        lastSeen: new Date(),
        memoryMib: 8192,
        usedMemoryMib,
        gpuProfiles: [],
      })),
      { memoryMib: 128, gpuProfiles: [], forced: null },
      { now: new Date(), freshMs: 10_000 },
    );
    if (!('host' in choice)) throw new Error(choice.refused);
    const host = choice.host === 'a' ? 'a' : 'b';
    used.set(host, (used.get(host) ?? 0) + 128);
    placed.push({ host, id: `all-${i}` });
  }
  const disks = await Promise.all(placed.map((p) => disk(byHost[p.host], p.id)));
  const t0 = performance.now();
  // Every start settles before a failure is thrown: a guest that starts after another start
  // failed is still recorded, so the cleanup below stops it.
  const starts = await Promise.allSettled(
    placed.map(async (p, i) => {
      await byHost[p.host].start(demoSpec(p.id, disks[i] ?? ''));
      started.push({ driver: byHost[p.host], id: p.id });
    }),
  );
  const failedStart = starts.find((s) => s.status === 'rejected');
  if (failedStart) throw failedStart.reason;
  const startAll = performance.now() - t0;
  const split = placed.filter((p) => p.host === 'a').length;
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
  const t1 = performance.now();
  const onA = await hostDisks.stageDisk('h0', image);
  const upload = bytes / 1e6 / ((performance.now() - t1) / 1000);
  const t2 = performance.now();
  await hostDisks.copyDisk(onA, 'h1', null);
  const between = bytes / 1e6 / ((performance.now() - t2) / 1000);

  console.log('hypervisor hosts bench (TCG demo guest, libvirt over SSH on loopback)');
  console.log(
    `  one driver call (status), median of 51: local QEMU ${callLocal.toFixed(2)} ms, libvirt over SSH ${callLibvirt.toFixed(2)} ms`,
  );
  console.log(
    `  start -> first non-blank frame: local QEMU ${frameLocal.toFixed(0)} ms, libvirt over SSH ${frameLibvirt.toFixed(0)} ms`,
  );
  console.log(
    `  start-all of ${N} over 2 hosts (${split} + ${N - split}): ${startAll.toFixed(0)} ms until all run`,
  );
  console.log(
    `  template copy of ${(bytes / 1e6).toFixed(0)} MB over SSH: portal -> pool ${upload.toFixed(1)} MB/s, pool -> pool ${between.toFixed(1)} MB/s`,
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
