/**
 * Benchmark: N running desktops of the idle guest (server/src/seed/idle-guest.ts) started at once,
 * as a class deployment would: the portal's QEMU driver (its real command line: TCG, VGA, VNC,
 * SPICE, sandbox), one qcow2 overlay per desktop backed by the idle-guest disk, no idle pausing.
 * Prints the time until every screen shows the banner, then the total CPU and memory while they
 * all idle. No assertions.
 *
 * npx tsx scripts/bench/idle-guests.ts [--count 30] [--seconds 5] [--memory 128] [--disk idle|grub]
 * (--disk grub boots the old GRUB template instead, for comparison.) Uses a temporary DATA_DIR;
 * every QEMU is stopped at the end (SIGKILLed on error or Ctrl-C).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createQemuDriver } from '../../server/src/platform/hypervisor/qemu-driver.ts';
import { decodePng, screenStats } from '../../server/src/platform/hypervisor/png.ts';
import {
  cpuSeconds,
  demoImages,
  demoSpec,
  killTracked,
  rssMiB,
  tempDataDir,
  trackPid,
} from '../../server/src/platform/hypervisor/test-support.ts';
import { writeIdleGuestDisk } from '../../server/src/seed/idle-guest.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return (i >= 0 ? process.argv[i + 1] : undefined) ?? fallback;
}

const count = Number(arg('count', '30'));
const seconds = Number(arg('seconds', '5'));
const memoryMiB = Number(arg('memory', '128'));
const diskKind = arg('disk', 'idle') === 'grub' ? 'grub' : 'idle';
const tmp = tempDataDir('vdi-bench-idle-');
const driver = createQemuDriver({ dataDir: tmp.dir, accel: 'tcg' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Proportional set size (shared pages split between the processes mapping them), MiB. */
function pssMiB(pid: number): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
  return match?.[1] ? Number(match[1]) / 1024 : 0;
}

/** Host-wide busy fraction of all cores over `ms` (from /proc/stat). */
async function hostBusy(ms: number): Promise<number> {
  const read = () => {
    const cpu = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
    return { idle, total: cpu.reduce((a, b) => a + b, 0) };
  };
  const a = read();
  await sleep(ms);
  const b = read();
  return 1 - (b.idle - a.idle) / Math.max(1, b.total - a.total);
}

/** The banner is up: most pixels non-black (r+g+b > 48) and plenty of content. */
function drawn(png: Buffer, kind: 'idle' | 'grub'): boolean {
  if (kind === 'grub') return screenStats(png).foreground > 0.02;
  const { pixels, width, height, channels } = decodePng(png);
  let nonBlack = 0;
  for (let i = 0; i < pixels.length; i += channels)
    if ((pixels[i] ?? 0) + (pixels[i + 1] ?? 0) + (pixels[i + 2] ?? 0) > 48) nonBlack++;
  return nonBlack > 0.5 * width * height && screenStats(png).foreground > 0.05;
}

const abort = () => {
  killTracked();
  tmp.cleanup();
  process.exit(130);
};
process.once('SIGINT', abort);
process.once('SIGTERM', abort);

try {
  let backing: string;
  if (diskKind === 'grub') backing = (await demoImages()).template;
  else {
    backing = path.join(tmp.dir, 'images', 'demo-template.qcow2');
    await writeIdleGuestDisk(backing);
  }
  const ids = Array.from({ length: count }, (_, i) => `idle-${i}`);
  for (const id of ids)
    await driver.prepareDisk({
      path: path.join(tmp.dir, 'disks', `${id}.qcow2`),
      backingFile: backing,
    });

  const t0 = Date.now();
  const rows = await Promise.all(
    ids.map(async (id) => {
      const disk = path.join(tmp.dir, 'disks', `${id}.qcow2`);
      const rt = await driver.start(demoSpec(id, disk, { memoryMiB }));
      trackPid(rt.pid);
      const startedMs = Date.now() - t0;
      let bannerMs = -1;
      while (Date.now() - t0 < 120_000) {
        if (drawn(await driver.screenshot(id), diskKind)) {
          bannerMs = Date.now() - t0;
          break;
        }
        await sleep(200);
      }
      return { id, pid: rt.pid, startedMs, bannerMs };
    }),
  );
  const allDrawnMs = Date.now() - t0;
  const missing = rows.filter((r) => r.bannerMs < 0).length;

  await sleep(2000); // let the last starts settle before measuring the idle cost
  const pids = rows.map((r) => r.pid);
  const before = pids.map(cpuSeconds);
  const t1 = process.hrtime.bigint();
  const host = await hostBusy(seconds * 1000);
  const after = pids.map(cpuSeconds);
  const elapsed = Number(process.hrtime.bigint() - t1) / 1e9;
  const perGuest = pids.map((_, i) => ((after[i] ?? 0) - (before[i] ?? 0)) / elapsed);
  const totalCpu = perGuest.reduce((a, b) => a + b, 0);
  const rss = pids.map(rssMiB);
  const pss = pids.map(pssMiB);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const banners = rows.map((r) => r.bannerMs).filter((ms) => ms >= 0);

  console.log(
    [
      `${count} × ${diskKind} guest (${memoryMiB} MiB, TCG, portal QEMU driver), started at once:`,
      `  spawned + QMP ready: last after ${Math.max(...rows.map((r) => r.startedMs))} ms`,
      `  banner drawn: first ${Math.min(...banners)} ms, median ${banners.sort((a, b) => a - b)[Math.floor(banners.length / 2)] ?? -1} ms, all ${missing ? `NOT (${missing} missing)` : `after ${allDrawnMs} ms`}`,
      `  idle CPU over ${elapsed.toFixed(1)} s: total ${(totalCpu * 100).toFixed(1)} % of one core (${((totalCpu / count) * 100).toFixed(2)} % per guest, worst ${(Math.max(...perGuest) * 100).toFixed(1)} %); host busy ${(host * 100).toFixed(1)} % of all cores`,
      `  memory: RSS total ${sum(rss).toFixed(0)} MiB (${(sum(rss) / count).toFixed(1)} per guest), PSS total ${sum(pss).toFixed(0)} MiB (${(sum(pss) / count).toFixed(1)} per guest)`,
    ].join('\n'),
  );
  await Promise.all(ids.map((id) => driver.stop(id).catch(() => undefined)));
} finally {
  killTracked();
  await driver.close();
  tmp.cleanup();
}
