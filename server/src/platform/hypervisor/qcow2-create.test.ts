/**
 * An empty qcow2 image written here is byte for byte the one `qemu-img create` writes, blank and
 * as an overlay, from one L1 entry to an L1 table of 16 clusters; the portal's disks made this way
 * pass `qemu-img check` and read their template's data through the overlay.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DiskImages } from './disk-images.ts';
import { emptyQcow2 } from './qcow2-create.ts';

const dir = mkdtempSync(join(tmpdir(), 'vdi-qcow2-create-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const qemuImg = (...args: string[]) => execFileSync('qemu-img', args, { encoding: 'utf8' });
const MIB = 1024 * 1024;

describe('emptyQcow2', () => {
  const base = join(dir, 'base.qcow2');
  qemuImg('create', '-q', '-f', 'qcow2', base, '64M');

  // 1 MiB: one L1 entry; 4 TiB + 1 MiB: the L1 table just over one cluster; 64 TiB (the largest
  // disk the portal makes): an L1 table of 16 clusters, each counted in the refcount block.
  it.each([1, 1536, 4_194_305, 67_108_864])('writes what qemu-img writes for %i MiB', (mib) => {
    const blank = join(dir, `blank-${mib}.qcow2`);
    const overlay = join(dir, `overlay-${mib}.qcow2`);
    qemuImg('create', '-q', '-f', 'qcow2', blank, `${mib}M`);
    qemuImg('create', '-q', '-f', 'qcow2', '-b', base, '-F', 'qcow2', overlay, `${mib}M`);
    expect(emptyQcow2({ sizeBytes: mib * MIB }).equals(readFileSync(blank))).toBe(true);
    expect(emptyQcow2({ sizeBytes: mib * MIB, backing: base }).equals(readFileSync(overlay))).toBe(
      true,
    );
  });

  it('refuses a size qcow2 cannot hold and a backing name qemu would not read', () => {
    expect(() => emptyQcow2({ sizeBytes: 0 })).toThrow(RangeError);
    expect(() => emptyQcow2({ sizeBytes: 1000 })).toThrow(RangeError);
    expect(() => emptyQcow2({ sizeBytes: MIB, backing: '' })).toThrow(RangeError);
    expect(() => emptyQcow2({ sizeBytes: MIB, backing: `/${'a'.repeat(1023)}` })).toThrow(
      RangeError,
    );
  });
});

describe('DiskImages.prepareDisk', () => {
  const disks = new DiskImages('qemu-img', () => false);

  it("makes an overlay of its template's size that reads the template's data", async () => {
    const template = join(dir, 'template.qcow2');
    qemuImg('create', '-q', '-f', 'qcow2', template, '3072M');
    execFileSync('qemu-io', ['-f', 'qcow2', '-c', 'write -P 7 1M 64k', template]);
    const disk = join(dir, 'desktop.qcow2');
    const info = await disks.prepareDisk({ path: disk, backingFile: template });
    expect(info).toMatchObject({ virtualSize: 3072 * MIB, backingFile: template });
    expect(qemuImg('check', disk)).toContain('No errors were found');
    const read = execFileSync('qemu-io', ['-f', 'qcow2', '-c', 'read -P 7 1M 64k', disk], {
      encoding: 'utf8',
    });
    expect(read).toContain('read 65536/65536 bytes');
    await expect(disks.prepareDisk({ path: disk, backingFile: template })).rejects.toMatchObject({
      code: 'disk_exists',
    });
  });

  it('makes a blank disk of the size asked, and leaves a backing file that is no qcow2 to qemu-img', async () => {
    const blank = join(dir, 'blank.qcow2');
    expect(await disks.prepareDisk({ path: blank, sizeGiB: 2.5 })).toMatchObject({
      virtualSize: 2560 * MIB,
      backingFile: null,
    });
    expect(qemuImg('check', blank)).toContain('No errors were found');
    const raw = join(dir, 'raw.img');
    writeFileSync(raw, Buffer.alloc(MIB));
    await expect(
      disks.prepareDisk({ path: join(dir, 'on-raw.qcow2'), backingFile: raw }),
    ).rejects.toMatchObject({ code: 'command_failed' });
  });
});
