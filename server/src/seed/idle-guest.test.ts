/**
 * The idle guest: the boot sector's shape, then a real QEMU (TCG) booting the qcow2 disk: the
 * screen is drawn (mostly non-black, enough content for the idle manager's first frame), typed keys
 * are echoed (more non-black pixels), the echo area scrolls without touching the panel, and the
 * idle guest uses a small fraction of a core (measured next to a busy-looping boot sector).
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectQmp, type QmpClient } from '../platform/hypervisor/qmp-client.ts';
import { decodePng, screenStats } from '../platform/hypervisor/png.ts';
import {
  cpuSeconds,
  killTracked,
  tempDataDir,
  trackPid,
} from '../platform/hypervisor/test-support.ts';
import {
  IDLE_GUEST_BANNER,
  IDLE_GUEST_MIN_BYTES,
  buildIdleBootSector,
  buildIdleGuestImage,
  idleGuestListing,
  isIdleGuestDisk,
  writeIdleGuestDisk,
} from './idle-guest.ts';
import { ECHO_BOTTOM, ECHO_TOP } from './idle-guest-program.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Guest {
  pid: number;
  qmp: QmpClient;
}

/** QEMU as the portal runs it (pc, TCG, std VGA, virtio disk), without VNC/SPICE. */
async function bootGuest(dir: string, name: string, disk: string, format: string): Promise<Guest> {
  const qmpPath = path.join(dir, `${name}.qmp`);
  const child = spawn(
    'qemu-system-x86_64',
    [
      '-nodefaults',
      '-machine',
      'pc',
      '-accel',
      'tcg',
      '-m',
      '32',
      '-display',
      'none',
      '-device',
      'VGA',
      '-nic',
      'none',
      '-drive',
      `file=${disk},format=${format},if=virtio`,
      '-qmp',
      `unix:${qmpPath},server=on,wait=off`,
    ],
    { stdio: 'ignore' },
  );
  if (!child.pid) throw new Error('qemu-system-x86_64 did not start');
  trackPid(child.pid);
  return { pid: child.pid, qmp: await connectQmp(qmpPath, { timeoutMs: 10_000 }) };
}

interface Screen {
  png: Buffer;
  pixels: Buffer;
  width: number;
  height: number;
  channels: number;
  /** pixels with r+g+b > 48 (the end-to-end test's "non-black") */
  nonBlack: number;
}

let shots = 0;
async function screen(guest: Guest, dir: string): Promise<Screen> {
  const file = path.join(dir, `shot-${++shots}.png`);
  await guest.qmp.execute('screendump', { filename: file, format: 'png' });
  const png = readFileSync(file);
  const { pixels, width, height, channels } = decodePng(png);
  let nonBlack = 0;
  for (let i = 0; i < pixels.length; i += channels)
    if ((pixels[i] ?? 0) + (pixels[i + 1] ?? 0) + (pixels[i + 2] ?? 0) > 48) nonBlack++;
  return { png, pixels, width, height, channels, nonBlack };
}

async function waitFor(
  guest: Guest,
  dir: string,
  ok: (s: Screen) => boolean,
  what: string,
  ms = 20_000,
): Promise<Screen> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await screen(guest, dir);
    if (ok(s)) return s;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const sendKeys = async (guest: Guest, keys: string[]) => {
  for (const key of keys) {
    await guest.qmp.execute('send-key', { keys: [{ type: 'qcode', data: key }] });
    await sleep(60);
  }
};

/** The top `rows` text rows (16 pixels each) of a 720x400 text-mode screen. */
const topRows = (s: Screen, rows: number) => s.pixels.subarray(0, rows * 16 * s.width * s.channels);
/** Whether text row `row` (16 pixel rows each) has anything drawn on it. */
const rowInked = (s: Screen, row: number) =>
  s.pixels
    .subarray(row * 16 * s.width * s.channels, (row + 1) * 16 * s.width * s.channels)
    .some((b) => b > 0);

describe('idle guest boot sector', () => {
  it('is one 512-byte sector with the boot signature and a free partition table', () => {
    const sector = buildIdleBootSector();
    expect(sector.length).toBe(512);
    expect(sector.readUInt16LE(510)).toBe(0xaa55);
    expect(sector.subarray(446, 510).every((b) => b === 0)).toBe(true);
    expect(sector.includes(Buffer.from(IDLE_GUEST_BANNER, 'latin1'))).toBe(true);
  });

  it('idles with sti; hlt and polls the keyboard only after a wake-up', () => {
    const listing = idleGuestListing();
    expect(listing).toMatch(/fb\s+idle: sti[^\n]*\n[0-9a-f]{4}\s+f4\s+hlt/);
    expect(listing).toMatch(/poll: mov ah,0x01[^\n]*\n[^\n]*cd 16\s+int 0x16/);
  });

  it('pads the image to whole sectors of at least 1 MiB', () => {
    const image = buildIdleGuestImage();
    expect(image.length).toBe(IDLE_GUEST_MIN_BYTES);
    expect(image.subarray(0, 512).equals(buildIdleBootSector())).toBe(true);
    expect(image.subarray(512).every((b) => b === 0)).toBe(true);
    expect(buildIdleGuestImage(2 * IDLE_GUEST_MIN_BYTES).length).toBe(2 * IDLE_GUEST_MIN_BYTES);
    expect(() => buildIdleGuestImage(4096)).toThrow(/at least 1 MiB/);
    expect(() => buildIdleGuestImage(IDLE_GUEST_MIN_BYTES + 1)).toThrow(/multiple of 512/);
  });
});

describe('idle guest under QEMU (TCG)', () => {
  const tmp = tempDataDir('vdi-idle-guest-');
  const disk = path.join(tmp.dir, 'images', 'demo-template.qcow2');
  let guest: Guest | undefined;
  let busy: Guest | undefined;
  let drawn: Screen | undefined;

  beforeAll(async () => {
    await writeIdleGuestDisk(disk);
  });

  afterAll(() => {
    guest?.qmp.close();
    busy?.qmp.close();
    killTracked();
    tmp.cleanup();
  });

  it('writes a qcow2 once and recognises it afterwards', async () => {
    expect(readFileSync(disk).subarray(0, 4).toString('latin1')).toBe('QFI\xfb');
    expect(await isIdleGuestDisk(disk)).toBe(true);
    const before = statSync(disk).mtimeMs;
    await writeIdleGuestDisk(disk);
    expect(statSync(disk).mtimeMs).toBe(before);
    const other = path.join(tmp.dir, 'other.qcow2');
    writeFileSync(other, 'not a guest');
    await writeIdleGuestDisk(other);
    expect(await isIdleGuestDisk(other)).toBe(true);
  });

  it('boots and draws its screen: mostly non-black, enough content for a first frame', async () => {
    guest = await bootGuest(tmp.dir, 'idle', disk, 'qcow2');
    const g = guest;
    drawn = await waitFor(
      g,
      tmp.dir,
      // the whole screen: its first echo row's prompt is drawn last, just before the guest sleeps
      // (a screen caught while it still draws, on a loaded machine, is not the one to compare with)
      (s) =>
        s.nonBlack > 0.5 * s.width * s.height &&
        screenStats(s.png).foreground > 0.05 &&
        rowInked(s, ECHO_TOP),
      'the banner and the prompt',
    );
    expect([drawn.width, drawn.height]).toEqual([720, 400]);
    // the idle manager's default threshold for "drawn" is 1 % of pixels off the background
    expect(screenStats(drawn.png).foreground).toBeGreaterThan(0.01);
    console.log(
      `idle guest screen: ${((100 * drawn.nonBlack) / (drawn.width * drawn.height)).toFixed(1)} % non-black, ${(100 * screenStats(drawn.png).foreground).toFixed(1)} % foreground`,
    );
    writeFileSync(path.join(tmp.dir, 'drawn.png'), drawn.png);
  });

  it('echoes typed keys (more non-black pixels), Backspace erases', async () => {
    const g = guest;
    const before = drawn;
    if (!g || !before) throw new Error('not booted');
    await sendKeys(g, ['h', 'e', 'l', 'l', 'o']);
    const typed = await waitFor(
      g,
      tmp.dir,
      (s) => s.nonBlack > before.nonBlack + 100,
      'the echoed characters',
      10_000,
    );
    expect(typed.pixels.equals(before.pixels)).toBe(false);
    await sendKeys(g, ['backspace', 'backspace']);
    const erased = await waitFor(
      g,
      tmp.dir,
      (s) => s.nonBlack < typed.nonBlack,
      'Backspace',
      10_000,
    );
    expect(erased.nonBlack).toBeGreaterThan(before.nonBlack);
  });

  it('Enter adds prompt lines and the echo area scrolls without touching the panel', async () => {
    const g = guest;
    const before = drawn;
    if (!g || !before) throw new Error('not booted');
    const last = await screen(g, tmp.dir);
    await sendKeys(g, ['ret']);
    await waitFor(g, tmp.dir, (s) => s.nonBlack > last.nonBlack, 'a new prompt', 10_000);
    // 12 more lines than the 10-row echo area holds, then a character on the last row
    await sendKeys(g, [...Array.from({ length: 12 }, () => 'ret'), 'x']);
    await sleep(500);
    const scrolled = await waitFor(
      g,
      tmp.dir,
      // the last echo row holds "> x_"
      (s) => rowInked(s, ECHO_BOTTOM),
      'the scrolled echo area',
      10_000,
    );
    expect(topRows(scrolled, ECHO_TOP).equals(topRows(before, ECHO_TOP))).toBe(true);
    const status = (s: Screen) => s.pixels.subarray(24 * 16 * s.width * s.channels);
    expect(status(scrolled).equals(status(before))).toBe(true);
    writeFileSync(path.join(tmp.dir, 'scrolled.png'), scrolled.png);
  });

  it('uses a small fraction of a core while idle (HLT), far less than a busy guest', async () => {
    const g = guest;
    if (!g) throw new Error('not booted');
    // Reference: a boot sector that spins (jmp $) instead of halting.
    const spin = Buffer.alloc(IDLE_GUEST_MIN_BYTES);
    spin.set([0xeb, 0xfe]); // jmp $ (EB FE: jump to itself)
    spin.writeUInt16LE(0xaa55, 510);
    const spinFile = path.join(tmp.dir, 'spin.img');
    writeFileSync(spinFile, spin);
    busy = await bootGuest(tmp.dir, 'busy', spinFile, 'raw');
    await sleep(1500); // both past SeaBIOS
    const pids = [g.pid, busy.pid];
    const a = pids.map(cpuSeconds);
    const t0 = process.hrtime.bigint();
    await sleep(3000);
    const b = pids.map(cpuSeconds);
    const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
    const [idle, spinning] = pids.map((_, i) => ((b[i] ?? 0) - (a[i] ?? 0)) / elapsed);
    console.log(
      `idle guest CPU over ${elapsed.toFixed(1)} s: ${((idle ?? 0) * 100).toFixed(1)} % of one core (busy-looping guest: ${((spinning ?? 0) * 100).toFixed(1)} %)`,
    );
    expect(idle).toBeLessThan(0.3);
    expect(idle).toBeLessThan(spinning ?? 0);
  });
});
