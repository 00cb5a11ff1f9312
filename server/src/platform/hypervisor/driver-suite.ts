/**
 * The driver test suite: one set of tests that every real hypervisor driver passes, booting real
 * guests (TCG, the small demo images). `qemu-driver.test.ts` and `libvirt-driver.test.ts` run it,
 * each with a harness that tells how its driver is made and what only it can know (the host pid of
 * a guest, exit codes and signals, the run files). Not a test file itself.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isPng, screenStats } from './png.ts';
import type { DomainRuntime, Hypervisor } from './types.ts';
import {
  cpuUsage,
  demoImages,
  demoSpec,
  killTracked,
  listenAddresses,
  readRfbBanner,
  trackPid,
} from './test-support.ts';
import type { DemoImages } from './demo-images.ts';
import { consoleAndHardwareTests } from './driver-suite-consoles.ts';
import { record, sleep, until, type DriverHarness } from './driver-suite-support.ts';

/** Runs the driver suite against the driver `setup` makes. */
export function describeDriver(name: string, setup: () => Promise<DriverHarness>): void {
  describe(name, () => {
    suite(setup);
  });
}

function suite(setup: () => Promise<DriverHarness>): void {
  const drivers: Hypervisor[] = [];
  let h: DriverHarness;
  let tmp: { dir: string };
  let images: DemoImages;
  let driver: Hypervisor;
  let diskSeq = 0;

  function newDriver(): Hypervisor {
    const d = h.make();
    drivers.push(d);
    return d;
  }
  async function overlay(): Promise<string> {
    const file = path.join(tmp.dir, 'disks', `overlay-${++diskSeq}.qcow2`);
    await driver.prepareDisk({ path: file, backingFile: images.template });
    return file;
  }
  /** Kills the domain's QEMU when the worker exits, whatever happened. */
  function track(rt: DomainRuntime): void {
    trackPid(h.pidOf(rt));
  }

  beforeAll(async () => {
    h = await setup();
    tmp = { dir: h.dataDir };
    images = await demoImages();
    driver = newDriver();
  });

  afterEach(async () => {
    // never leave a QEMU behind, whatever the test did
    for (const d of drivers) {
      for (const rt of await d.list().catch(() => []))
        await d.stop(rt.id, { timeoutMs: 2000 }).catch(() => undefined);
    }
    killTracked();
  });

  afterAll(async () => {
    killTracked();
    for (const d of drivers) await d.close();
    await h.cleanup();
  });

  it('answers the health probe, and prepares, inspects, resizes and deletes disks', async () => {
    await expect(driver.ping()).resolves.toBeUndefined();
    const file = await overlay();
    const info = await driver.diskInfo(file);
    expect(info.backingFile).toBe(images.template);
    expect(info.virtualSize).toBe(5_081_088);
    expect(info.actualSize).toBeLessThan(1024 * 1024);
    await expect(
      driver.prepareDisk({ path: file, backingFile: images.template }),
    ).rejects.toMatchObject({ code: 'disk_exists' });
    await expect(
      driver.prepareDisk({ path: path.join(tmp.dir, 'x.qcow2'), backingFile: '/nope.qcow2' }),
    ).rejects.toMatchObject({ code: 'disk_not_found' });

    const empty = path.join(tmp.dir, 'disks', 'empty.qcow2');
    expect(await driver.prepareDisk({ path: empty, sizeGiB: 1 })).toMatchObject({
      virtualSize: 2 ** 30,
      backingFile: null,
    });
    expect((await driver.resizeDisk(empty, 2)).virtualSize).toBe(2 * 2 ** 30);
    await expect(driver.resizeDisk(empty, 1)).rejects.toMatchObject({ code: 'command_failed' }); // no shrinking
    await driver.deleteDisk(empty);
    expect(existsSync(empty)).toBe(false);
    await driver.deleteDisk(empty); // idempotent
    await expect(driver.diskInfo(empty)).rejects.toMatchObject({ code: 'disk_not_found' });
  });

  it('flattens a disk chain into a standalone qcow2 that boots, with progress, leaving the source as it was', async () => {
    // a chain of two overlays on the demo template, the top one with data of its own
    const middle = await overlay();
    const top = path.join(tmp.dir, 'disks', `chain-top-${++diskSeq}.qcow2`);
    await driver.prepareDisk({ path: top, backingFile: middle });
    const before = await driver.diskInfo(top);
    const target = path.join(tmp.dir, 'templates', 'flat.qcow2');
    const progress: number[] = [];
    const flat = await driver.convertDisk({
      source: top,
      target,
      onProgress: (p) => progress.push(p),
    });
    expect(flat.backingFile).toBeNull();
    expect(flat.virtualSize).toBe(before.virtualSize);
    // the template's data is inside the copy now, not behind a backing file
    expect(flat.actualSize).toBeGreaterThan(before.actualSize);
    expect(progress.at(-1)).toBe(100);
    expect(existsSync(`${target}.part`)).toBe(false);
    expect(await driver.diskInfo(top)).toEqual(before);
    await expect(driver.convertDisk({ source: top, target })).rejects.toMatchObject({
      code: 'disk_exists',
    });
    await expect(
      driver.convertDisk({ source: path.join(tmp.dir, 'none.qcow2'), target: `${target}-2` }),
    ).rejects.toMatchObject({ code: 'disk_not_found' });
    // an aborted copy leaves nothing behind
    const aborted = new AbortController();
    aborted.abort();
    await expect(
      driver.convertDisk({ source: top, target: `${target}-3`, signal: aborted.signal }),
    ).rejects.toMatchObject({ code: 'command_failed' });
    expect(existsSync(`${target}-3`)).toBe(false);
    expect(existsSync(`${target}-3.part`)).toBe(false);
    // a broken source is a command failure, without a partial file
    const bad = path.join(tmp.dir, 'not-qcow2.img');
    writeFileSync(bad, 'not a disk image');
    await expect(driver.convertDisk({ source: bad, target: `${target}-4` })).rejects.toMatchObject({
      code: 'command_failed',
    });
    expect(existsSync(`${target}-4.part`)).toBe(false);
    // the flattened copy boots by itself (GRUB draws its menu)
    const rt = await driver.start(demoSpec('flat', target));
    track(rt);
    await expect(
      driver.convertDisk({ source: target, target: `${target}-5` }),
    ).rejects.toMatchObject({ code: 'already_running' });
    await until(
      async () => screenStats(await driver.screenshot('flat')).foreground > 0.02,
      15_000,
      'the GRUB menu of the flattened disk',
    );
    await driver.stop('flat');
  });

  it('runs the whole lifecycle: start, VNC, screenshot, pause, resume, reset, shutdown, stop', async () => {
    const rec = record(driver);
    const disk = await overlay();
    const t0 = Date.now();
    const rt = await driver.start(demoSpec('life', disk));
    track(rt);
    const tStarted = Date.now() - t0;
    expect(rt).toMatchObject({
      id: 'life',
      accel: 'tcg',
      runDir: path.join(tmp.dir, 'run', 'life'),
    });
    expect(rt.vncPort).toBeGreaterThanOrEqual(5900);
    for (const f of h.runFiles) expect(existsSync(path.join(rt.runDir, f))).toBe(true);
    for (const f of h.goneFiles ?? []) expect(existsSync(path.join(rt.runDir, f))).toBe(false);

    expect(await readRfbBanner(rt.vncPort, 5000)).toBe('RFB 003.008\n');
    const tBanner = Date.now() - t0;
    expect(listenAddresses(rt.vncPort)).toEqual(['127.0.0.1']);
    expect(listenAddresses(rt.spicePort)).toEqual(['127.0.0.1']);
    expect(await driver.status('life')).toBe('running');
    await expect(driver.start(demoSpec('life', disk))).rejects.toMatchObject({
      code: 'already_running',
    });
    await expect(driver.deleteDisk(disk)).rejects.toMatchObject({ code: 'already_running' });

    const png = await until(
      async () => {
        const shot = await driver.screenshot('life');
        return screenStats(shot).foreground > 0.02 ? shot : undefined; // the GRUB menu, not just the BIOS line
      },
      10_000,
      'the GRUB menu',
    );
    const tFrame = Date.now() - t0;
    expect(isPng(png)).toBe(true);
    const stats = screenStats(png);
    expect(stats.colours).toBeGreaterThan(1);
    expect(stats.foreground).toBeGreaterThan(0.01);
    console.log(
      `[measure] start() ${tStarted} ms, VNC banner ${tBanner} ms, first non-blank frame ${tFrame} ms (${stats.width}x${stats.height})`,
    );

    const pid = h.pidOf(rt);
    expect(pid).toBeGreaterThan(0);
    const running = await cpuUsage(pid, 1000);
    await driver.pause('life');
    expect(await driver.status('life')).toBe('paused');
    await sleep(200);
    const paused = await cpuUsage(pid, 1000);
    console.log(
      `[measure] CPU running ${(running * 100).toFixed(1)} %, paused ${(paused * 100).toFixed(1)} %`,
    );
    expect(paused).toBeLessThan(0.05);
    expect(isPng(await driver.screenshot('life'))).toBe(true); // works while paused

    await driver.resume('life');
    expect(await driver.status('life')).toBe('running');
    await driver.reset('life');
    await driver.shutdown('life'); // GRUB has no ACPI: the guest keeps running
    await sleep(300);
    expect(await driver.status('life')).toBe('running');
    expect((await driver.list()).map((r) => r.id)).toEqual(['life']);
    expect(driver.get('life')?.pid).toBe(rt.pid);

    await driver.stop('life');
    expect(rec.exits).toHaveLength(1);
    const [exitId, info] = rec.exits[0] ?? [];
    expect(exitId).toBe('life');
    expect(info).toMatchObject({
      expected: true,
      code: h.exitCodes ? 0 : null,
      reason: 'stopped by the portal',
    });
    expect(await driver.status('life')).toBe('absent');
    expect(await driver.list()).toEqual([]);
    expect((await driver.lastExit('life'))?.reason).toBe('stopped by the portal');
    expect(existsSync(path.join(rt.runDir, 'runtime.json'))).toBe(false);
    for (const f of h.runFiles)
      expect(existsSync(path.join(rt.runDir, f))).toBe(h.keptFiles.includes(f));
    expect(existsSync(path.join(rt.runDir, 'exit.json'))).toBe(true);
    await driver.stop('life'); // idempotent

    const events = rec.states.map(([, state, d]) => `${d.event}:${state}`);
    expect(events).toEqual(
      expect.arrayContaining([
        'STOP:paused',
        'RESUME:running',
        'RESET:running',
        'POWERDOWN:running',
        'SHUTDOWN:shutdown',
      ]),
    );
    await expect(driver.pause('life')).rejects.toMatchObject({ code: 'not_running' });
  });

  it('fires exit with a reason when QEMU is killed from outside', async () => {
    const rec = record(driver);
    const rt = await driver.start(demoSpec('killed', await overlay()));
    track(rt);
    const t0 = Date.now();
    process.kill(h.pidOf(rt), 'SIGKILL');
    const [, info] = await until(
      () => rec.exits.find(([id]) => id === 'killed'),
      10_000,
      'the exit event',
    );
    console.log(`[measure] outside SIGKILL noticed after ${Date.now() - t0} ms`);
    expect(info).toMatchObject({ expected: false, signal: h.exitSignals ? 'SIGKILL' : null });
    expect(info.reason).toMatch(h.killedReason);
    expect(await driver.status('killed')).toBe('absent');
    expect((await driver.lastExit('killed'))?.expected).toBe(false);
  });

  it('adopts running QEMUs after a "restart", controls them, notices their death', async () => {
    const first = newDriver();
    const rt = await first.start(demoSpec('adopt-me', await overlay()));
    track(rt);
    const pid = h.pidOf(rt);
    await first.pause('adopt-me');
    // a stale run dir whose QEMU died while the server was down
    const staleDir = path.join(tmp.dir, 'run', 'stale');
    mkdirSync(staleDir, { recursive: true });
    writeFileSync(path.join(staleDir, 'qemu.log'), 'qemu-system-x86_64: something went wrong\n');
    writeFileSync(
      path.join(staleDir, 'runtime.json'),
      JSON.stringify({
        ...rt,
        id: 'stale',
        pid: 999_999_9,
        qmpPath: path.join(staleDir, 'qmp.sock'),
        runDir: staleDir,
      }),
    );
    await first.close(); // the old server goes away; QEMU keeps running
    expect(process.kill(pid, 0)).toBe(true);

    const second = newDriver();
    const rec = record(second);
    const result = await second.adopt();
    expect(result.adopted.map((r) => r.id)).toEqual(['adopt-me']);
    expect(result.adopted[0]).toMatchObject({
      pid: rt.pid,
      vncPort: rt.vncPort,
      spicePort: rt.spicePort,
    });
    expect(result.dead.map((d) => d.id)).toEqual(['stale']);
    expect(result.dead[0]?.info.reason).toMatch(h.staleReason);
    expect(existsSync(path.join(staleDir, 'runtime.json'))).toBe(false);
    expect((await second.adopt()).adopted.map((r) => r.id)).toEqual(['adopt-me']); // idempotent

    expect((await second.list()).map((r) => r.id)).toEqual(['adopt-me']);
    expect(await second.status('adopt-me')).toBe('paused');
    await second.resume('adopt-me');
    expect(await second.status('adopt-me')).toBe('running');
    expect(isPng(await second.screenshot('adopt-me'))).toBe(true);
    expect(await readRfbBanner(rt.vncPort)).toBe('RFB 003.008\n');
    // a port of an adopted domain is not handed out again
    const other = await second.start(demoSpec('other', await overlay()));
    track(other);
    expect(other.vncPort).not.toBe(rt.vncPort);
    expect(other.spicePort).not.toBe(rt.spicePort);
    await second.stop('other');

    const t0 = Date.now();
    process.kill(pid, 'SIGKILL'); // not our child any more: detected by the driver's own means
    const [, info] = await until(
      () => rec.exits.find(([id]) => id === 'adopt-me'),
      10_000,
      'the exit event',
    );
    console.log(`[measure] adopted QEMU killed, noticed after ${Date.now() - t0} ms`);
    expect(info.expected).toBe(false);
    expect(await second.status('adopt-me')).toBe('absent');
  });
  consoleAndHardwareTests({
    driver: () => driver,
    harness: () => h,
    images: () => images,
    dataDir: () => tmp.dir,
    overlay,
    track,
  });
}
