/**
 * Helpers for the hypervisor tests and the benchmark (not production code): temp data dirs, demo
 * specs, RFB (VNC) probes, CPU sampling, and a last-resort QEMU killer.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import path from 'node:path';
import { prepareDemoImages, type DemoImages } from './demo-images.ts';
import type { DomainHardware, DomainSpec } from './types.ts';

/** A shared image cache so every test file does not convert the template again. */
export const IMAGE_CACHE_DIR = path.join(os.tmpdir(), 'vdi-hypervisor-test-images');

export function demoImages(): Promise<DemoImages> {
  return prepareDemoImages({ dataDir: IMAGE_CACHE_DIR });
}

export function tempDataDir(prefix = 'vdi-hv-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function demoSpec(
  id: string,
  diskPath: string,
  hardware: Partial<DomainHardware> = {},
  passwords = { vnc: 'vncpass1', spice: 'spicepass' },
): DomainSpec {
  return {
    id,
    name: `Demo ${id}`,
    diskPath,
    hardware: {
      vcpus: 1,
      memoryMiB: 128,
      bootOrder: ['disk'],
      diskBus: 'virtio',
      video: 'default',
      isos: [],
      floppies: [],
      ...hardware,
    },
    vncPassword: passwords.vnc,
    spicePassword: passwords.spice,
  };
}

/**
 * The start time of a process (clock ticks after boot, /proc/<pid>/stat field 22), or null when it
 * is gone. A pid with another start time is another process: pids wrap within minutes here.
 */
function startTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Pids to SIGKILL when the worker exits, whatever happened, each with its start time. */
const tracked = new Map<number, string>();
let hooked = false;
export function trackPid(pid: number): void {
  // 0 and negative numbers name process groups to kill(): never track them.
  if (!Number.isInteger(pid) || pid <= 0) return;
  const started = startTime(pid);
  if (started === null) return;
  tracked.set(pid, started);
  if (!hooked) {
    hooked = true;
    process.once('exit', killTracked);
  }
}
/**
 * SIGKILL every tracked process still alive: only a pid whose start time is still the tracked one,
 * never the process that got the pid of a tracked one after it ended (another test worker, a
 * database backend, a browser).
 */
export function killTracked(): void {
  for (const [pid, started] of tracked) {
    if (startTime(pid) !== started) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  tracked.clear();
}

/** CPU time (user+system) of a process in seconds. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime = field 14, stime = field 15
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / 100; // CLK_TCK = 100 on Linux
}

/** Fraction of one core used by `pid` over `ms`. */
export async function cpuUsage(pid: number, ms = 1000): Promise<number> {
  const a = cpuSeconds(pid);
  const t = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, ms));
  const b = cpuSeconds(pid);
  const elapsed = Number(process.hrtime.bigint() - t) / 1e9;
  return (b - a) / elapsed;
}

/** VmRSS of a process in MiB. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return match?.[1] ? Number(match[1]) / 1024 : 0;
}

/** Local TCP listeners of a port, as "a.b.c.d" strings, from /proc/net/tcp. */
export function listenAddresses(port: number): string[] {
  const out: string[] = [];
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const cols = line.trim().split(/\s+/);
    const local = cols[1];
    if (!local || cols[3] !== '0A') continue; // 0A = LISTEN
    const [hexIp, hexPort] = local.split(':');
    if (!hexIp || !hexPort || parseInt(hexPort, 16) !== port) continue;
    const bytes = Buffer.from(hexIp, 'hex').reverse();
    out.push([...bytes].join('.'));
  }
  return out;
}

/** Buffered reader over a socket. */
class SocketReader {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private ended = false;
  constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.ended = true;
      this.wake();
    });
    socket.on('error', () => undefined);
  }
  private wake() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
  async read(n: number, timeoutMs = 5000): Promise<Buffer> {
    const deadline = Date.now() + timeoutMs;
    while (this.buffer.length < n) {
      if (this.ended)
        throw new Error(`socket closed (wanted ${n} bytes, have ${this.buffer.length})`);
      if (Date.now() > deadline) throw new Error('read timeout');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    const out = this.buffer.subarray(0, n);
    this.buffer = this.buffer.subarray(n);
    return out;
  }
}

function connect(port: number, timeoutMs = 3000, host = '127.0.0.1'): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port, host });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('connect timeout'));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** TLS over a connected socket, checking the server certificate against `ca` only (no host name). */
function startTls(socket: net.Socket, ca: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const secure = tls.connect({ socket, ca, checkServerIdentity: () => undefined });
    secure.once('secureConnect', () => resolve(secure));
    secure.once('error', (error) => {
      socket.destroy();
      reject(error);
    });
  });
}

/** Read the RFB banner of a VNC server on `host` (retrying until `timeoutMs`). */
export async function readRfbBanner(
  port: number,
  timeoutMs = 5000,
  host = '127.0.0.1',
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const socket = await connect(port, 3000, host);
      try {
        const reader = new SocketReader(socket);
        return (await reader.read(12, Math.max(100, deadline - Date.now()))).toString('latin1');
      } finally {
        socket.destroy();
      }
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** VNC auth response: DES-ECB of the challenge with the bit-reversed password as key. */
export function vncAuthResponse(password: string, challenge: Buffer): Buffer | undefined {
  const key = Buffer.alloc(8);
  Buffer.from(password, 'latin1').copy(key, 0, 0, 8);
  for (let i = 0; i < 8; i++) {
    let b = key[i] ?? 0;
    let r = 0;
    for (let bit = 0; bit < 8; bit++) {
      r = (r << 1) | (b & 1);
      b >>= 1;
    }
    key[i] = r;
  }
  // Node's OpenSSL 3 has DES only in the legacy provider: run it in a child with that provider.
  const script =
    "const c=require('crypto');const [k,d]=process.argv.slice(1).map(h=>Buffer.from(h,'hex'));" +
    "const e=c.createCipheriv('des-ecb',k,null);e.setAutoPadding(false);process.stdout.write(Buffer.concat([e.update(d),e.final()]).toString('hex'))";
  try {
    const hex = execFileSync(
      process.execPath,
      ['--openssl-legacy-provider', '-e', script, key.toString('hex'), challenge.toString('hex')],
      { encoding: 'utf8' },
    );
    return Buffer.from(hex, 'hex');
  } catch {
    return undefined;
  }
}

export interface RfbAuthResult {
  /** Security types offered by the server. */
  types: number[];
  /** 'ok' / 'failed', or 'skipped' when DES is not available here. */
  result: 'ok' | 'failed' | 'skipped';
  reason?: string;
}

/** Run the RFB 3.8 handshake with VNC authentication (type 2) and `password`. */
export async function rfbAuthenticate(port: number, password: string): Promise<RfbAuthResult> {
  const socket = await connect(port);
  try {
    const reader = new SocketReader(socket);
    const banner = (await reader.read(12)).toString('latin1');
    if (!banner.startsWith('RFB 003.')) throw new Error(`bad banner ${banner}`);
    socket.write('RFB 003.008\n');
    const count = (await reader.read(1))[0] ?? 0;
    if (count === 0) throw new Error('server refused the connection');
    const types = [...(await reader.read(count))];
    if (!types.includes(2)) return { types, result: 'failed', reason: 'VNC auth not offered' };
    socket.write(Buffer.from([2]));
    const challenge = await reader.read(16);
    const response = vncAuthResponse(password, challenge);
    if (!response) return { types, result: 'skipped' };
    socket.write(response);
    const status = (await reader.read(4)).readUInt32BE(0);
    if (status === 0) return { types, result: 'ok' };
    let reason: string | undefined;
    try {
      const len = (await reader.read(4, 1000)).readUInt32BE(0);
      reason = (await reader.read(len, 1000)).toString('utf8');
    } catch {
      /* no reason */
    }
    return { types, result: 'failed', reason };
  } finally {
    socket.destroy();
  }
}

/**
 * SPICE link handshake on the main channel with `password` (legacy ticket auth: RSA-OAEP/SHA-1 of
 * the password with the server's key). Returns the link result: 0 = OK, 7 = permission denied.
 */
export async function spiceAuthenticate(
  port: number,
  password: string,
  /** The CA certificate of a TLS-only SPICE port (the link then runs inside TLS). */
  ca?: string,
): Promise<number> {
  const { createPublicKey, publicEncrypt, constants } = await import('node:crypto');
  const plain = await connect(port);
  const socket = ca ? await startTls(plain, ca) : plain;
  try {
    const reader = new SocketReader(socket);
    const mess = Buffer.alloc(18); // SpiceLinkMess: connection 0, channel main (1) id 0, no caps
    mess[4] = 1;
    mess.writeUInt32LE(18, 14);
    const head = Buffer.alloc(16); // SpiceLinkHeader: "REDQ", version 2.2, size
    head.write('REDQ', 0, 'latin1');
    head.writeUInt32LE(2, 4);
    head.writeUInt32LE(2, 8);
    head.writeUInt32LE(mess.length, 12);
    socket.write(Buffer.concat([head, mess]));
    const size = (await reader.read(16)).readUInt32LE(12);
    const reply = await reader.read(size);
    const error = reply.readUInt32LE(0);
    if (error) return error;
    const key = createPublicKey({ key: reply.subarray(4, 166), format: 'der', type: 'spki' });
    socket.write(
      publicEncrypt(
        { key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
        Buffer.from(`${password}\0`),
      ),
    );
    return (await reader.read(4)).readUInt32LE(0);
  } finally {
    socket.destroy();
  }
}
