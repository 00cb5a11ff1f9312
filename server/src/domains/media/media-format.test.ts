import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FLOPPY_MAX_BYTES, FormatProbe, isValidMedia, ISO_MAGIC_OFFSET } from './media-format.ts';

const ISO = readFileSync('/usr/lib/grub-rescue/grub-rescue-cdrom.iso');
const FLOPPY = readFileSync('/usr/lib/grub-rescue/grub-rescue-floppy.img');

/** Feeds the probe in chunks of `size` bytes. */
function chunked(kind: 'iso' | 'floppy', data: Buffer, size: number): FormatProbe {
  const probe = new FormatProbe(kind);
  for (let i = 0; i < data.length; i += size) probe.push(data.subarray(i, i + size));
  return probe;
}

/** A blank floppy image of `bytes` with the boot-sector signature. */
function floppyOf(bytes: number): Buffer {
  const data = Buffer.alloc(bytes);
  data[510] = 0x55;
  data[511] = 0xaa;
  return data;
}

describe('media format check', () => {
  it('accepts the grub rescue ISO, in one piece and in chunks that split the magic', () => {
    expect(isValidMedia('iso', ISO)).toBe(true);
    for (const size of [1, 3, 4096, 0x8002, 65_536])
      expect(chunked('iso', ISO, size).valid()).toBe(true);
  });

  it('refuses an ISO without CD001 at 0x8001 (one byte off, short file, HTML page)', () => {
    const broken = Buffer.from(ISO);
    broken[ISO_MAGIC_OFFSET + 2] = 0x58;
    expect(isValidMedia('iso', broken)).toBe(false);
    expect(isValidMedia('iso', ISO.subarray(0, ISO_MAGIC_OFFSET + 3))).toBe(false);
    expect(isValidMedia('iso', Buffer.from('<html><body>Not found</body></html>'))).toBe(false);
    const shifted = Buffer.concat([Buffer.alloc(1), ISO]);
    expect(isValidMedia('iso', shifted)).toBe(false);
  });

  it('accepts the grub rescue floppy and the standard 1.44 MB and 2.88 MB sizes', () => {
    expect(isValidMedia('floppy', FLOPPY)).toBe(true);
    expect(chunked('floppy', FLOPPY, 100).valid()).toBe(true);
    expect(isValidMedia('floppy', floppyOf(1_474_560))).toBe(true);
    expect(isValidMedia('floppy', floppyOf(FLOPPY_MAX_BYTES))).toBe(true);
  });

  it('refuses floppies beyond 2.88 MB, of partial sectors, without a boot signature, and the two kinds crossed', () => {
    expect(isValidMedia('floppy', floppyOf(FLOPPY_MAX_BYTES + 512))).toBe(false);
    expect(isValidMedia('floppy', floppyOf(1_474_560 + 1))).toBe(false);
    expect(isValidMedia('floppy', Buffer.alloc(1_474_560))).toBe(false);
    expect(isValidMedia('floppy', ISO)).toBe(false);
    // The grub floppy also carries an ISO 9660 descriptor; its boot sector alone does not.
    expect(isValidMedia('iso', FLOPPY.subarray(0, 512))).toBe(false);
  });

  it('knows early that an oversized floppy can not become valid', () => {
    const probe = new FormatProbe('floppy');
    probe.push(floppyOf(FLOPPY_MAX_BYTES));
    expect(probe.hopeless).toBe(false);
    probe.push(Buffer.alloc(1));
    expect(probe.hopeless).toBe(true);
    expect(new FormatProbe('iso').hopeless).toBe(false);
  });
});
