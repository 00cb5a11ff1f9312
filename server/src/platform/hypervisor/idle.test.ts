import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFakeDriver } from './fake-driver.ts';
import { createIdleManager, type IdleManager } from './idle.ts';
import { isBlankScreen, isPng } from './png.ts';
import { createQemuDriver } from './qemu-driver.ts';
import type { Hypervisor } from './types.ts';
import {
  cpuUsage,
  demoImages,
  demoSpec,
  killTracked,
  tempDataDir,
  trackPid,
} from './test-support.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('idle manager (fake driver: ref counting and ownership)', () => {
  async function setup(graceMs = 30) {
    const driver = createFakeDriver();
    const idle = createIdleManager(driver, { graceMs, firstFrameMinMs: 0, pollMs: 5 });
    await driver.start(demoSpec('d', '/disk.qcow2'));
    idle.started('d');
    await idle.settled('d');
    return { driver, idle };
  }

  it('keeps a guest running while it serves on a network, asking again after each grace period', async () => {
    const driver = createFakeDriver();
    let serving = true;
    const idle = createIdleManager(driver, {
      graceMs: 30,
      firstFrameMinMs: 0,
      pollMs: 5,
      keepRunning: () => serving,
    });
    await driver.start(demoSpec('d', '/disk.qcow2'));
    idle.started('d');
    await idle.settled('d');
    await sleep(80);
    expect(await driver.status('d')).toBe('running');
    expect(idle.isIdlePaused('d')).toBe(false);
    serving = false;
    await sleep(80);
    expect(await driver.status('d')).toBe('paused');
    expect(idle.isIdlePaused('d')).toBe(true);
    idle.close();
  });

  it('pauses after the first frame, resumes on attach, pauses after the grace period', async () => {
    const { driver, idle } = await setup();
    expect(await driver.status('d')).toBe('paused');
    expect(idle.isIdlePaused('d')).toBe(true);
    expect(idle.lastScreenshot('d')?.png).toBeInstanceOf(Buffer);

    await idle.viewerAttached('d');
    await idle.viewerAttached('d');
    expect(idle.viewers('d')).toBe(2);
    expect(await driver.status('d')).toBe('running');
    idle.viewerDetached('d');
    await sleep(80);
    expect(await driver.status('d')).toBe('running'); // one viewer left
    idle.viewerDetached('d');
    expect(await driver.status('d')).toBe('running'); // grace period
    await sleep(80);
    await idle.settled('d');
    expect(await driver.status('d')).toBe('paused');
    expect(idle.isIdlePaused('d')).toBe(true);
    idle.viewerDetached('d'); // extra detach is ignored
    expect(idle.viewers('d')).toBe(0);
    idle.close();
  });

  it('keeps a viewer that attached while the guest booted (a console opened with the start) running', async () => {
    const driver = createFakeDriver();
    const idle = createIdleManager(driver, { graceMs: 30, firstFrameMinMs: 0, pollMs: 5 });
    await driver.start(demoSpec('d', '/disk.qcow2'));
    await idle.viewerAttached('d');
    idle.started('d');
    await idle.settled('d');
    expect(idle.viewers('d')).toBe(1);
    expect(await driver.status('d')).toBe('running');
    idle.close();
  });

  it('a viewer re-attaching during the grace period cancels the pause', async () => {
    const { driver, idle } = await setup(60);
    await idle.viewerAttached('d');
    idle.viewerDetached('d');
    await sleep(20);
    await idle.viewerAttached('d');
    await sleep(100);
    expect(await driver.status('d')).toBe('running');
    idle.close();
  });

  it('never resumes a pause it did not make, and forgets ended domains', async () => {
    const { driver, idle } = await setup();
    await idle.viewerAttached('d');
    await driver.pause('d'); // the user's pause
    idle.viewerDetached('d');
    await sleep(80);
    await idle.viewerAttached('d');
    expect(await driver.status('d')).toBe('paused');
    expect(idle.isIdlePaused('d')).toBe(false);
    await driver.stop('d');
    expect(idle.viewers('d')).toBe(0);
    expect(idle.lastScreenshot('d')).toBeUndefined();
    idle.close();
  });

  it('someone else resuming an idle-paused domain re-arms the grace timer', async () => {
    const { driver, idle } = await setup();
    await driver.resume('d');
    await sleep(10);
    expect(idle.isIdlePaused('d')).toBe(false);
    await sleep(80);
    await idle.settled('d');
    expect(await driver.status('d')).toBe('paused');
    expect(idle.isIdlePaused('d')).toBe(true);
    idle.close();
  });

  it('adopted: idle-paused domains resume on attach', async () => {
    const driver = createFakeDriver();
    const idle = createIdleManager(driver, { graceMs: 30 });
    await driver.start(demoSpec('a', '/disk.qcow2'));
    await driver.pause('a');
    idle.adopted('a', { idlePaused: true });
    await idle.viewerAttached('a');
    expect(await driver.status('a')).toBe('running');
    idle.close();
  });
});

describe('idle manager (real QEMU, TCG)', () => {
  const tmp = tempDataDir('vdi-idle-');
  let driver: Hypervisor;
  let idle: IdleManager;

  beforeAll(() => {
    driver = createQemuDriver({ dataDir: tmp.dir });
    idle = createIdleManager(driver, { graceMs: 500 });
  });
  afterEach(async () => {
    for (const rt of await driver.list())
      await driver.stop(rt.id, { timeoutMs: 2000 }).catch(() => undefined);
    killTracked();
  });
  afterAll(async () => {
    idle.close();
    await driver.close();
    killTracked();
    tmp.cleanup();
  });

  it('pauses an unwatched guest after its first frame (0 % CPU) and resumes it for a viewer', async () => {
    const images = await demoImages();
    const disk = path.join(tmp.dir, 'disks', 'idle.qcow2');
    await driver.prepareDisk({ path: disk, backingFile: images.template });
    const t0 = Date.now();
    const rt = await driver.start(demoSpec('idle', disk));
    trackPid(rt.pid);
    idle.started('idle');
    await idle.settled('idle');
    const settledMs = Date.now() - t0;
    const shot = idle.lastScreenshot('idle');
    expect(shot && isPng(shot.png) && !isBlankScreen(shot.png, 0.01)).toBe(true);
    expect(await driver.status('idle')).toBe('paused');
    expect(idle.isIdlePaused('idle')).toBe(true);
    const pausedCpu = await cpuUsage(rt.pid, 1000);
    expect(pausedCpu).toBeLessThan(0.05);

    await idle.viewerAttached('idle');
    expect(await driver.status('idle')).toBe('running');
    const watchedCpu = await cpuUsage(rt.pid, 1000);
    console.log(
      `[measure] idle: first frame captured + paused ${settledMs} ms after spawn; CPU paused ${(pausedCpu * 100).toFixed(1)} %, with a viewer ${(watchedCpu * 100).toFixed(1)} %`,
    );
    expect(watchedCpu).toBeGreaterThan(0.2);

    idle.viewerDetached('idle');
    await sleep(300);
    expect(await driver.status('idle')).toBe('running'); // still in the grace period
    await sleep(600);
    await idle.settled('idle');
    expect(await driver.status('idle')).toBe('paused');
    const refreshed = await idle.refreshScreenshot('idle'); // screendump works while paused
    expect(isPng(refreshed.png)).toBe(true);
  });
});
