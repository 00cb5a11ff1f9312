import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DemoImagesUnavailableError, demoImagePaths, prepareDemoImages } from './demo-images.ts';
import { tempDataDir } from './test-support.ts';
import { createQemuDriver } from './qemu-driver.ts';

describe('prepare-demo-images', () => {
  const tmp = tempDataDir('vdi-images-');
  afterAll(() => tmp.cleanup());

  it('creates the template, ISO and floppy once, then is a no-op', async () => {
    const images = await prepareDemoImages({ dataDir: tmp.dir });
    expect(images).toEqual(demoImagePaths(tmp.dir));
    expect(images.template).toBe(path.join(tmp.dir, 'images', 'demo-template.qcow2'));
    const driver = createQemuDriver({ dataDir: tmp.dir });
    expect(await driver.diskInfo(images.template)).toMatchObject({
      virtualSize: 5_081_088,
      backingFile: null,
    });
    await driver.close();
    expect(statSync(images.iso).size).toBe(
      statSync('/usr/lib/grub-rescue/grub-rescue-cdrom.iso').size,
    );
    expect(statSync(images.floppy).size).toBe(
      statSync('/usr/lib/grub-rescue/grub-rescue-floppy.img').size,
    );
    const mtime = statSync(images.template).mtimeMs;
    const t0 = Date.now();
    await prepareDemoImages({ dataDir: tmp.dir });
    expect(Date.now() - t0).toBeLessThan(100);
    expect(statSync(images.template).mtimeMs).toBe(mtime);
  });

  it('explains what to install when grub-rescue-pc is missing', async () => {
    const error = await prepareDemoImages({
      dataDir: path.join(tmp.dir, 'other'),
      sourceDir: '/nonexistent',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DemoImagesUnavailableError);
    expect(String(error)).toMatch(/apt-get install grub-rescue-pc/);
  });
});
