/**
 * The demo template's guest: a 512-byte x86 boot sector, hand-assembled here (no assembler on the
 * build machines), that draws a text screen and then sleeps in HLT between interrupts.
 *
 * Why: under TCG a guest that busy-polls (the GRUB menu) burns ~95 % of a host core; 30 of them on a
 * 2-core machine make it crawl. This guest wakes only for the BIOS timer tick (18.2 Hz) and the
 * keyboard, so a running desktop costs almost nothing.
 *
 * Screen (VGA text mode 3, 80x25, 720x400 pixels in a screendump):
 *   row 0        black on light grey: the banner IDLE_GUEST_BANNER
 *   rows 1..13   white on blue: what this guest is
 *   rows 14..23  bright white on black: the echo area, "> " prompt, '_' marks the cursor
 *   row 24       black on light grey: status line
 * About 60 % of the pixels are not black; typed characters add non-black pixels in the echo area
 * (the end-to-end test expects both). Enter starts a new prompt line, Backspace erases, the echo
 * area scrolls. The guest has no ACPI support: a shutdown request is ignored (force stop it).
 *
 * CLI: npx tsx server/src/seed/idle-guest.ts OUT.qcow2 | OUT.img (raw)
 */
import { execFile } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import {
  IDLE_GUEST_BANNER,
  LOAD_ADDRESS,
  hi,
  lo,
  program,
  type Line,
} from './idle-guest-program.ts';

const execFileAsync = promisify(execFile);

export { IDLE_GUEST_BANNER };

/** Smallest raw image size accepted (and the default): 1 MiB. */
export const IDLE_GUEST_MIN_BYTES = 1024 * 1024;
const SECTOR = 512;

const fixSize = { rel8: 1, rel16: 2, abs16: 2 } as const;

/** Two-pass assembly of `lines` at LOAD_ADDRESS. Returns the code and an annotated listing. */
function assemble(lines: Line[]): { code: Buffer; listing: string } {
  const labels = new Map<string, number>();
  let offset = 0;
  for (const line of lines) {
    if (line.label) {
      if (labels.has(line.label)) throw new Error(`label ${line.label} defined twice`);
      labels.set(line.label, offset);
    }
    offset += (line.bytes?.length ?? 0) + (line.fix ? fixSize[line.fix.kind] : 0);
  }
  const out: number[] = [];
  const listing: string[] = [];
  for (const line of lines) {
    const at = out.length;
    const bytes = [...(line.bytes ?? [])];
    if (line.fix) {
      const target = labels.get(line.fix.target);
      if (target === undefined) throw new Error(`unknown label ${line.fix.target}`);
      const end = at + bytes.length + fixSize[line.fix.kind];
      if (line.fix.kind === 'rel8') {
        const rel = target - end;
        if (rel < -128 || rel > 127) throw new Error(`${line.asm}: rel8 out of range (${rel})`);
        bytes.push(rel & 0xff);
      } else {
        const value = line.fix.kind === 'rel16' ? (target - end) & 0xffff : LOAD_ADDRESS + target;
        bytes.push(lo(value), hi(value));
      }
    }
    out.push(...bytes);
    const hex = bytes
      .slice(0, 8)
      .map((b) => b.toString(16).padStart(2, '0'))
      .join(' ');
    listing.push(
      `${(LOAD_ADDRESS + at).toString(16).padStart(4, '0')}  ${(bytes.length > 8 ? `${hex} ..` : hex).padEnd(26)}${line.label ? `${line.label}: ` : ''}${line.asm}`,
    );
  }
  return { code: Buffer.from(out), listing: listing.join('\n') };
}

/** The annotated listing of the boot sector (address, bytes, instruction; for reading and tests). */
export function idleGuestListing(): string {
  return assemble(program()).listing;
}

/** The 512-byte MBR: the program, zeros, and the 55AAh boot signature at offset 510. */
export function buildIdleBootSector(): Buffer {
  const { code } = assemble(program());
  if (code.length > 446)
    throw new Error(`boot code is ${code.length} bytes; it must leave the partition table free`);
  const sector = Buffer.alloc(SECTOR);
  code.copy(sector);
  sector[510] = 0x55;
  sector[511] = 0xaa;
  return sector;
}

/** The raw disk image: the boot sector padded with zeros to `sizeBytes` (>= 1 MiB, whole sectors). */
export function buildIdleGuestImage(sizeBytes = IDLE_GUEST_MIN_BYTES): Buffer {
  if (sizeBytes < IDLE_GUEST_MIN_BYTES || sizeBytes % SECTOR !== 0)
    throw new Error(`image size must be a multiple of ${SECTOR} bytes, at least 1 MiB`);
  const image = Buffer.alloc(sizeBytes);
  buildIdleBootSector().copy(image);
  return image;
}

/** true when `file` (raw or uncompressed qcow2) already holds this guest's boot sector. */
export async function isIdleGuestDisk(file: string): Promise<boolean> {
  if (!existsSync(file)) return false;
  const data = await fsp.readFile(file);
  return data.includes(buildIdleBootSector());
}

/**
 * Write the guest as a qcow2 (or raw when `format` is 'raw') disk at `file`, through a temporary
 * name and a rename, so a running QEMU that has the old file open keeps its copy. Needs qemu-img
 * for qcow2. Does nothing when `file` already is this guest.
 */
export async function writeIdleGuestDisk(
  file: string,
  options: { format?: 'qcow2' | 'raw'; qemuImg?: string } = {},
): Promise<void> {
  if (await isIdleGuestDisk(file)) return;
  await fsp.mkdir(path.dirname(file), { recursive: true });
  const raw = `${file}.raw-${process.pid}`;
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    await fsp.writeFile(raw, buildIdleGuestImage());
    if (options.format === 'raw') await fsp.rename(raw, tmp);
    else
      await execFileAsync(options.qemuImg ?? 'qemu-img', [
        'convert',
        '-q',
        '-f',
        'raw',
        '-O',
        'qcow2',
        raw,
        tmp,
      ]);
    await fsp.chmod(tmp, 0o644);
    await fsp.rename(tmp, file);
  } finally {
    await fsp.rm(raw, { force: true });
    await fsp.rm(tmp, { force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2];
  if (!out || out === '--listing') {
    console.log(idleGuestListing());
    if (!out) console.error('usage: npx tsx server/src/seed/idle-guest.ts OUT.qcow2|OUT.img');
  } else {
    await writeIdleGuestDisk(out, { format: out.endsWith('.qcow2') ? 'qcow2' : 'raw' });
    console.log(`wrote ${out}`);
  }
}
