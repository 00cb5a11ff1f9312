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

const execFileAsync = promisify(execFile);

export const IDLE_GUEST_BANNER = 'VDI Portal idle desktop - type to echo';
/** Smallest raw image size accepted (and the default): 1 MiB. */
export const IDLE_GUEST_MIN_BYTES = 1024 * 1024;
const SECTOR = 512;
/** The BIOS loads the boot sector at 0000:7C00 and jumps there. */
const LOAD_ADDRESS = 0x7c00;

// Text attributes: high nibble background, low nibble foreground (bit 7 = blink, never set).
const ATTR_BAR = 0x70; // black on light grey
const ATTR_PANEL = 0x1f; // bright white on blue
const ATTR_ECHO = 0x0f; // bright white on black
const ECHO_TOP = 14; // first row of the echo area
const ECHO_BOTTOM = 23; // last row of the echo area

/**
 * One line of the listing: its bytes, plus an optional trailing operand resolved in the second pass
 * (rel8 / rel16: signed distance from the end of the instruction; abs16: the label's address).
 */
interface Line {
  label?: string;
  bytes?: number[];
  fix?: { kind: 'rel8' | 'rel16' | 'abs16'; target: string };
  asm: string;
}

const lo = (word: number) => word & 0xff;
const hi = (word: number) => (word >> 8) & 0xff;
const ascii = (text: string) => [...Buffer.from(text, 'latin1')];

/** Text records for the start-up screen: row, column, attribute, text, 0. 0xFF ends the table. */
const SCREEN_TEXT: readonly [row: number, col: number, attr: number, text: string][] = [
  [0, 2, ATTR_BAR, IDLE_GUEST_BANNER],
  [3, 4, ATTR_PANEL, 'A boot sector that sleeps in HLT between interrupts,'],
  [4, 4, ATTR_PANEL, 'so running desktops cost almost no host CPU.'],
  [24, 2, ATTR_BAR, 'Type: keys echo below. Enter: new line. Backspace: erase'],
];

/**
 * The boot sector program (16-bit real mode, CS:IP = 0000:7C00, DL = boot drive, ignored).
 * Register use: DH,DL = row,column for the output routines; BL = attribute; SI = string pointer.
 * BIOS calls used: int 10h AH=00 set mode, 01 cursor shape, 02 set cursor, 03 get cursor,
 * 06 scroll up / clear window, 09 write character + attribute; int 16h AH=00 read key, 01 peek key.
 */
function program(): Line[] {
  const fill = (attr: number, top: number, bottom: number, what: string): Line[] => [
    {
      bytes: [0xb8, 0x00, 0x06],
      asm: `mov ax,0x0600      ; AH=06 scroll up, AL=0: clear window (${what})`,
    },
    { bytes: [0xb7, attr], asm: `mov bh,0x${attr.toString(16)}         ; fill attribute` },
    {
      bytes: [0xb9, 0x00, top],
      asm: `mov cx,0x${top.toString(16).padStart(2, '0')}00       ; CH,CL = top row, left column`,
    },
    {
      bytes: [0xba, 79, bottom],
      asm: `mov dx,0x${bottom.toString(16).padStart(2, '0')}4f       ; DH,DL = bottom row, right column 79`,
    },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
  ];
  const text: Line[] = SCREEN_TEXT.map(([row, col, attr, s], i) => ({
    ...(i === 0 ? { label: 'texts' } : {}),
    bytes: [row, col, attr, ...ascii(s), 0],
    asm: `db ${row},${col},0x${attr.toString(16)},"${s}",0`,
  }));
  return [
    // --- set up segments and stack, screen ---
    {
      label: 'start',
      bytes: [0xfa],
      asm: 'cli                 ; no interrupts while SS:SP changes',
    },
    { bytes: [0x31, 0xc0], asm: 'xor ax,ax' },
    {
      bytes: [0x8e, 0xd8],
      asm: 'mov ds,ax           ; DS=0: labels are absolute addresses 7C00h+',
    },
    { bytes: [0x8e, 0xc0], asm: 'mov es,ax' },
    { bytes: [0x8e, 0xd0], asm: 'mov ss,ax' },
    {
      bytes: [0xbc, lo(LOAD_ADDRESS), hi(LOAD_ADDRESS)],
      asm: 'mov sp,0x7c00       ; stack grows down below the code',
    },
    { bytes: [0xfb], asm: 'sti' },
    { bytes: [0xfc], asm: 'cld                 ; lodsb moves forward' },
    {
      bytes: [0xb8, 0x03, 0x00],
      asm: 'mov ax,0x0003       ; AH=00 set video mode, AL=03: 80x25 16-colour text',
    },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0xb4, 0x01], asm: 'mov ah,0x01         ; AH=01 set cursor shape' },
    {
      bytes: [0xb9, 0x00, 0x20],
      asm: 'mov cx,0x2000       ; CH bit 5: hardware cursor off (no blinking; "_" is drawn)',
    },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    ...fill(ATTR_BAR, 0, 0, 'title bar, row 0'),
    ...fill(ATTR_PANEL, 1, ECHO_TOP - 1, `blue panel, rows 1..${ECHO_TOP - 1}`),
    ...fill(ATTR_BAR, 24, 24, 'status bar, row 24'),
    // --- start-up text from the SCREEN_TEXT table ---
    { bytes: [0xbe], fix: { kind: 'abs16', target: 'texts' }, asm: 'mov si,texts' },
    { label: 'next_text', bytes: [0xac], asm: 'lodsb               ; AL = row, or FFh at the end' },
    { bytes: [0x3c, 0xff], asm: 'cmp al,0xff' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'texts_done' }, asm: 'je texts_done' },
    { bytes: [0x88, 0xc6], asm: 'mov dh,al           ; row' },
    { bytes: [0xac], asm: 'lodsb' },
    { bytes: [0x88, 0xc2], asm: 'mov dl,al           ; column' },
    { bytes: [0xac], asm: 'lodsb' },
    { bytes: [0x88, 0xc3], asm: 'mov bl,al           ; attribute' },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'puts' },
      asm: 'call puts           ; SI ends past the 0',
    },
    { bytes: [0xeb], fix: { kind: 'rel8', target: 'next_text' }, asm: 'jmp next_text' },
    {
      label: 'texts_done',
      bytes: [0xba, 0x00, ECHO_TOP],
      asm: `mov dx,0x${ECHO_TOP.toString(16)}00       ; first echo row, column 0`,
    },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'prompt' }, asm: 'call prompt' },
    // --- idle loop: sleep until an interrupt, then drain the keyboard buffer ---
    {
      label: 'idle',
      bytes: [0xfb],
      asm: 'sti                 ; (its one-instruction shadow keeps an IRQ from slipping in before hlt)',
    },
    { bytes: [0xf4], asm: 'hlt                 ; sleep until the timer tick or a key' },
    {
      label: 'poll',
      bytes: [0xb4, 0x01],
      asm: 'mov ah,0x01         ; int 16h AH=01: key waiting? ZF=1 when none',
    },
    { bytes: [0xcd, 0x16], asm: 'int 0x16' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'idle' }, asm: 'jz idle' },
    { bytes: [0x30, 0xe4], asm: 'xor ah,ah           ; int 16h AH=00: take the key, AL = ASCII' },
    { bytes: [0xcd, 0x16], asm: 'int 0x16' },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'key' }, asm: 'call key' },
    { bytes: [0xeb], fix: { kind: 'rel8', target: 'poll' }, asm: 'jmp poll' },
    // --- key: echo AL at the cursor (the "_" mark's position, kept by the BIOS) ---
    { label: 'key', bytes: [0x50], asm: 'push ax' },
    {
      bytes: [0xb4, 0x03],
      asm: 'mov ah,0x03         ; AH=03 get cursor: DH,DL (and CX, clobbered)',
    },
    { bytes: [0xb7, 0x00], asm: 'mov bh,0x00         ; page 0' },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x58], asm: 'pop ax' },
    {
      bytes: [0xb3, ATTR_ECHO],
      asm: `mov bl,0x${ATTR_ECHO.toString(16).padStart(2, '0')}         ; echo attribute`,
    },
    { bytes: [0x3c, 0x0d], asm: 'cmp al,0x0d         ; Enter' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'enter' }, asm: 'je enter' },
    { bytes: [0x3c, 0x08], asm: 'cmp al,0x08         ; Backspace' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'back' }, asm: 'je back' },
    { bytes: [0x3c, 0x20], asm: 'cmp al,0x20' },
    {
      bytes: [0x72],
      fix: { kind: 'rel8', target: 'key_ret' },
      asm: 'jb key_ret          ; other control keys, extended keys (AL=0): ignored',
    },
    { bytes: [0x3c, 0x7e], asm: 'cmp al,0x7e' },
    {
      bytes: [0x77],
      fix: { kind: 'rel8', target: 'key_ret' },
      asm: 'ja key_ret          ; not printable ASCII: ignored',
    },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'putat' },
      asm: 'call putat          ; the character replaces the mark',
    },
    { bytes: [0xfe, 0xc2], asm: 'inc dl' },
    { bytes: [0x80, 0xfa, 80], asm: 'cmp dl,80' },
    {
      bytes: [0x72],
      fix: { kind: 'rel8', target: 'mark' },
      asm: 'jb mark             ; (mark returns to our caller)',
    },
    {
      bytes: [0xeb],
      fix: { kind: 'rel8', target: 'newline' },
      asm: 'jmp newline         ; line full: wrap',
    },
    { label: 'back', bytes: [0x80, 0xfa, 0x02], asm: 'cmp dl,2' },
    {
      bytes: [0x76],
      fix: { kind: 'rel8', target: 'key_ret' },
      asm: 'jbe key_ret         ; never erase the "> " prompt',
    },
    { bytes: [0xb0, 0x20], asm: "mov al,' '" },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'putat' },
      asm: 'call putat          ; erase the mark',
    },
    { bytes: [0xfe, 0xca], asm: 'dec dl' },
    {
      bytes: [0xeb],
      fix: { kind: 'rel8', target: 'mark' },
      asm: 'jmp mark            ; the mark replaces the erased character',
    },
    { label: 'enter', bytes: [0xb0, 0x20], asm: "mov al,' '" },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'putat' },
      asm: 'call putat          ; erase the mark',
    },
    { label: 'newline', bytes: [0xb2, 0x00], asm: 'mov dl,0' },
    { bytes: [0xfe, 0xc6], asm: 'inc dh' },
    { bytes: [0x80, 0xfe, ECHO_BOTTOM + 1], asm: `cmp dh,${ECHO_BOTTOM + 1}` },
    {
      bytes: [0x72],
      fix: { kind: 'rel8', target: 'prompt' },
      asm: 'jb prompt           ; still inside the echo area',
    },
    { bytes: [0x52], asm: 'push dx' },
    { bytes: [0xb8, 0x01, 0x06], asm: 'mov ax,0x0601       ; AH=06 scroll up, AL=1 line' },
    {
      bytes: [0xb7, ATTR_ECHO],
      asm: `mov bh,0x${ATTR_ECHO.toString(16).padStart(2, '0')}         ; attribute of the new blank line`,
    },
    {
      bytes: [0xb9, 0x00, ECHO_TOP],
      asm: `mov cx,0x${ECHO_TOP.toString(16)}00       ; the echo area only`,
    },
    { bytes: [0xba, 79, ECHO_BOTTOM], asm: `mov dx,0x${ECHO_BOTTOM.toString(16)}4f` },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x5a], asm: 'pop dx' },
    { bytes: [0xb6, ECHO_BOTTOM], asm: `mov dh,${ECHO_BOTTOM}            ; stay on the last row` },
    // --- prompt: "> " at DH,DL then the mark; mark: "_" at DH,DL ---
    {
      label: 'prompt',
      bytes: [0xb3, ATTR_ECHO],
      asm: `mov bl,0x${ATTR_ECHO.toString(16).padStart(2, '0')}`,
    },
    { bytes: [0xbe], fix: { kind: 'abs16', target: 'prompt_text' }, asm: 'mov si,prompt_text' },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'puts' }, asm: 'call puts' },
    { label: 'mark', bytes: [0xb0, 0x5f], asm: "mov al,'_'          ; falls through into putat" },
    // --- putat: AL with attribute BL at row DH column DL of page 0; keeps AL, BL, CX, DX ---
    { label: 'putat', bytes: [0x51], asm: 'push cx' },
    { bytes: [0x50], asm: 'push ax' },
    { bytes: [0xb4, 0x02], asm: 'mov ah,0x02         ; AH=02 set cursor position DH,DL' },
    { bytes: [0xb7, 0x00], asm: 'mov bh,0x00         ; page 0' },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x58], asm: 'pop ax' },
    {
      bytes: [0xb4, 0x09],
      asm: 'mov ah,0x09         ; AH=09 write AL with attribute BL, CX times',
    },
    { bytes: [0xb9, 0x01, 0x00], asm: 'mov cx,1' },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x59], asm: 'pop cx' },
    { label: 'key_ret', bytes: [0xc3], asm: 'ret' },
    // --- puts: the 0-terminated string at SI from DH,DL on, attribute BL; DL ends past it ---
    { label: 'puts', bytes: [0xac], asm: 'lodsb' },
    { bytes: [0x84, 0xc0], asm: 'test al,al' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'puts_ret' }, asm: 'jz puts_ret' },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'putat' }, asm: 'call putat' },
    { bytes: [0xfe, 0xc2], asm: 'inc dl' },
    { bytes: [0xeb], fix: { kind: 'rel8', target: 'puts' }, asm: 'jmp puts' },
    { label: 'puts_ret', bytes: [0xc3], asm: 'ret' },
    // --- data ---
    { label: 'prompt_text', bytes: [...ascii('> '), 0], asm: 'db "> ",0' },
    ...text,
    { bytes: [0xff], asm: 'db 0xff             ; end of the text table' },
  ];
}

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
