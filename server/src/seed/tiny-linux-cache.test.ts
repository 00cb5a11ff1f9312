import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pruneTinyLinuxCache } from './tiny-linux-cache.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'tiny-linux-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A cache file last used `hoursAgo` hours ago. */
function file(name: string, hoursAgo: number): void {
  const at = new Date(Date.now() - hoursAgo * 3_600_000);
  writeFileSync(path.join(dir, name), '');
  utimesSync(path.join(dir, name), at, at);
}

describe('the Tiny Linux build cache', () => {
  it('keeps the latest used builds of each kind and any used within the hour', async () => {
    for (let i = 0; i < 6; i++) file(`disk-${i}.qcow2`, 2 + i);
    file('fresh.qcow2', 0.5);
    file('fresher.qcow2', 0.1);
    for (let i = 0; i < 3; i++) file(`recipe-${i}.initrd.gz`, 2 + i);
    file('notes.txt', 100);
    // One disk kept: the latest used; the other one used within the hour stays too.
    await pruneTinyLinuxCache(dir, { disks: 1, initramfs: 1 });
    expect(readdirSync(dir).sort()).toEqual([
      'fresh.qcow2',
      'fresher.qcow2',
      'notes.txt',
      'recipe-0.initrd.gz',
    ]);
  });

  it('leaves a cache that does not exist yet alone', async () => {
    await expect(pruneTinyLinuxCache(path.join(dir, 'missing'))).resolves.toBeUndefined();
  });
});
