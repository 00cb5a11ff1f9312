import { describe, expect, it } from 'vitest';
import { createFakeDriver } from './fake-driver.ts';
import { isPng, isBlankScreen } from './png.ts';
import type { ExitInfo } from './types.ts';
import { demoSpec } from './test-support.ts';

describe('fake driver (unit tests of the state machine only)', () => {
  it('follows the driver contract', async () => {
    const d = createFakeDriver();
    const exits: [string, ExitInfo][] = [];
    const states: string[] = [];
    d.on('exit', (id, info) => exits.push([id, info]));
    d.on('state', (_id, state, detail) => states.push(`${detail.event}:${state}`));
    await d.prepareDisk({ path: '/disks/a.qcow2', backingFile: '/images/t.qcow2' });
    await expect(d.prepareDisk({ path: '/disks/a.qcow2', sizeGiB: 1 })).rejects.toMatchObject({
      code: 'disk_exists',
    });
    const rt = await d.start(demoSpec('a', '/disks/a.qcow2'));
    await expect(d.start(demoSpec('a', '/disks/a.qcow2'))).rejects.toMatchObject({
      code: 'already_running',
    });
    expect(await d.status('a')).toBe('running');
    await d.pause('a');
    expect(await d.status('a')).toBe('paused');
    await d.resume('a');
    const png = await d.screenshot('a');
    expect(isPng(png) && !isBlankScreen(png)).toBe(true);
    expect((await d.list()).map((r) => r.id)).toEqual(['a']);
    expect(d.get('a')?.vncPort).toBe(rt.vncPort);
    await d.shutdown('a');
    await new Promise((r) => setTimeout(r, 5));
    expect(await d.status('a')).toBe('absent');
    expect(exits[0]?.[1]).toMatchObject({ expected: true, reason: 'the guest powered off' });
    expect(states).toEqual([
      'STOP:paused',
      'RESUME:running',
      'POWERDOWN:running',
      'SHUTDOWN:shutdown',
    ]);
    await d.stop('a'); // idempotent
    await expect(d.pause('a')).rejects.toMatchObject({ code: 'not_running' });
  });

  it('flattens disks into standalone ones', async () => {
    const d = createFakeDriver({ fileExists: () => false });
    await d.prepareDisk({ path: '/disks/src.qcow2', sizeGiB: 2 });
    const progress: number[] = [];
    const info = await d.convertDisk({
      source: '/disks/src.qcow2',
      target: '/templates/t.qcow2',
      onProgress: (p) => progress.push(p),
    });
    expect(info).toMatchObject({ backingFile: null, virtualSize: 2 * 2 ** 30 });
    expect(progress).toEqual([0, 100]);
    expect(d.disks()).toContain('/templates/t.qcow2');
    await expect(
      d.convertDisk({ source: '/disks/src.qcow2', target: '/templates/t.qcow2' }),
    ).rejects.toMatchObject({ code: 'disk_exists' });
    await expect(
      d.convertDisk({ source: '/disks/none.qcow2', target: '/templates/u.qcow2' }),
    ).rejects.toMatchObject({ code: 'disk_not_found' });
  });

  it('injects crashes and start failures', async () => {
    const d = createFakeDriver({ honourPowerdown: false });
    const exits: ExitInfo[] = [];
    d.on('exit', (_id, info) => exits.push(info));
    d.failNextStart('boom');
    await expect(d.start(demoSpec('b', '/d.qcow2'))).rejects.toMatchObject({
      code: 'start_failed',
    });
    await d.start(demoSpec('b', '/d.qcow2', {}, { vnc: 'v1', spice: 's1' }));
    await d.setPasswords('b', { vnc: 'v2' });
    expect(d.inspect('b')?.passwords).toEqual({ vnc: 'v2', spice: 's1' });
    await d.shutdown('b');
    expect(await d.status('b')).toBe('running');
    d.crash('b');
    expect(exits[0]).toMatchObject({ expected: false });
    expect((await d.lastExit('b'))?.expected).toBe(false);
  });
});
