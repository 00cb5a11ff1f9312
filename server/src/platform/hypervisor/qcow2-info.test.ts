/**
 * The header reading of a qcow2 image's info gives what `qemu-img info` gives, for the images the
 * portal makes (blank, an overlay on a template, grown, version 2), and leaves to qemu-img what
 * it does not read (a raw image, a relative backing name).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { qcow2Info } from './qcow2-info.ts';

const dir = mkdtempSync(join(tmpdir(), 'vdi-qcow2-info-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const qemuImg = (...args: string[]) => execFileSync('qemu-img', args, { encoding: 'utf8' });

/** What qemu-img says of the image, in the driver's DiskInfo shape. */
function qemuImgInfo(file: string) {
  const info = JSON.parse(qemuImg('info', '--output=json', '-U', file)) as Record<string, unknown>;
  return {
    virtualSize: info['virtual-size'],
    actualSize: info['actual-size'],
    backingFile: info['full-backing-filename'] ?? info['backing-filename'] ?? null,
  };
}

describe('qcow2Info', () => {
  it('reads what qemu-img info reads, for blank, overlay, grown and version 2 images', async () => {
    const base = join(dir, 'base.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', base, '3072M');
    qemuImg('resize', '-q', '-f', 'qcow2', base, '4096M');
    // Written data, so the allocated size is not the empty image's.
    execFileSync('qemu-io', ['-f', 'qcow2', '-c', 'write -P 7 0 3M', base]);
    const overlay = join(dir, 'overlay.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', '-b', base, '-F', 'qcow2', overlay);
    const sized = join(dir, 'sized-overlay.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', '-b', base, '-F', 'qcow2', sized, '8192M');
    const v2 = join(dir, 'compat.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', '-o', 'compat=0.10', '-b', base, '-F', 'qcow2', v2);
    const longName = join(dir, `${'n'.repeat(200)}.qcow2`);
    qemuImg('create', '-q', '-f', 'qcow2', longName, '1G');
    const deep = join(dir, 'deep.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', '-b', longName, '-F', 'qcow2', deep);

    for (const file of [base, overlay, sized, v2, longName, deep]) {
      const read = await qcow2Info(file);
      expect(read, file).toEqual(qemuImgInfo(file));
    }
    expect((await qcow2Info(overlay))?.backingFile).toBe(base);
    expect((await qcow2Info(sized))?.virtualSize).toBe(8192 * 1024 * 1024);
  });

  it('leaves a raw image, a relative backing name and a short file to qemu-img', async () => {
    const raw = join(dir, 'disk.raw');
    qemuImg('create', '-q', '-f', 'raw', raw, '16M');
    expect(await qcow2Info(raw)).toBeNull();
    const relative = join(dir, 'relative.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', '-b', 'base.qcow2', '-F', 'qcow2', relative);
    expect(await qcow2Info(relative)).toBeNull();
    const short = join(dir, 'short.qcow2');
    writeFileSync(short, Buffer.from([0x51, 0x46, 0x49, 0xfb, 0, 0, 0, 3]));
    expect(await qcow2Info(short)).toBeNull();
  });
});
