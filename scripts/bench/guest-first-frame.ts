/**
 * Benchmark: the guest's share of "click Open -> first VNC frame", without the portal or a browser.
 *
 *   npx tsx scripts/bench/guest-first-frame.ts [--runs 5]
 *
 * Spawns QEMU with the driver's own command line (`buildQemuArgs`: the demo desktop's hardware on
 * TCG, its SPICE listener and seccomp sandbox; the demo template's disk through a fresh overlay)
 * and times, from the spawn: QMP's greeting, VNC listening, the RFB handshake of a bare client in
 * this process, and the first non-blank full frame it reads (the firmware's first text). The one
 * change to the command line: VNC without a password (the bench's client speaks no VNC
 * authentication). Prints each run and the medians. Run it on an idle machine: it is the floor
 * under `scripts/bench/desktop.ts`, whose target (600 ms from the click) includes this.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildQemuArgs, VNC_BASE_PORT } from '../../server/src/platform/hypervisor/qemu-command.ts';
import { prepareDemoImages } from '../../server/src/platform/hypervisor/demo-images.ts';
import { connectQmp } from '../../server/src/platform/hypervisor/qmp-client.ts';
import { byteReader } from '../../tests/support/byte-reader.ts';

const { values: args } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Math.max(1, Number(args.runs));
const VNC_PORT = 5987;
const SPICE_PORT = 5988;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function connectWhenListening(port: number, until: number): Promise<net.Socket> {
  for (;;) {
    const socket = await new Promise<net.Socket | null>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => resolve(s));
      s.once('error', () => resolve(null));
    });
    if (socket) return socket;
    if (Date.now() > until) throw new Error(`nothing listens on ${port}`);
    await sleep(5);
  }
}

interface Run {
  qmp: number;
  vncListening: number;
  handshake: number;
  frame: number;
  frames: number;
}

/** RFB 3.8 without authentication, raw encoding; full frames until one has a non-black pixel. */
async function firstFrame(socket: net.Socket, t0: number, until: number) {
  const read = byteReader(socket, 30_000);
  await read(12);
  socket.write('RFB 003.008\n');
  const types = await read((await read(1))[0] ?? 0);
  if (!types.includes(1)) throw new Error('the VNC server asks for authentication');
  socket.write(Buffer.from([1]));
  await read(4); // security result
  socket.write(Buffer.from([1])); // shared
  const init = await read(24);
  await read(init.readUInt32BE(20)); // the desktop's name
  // 32 bits per pixel (the server's default format), raw encoding only
  const encodings = Buffer.alloc(8);
  encodings[0] = 2;
  encodings.writeUInt16BE(1, 2);
  socket.write(encodings);
  const handshake = performance.now() - t0;
  for (let frames = 1; Date.now() < until; frames += 1) {
    const request = Buffer.alloc(10);
    request[0] = 3; // FramebufferUpdateRequest, not incremental, the whole screen
    request.writeUInt16BE(0xffff, 6);
    request.writeUInt16BE(0xffff, 8);
    socket.write(request);
    const rects = (await read(4)).readUInt16BE(2);
    let drawn = false;
    for (let i = 0; i < rects; i += 1) {
      const rect = await read(12);
      if (rect.readInt32BE(8) !== 0) continue; // a pseudo-encoding: no pixels
      const pixels = await read(rect.readUInt16BE(4) * rect.readUInt16BE(6) * 4);
      for (let p = 0; p < pixels.length && !drawn; p += 4)
        drawn = (pixels[p] ?? 0) + (pixels[p + 1] ?? 0) + (pixels[p + 2] ?? 0) > 0;
    }
    if (drawn) return { handshake, frame: performance.now() - t0, frames };
    await sleep(10);
  }
  throw new Error('no non-blank frame within the time limit');
}

async function oneRun(dir: string, template: string): Promise<Run> {
  const disk = join(dir, 'disk.qcow2');
  const qmpPath = join(dir, 'qmp.sock');
  rmSync(disk, { force: true });
  rmSync(qmpPath, { force: true });
  const made = spawnSync('qemu-img', [
    'create',
    '-q',
    '-f',
    'qcow2',
    '-F',
    'qcow2',
    '-b',
    template,
    disk,
  ]);
  if (made.status !== 0) throw new Error(`qemu-img: ${made.stderr.toString()}`);
  const qemuArgs = buildQemuArgs(
    {
      id: 'bench-guest',
      name: 'bench guest',
      diskPath: disk,
      hardware: {
        vcpus: 1,
        memoryMiB: 512,
        bootOrder: ['disk'],
        diskBus: 'virtio',
        video: 'default',
        isos: [],
        floppies: [],
      },
      vncPassword: 'unused00',
      spicePassword: 'unused',
    },
    {
      accel: 'tcg',
      vncPort: VNC_PORT,
      spicePort: SPICE_PORT,
      qmpPath,
      pidPath: join(dir, 'qemu.pid'),
      startPaused: false,
    },
  ).map((arg) =>
    arg === `127.0.0.1:${VNC_PORT - VNC_BASE_PORT},password=on`
      ? `127.0.0.1:${VNC_PORT - VNC_BASE_PORT}`
      : arg,
  );
  const until = Date.now() + 30_000;
  const t0 = performance.now();
  const qemu: ChildProcess = spawn('qemu-system-x86_64', qemuArgs, { stdio: 'ignore' });
  try {
    const qmpAt = connectQmp(qmpPath, { timeoutMs: 30_000 }).then((client) => {
      const at = performance.now() - t0;
      client.close();
      return at;
    });
    const socket = await connectWhenListening(VNC_PORT, until);
    const vncListening = performance.now() - t0;
    try {
      const { handshake, frame, frames } = await firstFrame(socket, t0, until);
      return { qmp: await qmpAt, vncListening, handshake, frame, frames };
    } finally {
      socket.destroy();
    }
  } finally {
    qemu.kill('SIGKILL');
    if (qemu.exitCode === null && qemu.signalCode === null)
      await new Promise((resolve) => qemu.once('exit', resolve));
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

const dir = mkdtempSync(join(tmpdir(), 'vdi-guest-frame-'));
try {
  const images = await prepareDemoImages({ dataDir: dir });
  const runs: Run[] = [];
  for (let run = 1; run <= RUNS; run += 1) {
    const result = await oneRun(dir, images.template);
    runs.push(result);
    console.log(
      `run ${run}: QMP ${result.qmp.toFixed(0)} ms, VNC listening ${result.vncListening.toFixed(0)} ms, ` +
        `handshake ${result.handshake.toFixed(0)} ms, first non-blank frame ${result.frame.toFixed(0)} ms ` +
        `(${result.frames} full frame(s) read)`,
    );
  }
  const m = (key: keyof Run) => median(runs.map((r) => r[key])).toFixed(0);
  console.log(
    `median over ${RUNS} runs, ms from QEMU's spawn: QMP ${m('qmp')}, VNC listening ${m('vncListening')}, ` +
      `handshake ${m('handshake')}, first non-blank frame ${m('frame')}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
