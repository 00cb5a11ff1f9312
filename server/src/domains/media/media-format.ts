/**
 * What a downloaded medium must look like, checked on its bytes as they arrive (the name and the
 * Content-Type the server sent are ignored):
 *
 * - an ISO image carries the ISO 9660 volume descriptor magic "CD001" at byte 0x8001;
 * - a floppy image fits the standard floppy formats: whole 512-byte sectors, at most the largest
 *   class (2.88 MB, 2,949,120 bytes; smaller images such as 1.44 MB ones are read as the class
 *   they fit in), and its first sector ends with the boot-sector signature 0x55 0xAA that every
 *   formatted or bootable floppy has.
 */

export type MediaKind = 'iso' | 'floppy';

export const ISO_MAGIC = Buffer.from('CD001', 'latin1');
export const ISO_MAGIC_OFFSET = 0x8001;
export const SECTOR_BYTES = 512;
/** The standard floppy capacities, from 160 KB (5¼") to 2.88 MB (3½" ED). */
export const FLOPPY_CLASSES: readonly number[] = [
  163_840, 184_320, 327_680, 368_640, 737_280, 1_228_800, 1_474_560, 1_720_320, 2_949_120,
];
export const FLOPPY_MAX_BYTES = Math.max(...FLOPPY_CLASSES);
const BOOT_SIGNATURE = Buffer.from([0x55, 0xaa]);
const BOOT_SIGNATURE_OFFSET = 510;

/** Collects the few bytes the check needs from a stream of chunks, then judges the whole. */
export class FormatProbe {
  private readonly kind: MediaKind;
  private readonly offset: number;
  private readonly wanted: Buffer;
  private readonly seen: Buffer;
  private received = 0;
  private filled = 0;

  constructor(kind: MediaKind) {
    this.kind = kind;
    this.offset = kind === 'iso' ? ISO_MAGIC_OFFSET : BOOT_SIGNATURE_OFFSET;
    this.wanted = kind === 'iso' ? ISO_MAGIC : BOOT_SIGNATURE;
    this.seen = Buffer.alloc(this.wanted.length);
  }

  /** Feeds the next chunk of the file. */
  push(chunk: Buffer): void {
    const start = this.received;
    this.received += chunk.length;
    const from = Math.max(this.offset, start);
    const to = Math.min(this.offset + this.wanted.length, this.received);
    if (from < to) {
      chunk.copy(this.seen, from - this.offset, from - start, to - start);
      this.filled += to - from;
    }
  }

  /** True once the file can no longer be valid whatever follows (a floppy beyond 2.88 MB). */
  get hopeless(): boolean {
    return this.kind === 'floppy' && this.received > FLOPPY_MAX_BYTES;
  }

  /** The verdict on the whole file (every byte pushed). */
  valid(): boolean {
    if (this.filled < this.wanted.length || !this.seen.equals(this.wanted)) return false;
    if (this.kind === 'iso') return true;
    return this.received % SECTOR_BYTES === 0 && this.received <= FLOPPY_MAX_BYTES;
  }
}

/** Checks a whole buffer at once. */
export function isValidMedia(kind: MediaKind, data: Buffer): boolean {
  const probe = new FormatProbe(kind);
  probe.push(data);
  return probe.valid();
}
