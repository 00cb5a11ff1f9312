/**
 * Benchmark: start N demo desktops (default 3) with the QEMU driver + idle manager and report, per
 * desktop, the time from spawn to the VNC banner and to the first drawn frame (GRUB menu), then
 * RSS and CPU while idle-paused. Targets: first frame <= 3 s under TCG, <= 150 MiB RSS per idle desktop.
 *
 * npx tsx scripts/bench/desktop-rss.ts [--count N] [--accel tcg|kvm] [--memory MiB]
 * Uses a temporary DATA_DIR; every QEMU is stopped at the end (and SIGKILLed on error).
 */
import path from 'node:path';
import { createQemuDriver } from '../../server/src/platform/hypervisor/qemu-driver.ts';
import { createIdleManager } from '../../server/src/platform/hypervisor/idle.ts';
import { screenStats } from '../../server/src/platform/hypervisor/png.ts';
import {
  cpuUsage,
  demoImages,
  demoSpec,
  killTracked,
  readRfbBanner,
  rssMiB,
  tempDataDir,
  trackPid,
} from '../../server/src/platform/hypervisor/test-support.ts';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return (i >= 0 ? process.argv[i + 1] : undefined) ?? fallback;
}

const count = Number(arg('count', '3'));
const accel = arg('accel', 'tcg') === 'kvm' ? 'kvm' : 'tcg';
const memoryMiB = Number(arg('memory', '128'));
const tmp = tempDataDir('vdi-bench-');
const driver = createQemuDriver({ dataDir: tmp.dir, accel });
const idle = createIdleManager(driver, { graceMs: 1000, firstFrameMinMs: 0, pollMs: 100 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

try {
  const images = await demoImages();
  const rows = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const id = `bench-${i}`;
      const disk = path.join(tmp.dir, 'disks', `${id}.qcow2`);
      await driver.prepareDisk({ path: disk, backingFile: images.template });
      const t0 = Date.now();
      const rt = await driver.start(demoSpec(id, disk, { memoryMiB }));
      trackPid(rt.pid);
      const startMs = Date.now() - t0;
      await readRfbBanner(rt.vncPort, 10_000);
      const bannerMs = Date.now() - t0;
      let frameMs = -1;
      while (Date.now() - t0 < 15_000) {
        if (screenStats(await driver.screenshot(id)).foreground > 0.01) {
          frameMs = Date.now() - t0;
          break;
        }
        await sleep(50);
      }
      idle.started(id); // captures a thumbnail and pauses the unwatched guest
      return { id, pid: rt.pid, startMs, bannerMs, frameMs };
    }),
  );
  await Promise.all(rows.map((r) => idle.settled(r.id)));
  await sleep(500);
  const results = [];
  for (const r of rows) {
    results.push({
      ...r,
      status: await driver.status(r.id),
      rssMiB: Math.round(rssMiB(r.pid)),
      cpuPausedPct: Math.round((await cpuUsage(r.pid, 1000)) * 1000) / 10,
    });
  }
  console.table(results);
  const worstFrame = Math.max(...results.map((r) => r.frameMs));
  const worstRss = Math.max(...results.map((r) => r.rssMiB));
  console.log(
    `accel ${accel}, ${count} desktops of ${memoryMiB} MiB: worst first frame ${worstFrame} ms (target <= 3000), worst idle RSS ${worstRss} MiB (target <= 150)`,
  );
  for (const r of results) await driver.stop(r.id);
} finally {
  idle.close();
  killTracked();
  await driver.close();
  tmp.cleanup();
}
