/**
 * Runs a real SPICE client, `remote-viewer` (Debian's virt-viewer), on a downloaded `.vv` file in a
 * private Xvfb display, and reads what it shows: the title of its window (which carries the SPICE
 * display number only once the display channel is up) and the pixels of that window (`xwd`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export const REMOTE_VIEWER_TOOLS = [
  '/usr/bin/remote-viewer',
  '/usr/bin/Xvfb',
  '/usr/bin/xwininfo',
  '/usr/bin/xwd',
];

export interface RemoteViewerFrame {
  /** The title of the client's window. */
  title: string;
  width: number;
  height: number;
  /** Pixels brighter than near-black. */
  nonBlack: number;
  /** Distinct colours among the pixels. */
  colours: number;
}

/** Pixel statistics of an XWD dump (ZPixmap, 24/32 bits per pixel, as Xvfb's depth 24 gives). */
export function xwdStats(dump: Buffer): {
  width: number;
  height: number;
  nonBlack: number;
  colours: number;
} {
  const field = (i: number) => dump.readUInt32BE(i * 4);
  const headerSize = field(0);
  const width = field(4);
  const height = field(5);
  const byteOrder = field(7); // 0: least significant byte first
  const bitsPerPixel = field(11);
  const bytesPerLine = field(12);
  const [redMask, greenMask, blueMask] = [field(14), field(15), field(16)];
  const ncolors = field(19);
  if (bitsPerPixel !== 32 && bitsPerPixel !== 24)
    throw new Error(`xwd: ${bitsPerPixel} bits per pixel is not handled`);
  const bytes = bitsPerPixel / 8;
  const start = headerSize + ncolors * 12;
  const channel = (pixel: number, mask: number) => {
    let shift = 0;
    while (mask && !((mask >>> shift) & 1)) shift += 1;
    return ((pixel & mask) >>> shift) & 0xff;
  };
  let nonBlack = 0;
  const seen = new Set<number>();
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const at = start + y * bytesPerLine + x * bytes;
      let pixel = 0;
      for (let b = 0; b < bytes; b += 1) {
        const byte = dump[at + b] ?? 0;
        pixel = byteOrder === 0 ? pixel | (byte << (8 * b)) : (pixel << 8) | byte;
      }
      pixel >>>= 0;
      const r = channel(pixel, redMask);
      const g = channel(pixel, greenMask);
      const bl = channel(pixel, blueMask);
      if (r + g + bl > 48) nonBlack += 1;
      if (seen.size < 4096) seen.add((r << 16) | (g << 8) | bl);
    }
  }
  return { width, height, nonBlack, colours: seen.size };
}

/** The windows of a display with a name: `[id, title]`. */
function namedWindows(display: string): [string, string][] {
  const tree = spawnSync('xwininfo', ['-root', '-tree'], {
    env: { ...process.env, DISPLAY: display },
    encoding: 'utf8',
  });
  const found: [string, string][] = [];
  for (const line of tree.stdout.split('\n')) {
    const match = /^\s*(0x[0-9a-f]+) "(.*)":/.exec(line);
    if (match?.[1] && match[2] !== undefined) found.push([match[1], match[2]]);
  }
  return found;
}

/**
 * Opens `vvPath` (a copy: the file asks the client to delete it) in remote-viewer, in kiosk mode so
 * the window is the guest's screen only, and waits up to `timeoutMs` for a window whose title
 * matches `title` and which shows more than `minNonBlack` lit pixels.
 */
export async function remoteViewerFrame(
  vvPath: string,
  options: { title: RegExp; minNonBlack?: number; timeoutMs?: number },
): Promise<RemoteViewerFrame> {
  const copy = `${vvPath}.open.vv`;
  copyFileSync(vvPath, copy);
  const children: ChildProcess[] = [];
  const log: string[] = [];
  try {
    // Xvfb picks a free display itself and writes its number to fd 3 once it accepts clients: a
    // fixed number can be held by another display, or by the lock file of one that was killed.
    const xvfb = spawn(
      'Xvfb',
      ['-displayfd', '3', '-screen', '0', '1024x768x24', '-nolisten', 'tcp'],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe'] },
    );
    children.push(xvfb);
    const display = await new Promise<string>((resolve, reject) => {
      let written = '';
      const timer = setTimeout(() => reject(new Error('Xvfb did not start within 30 s')), 30_000);
      xvfb.stdio[3]?.on('data', (chunk: Buffer) => {
        written += chunk.toString();
        if (!written.includes('\n')) return;
        clearTimeout(timer);
        resolve(`:${written.trim()}`);
      });
      xvfb.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`Xvfb exited (${String(code)}) before it was ready`));
      });
    });
    const viewer = spawn('remote-viewer', ['--kiosk', '--kiosk-quit', 'never', copy], {
      env: { ...process.env, DISPLAY: display },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(viewer);
    viewer.stdout?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
    viewer.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));

    const deadline = Date.now() + (options.timeoutMs ?? 20_000);
    let last: RemoteViewerFrame | undefined;
    while (Date.now() < deadline) {
      if (viewer.exitCode !== null) break;
      const window = namedWindows(display).find(([, name]) => options.title.test(name));
      if (window) {
        const dump = spawnSync('xwd', ['-id', window[0], '-silent'], {
          env: { ...process.env, DISPLAY: display },
          maxBuffer: 64 * 1024 * 1024,
        });
        if (dump.status === 0) {
          last = { title: window[1], ...xwdStats(dump.stdout) };
          if (last.nonBlack > (options.minNonBlack ?? 2000)) return last;
        }
      }
      await sleep(250);
    }
    const windows = namedWindows(display)
      .map(([, name]) => JSON.stringify(name))
      .join(', ');
    throw new Error(
      `remote-viewer showed no frame (windows: ${windows || 'none'}; last: ${JSON.stringify(last)}; exit: ${viewer.exitCode}; output: ${log.join('').slice(-600)})`,
    );
  } finally {
    for (const child of children.reverse()) child.kill('SIGKILL');
  }
}
