/**
 * The host's WireGuard interface of the users' VPN: made with the kernel module when the kernel
 * has one (`ip link add … type wireguard`), else by a `wireguard-go` child process (userspace, a
 * TUN device and its control socket in /var/run/wireguard). Its whole state (private key, listen
 * port, peers) is applied with `wg syncconf`, so peers that are gone are removed and the sessions
 * of the others are kept; its address and MTU with `ip`. `down` deletes the interface (and ends
 * `wireguard-go`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Where `wireguard-go` puts its control socket (what `wg` talks to). */
const WIREGUARD_GO_SOCKETS = '/var/run/wireguard';

export interface WireguardPeer {
  publicKey: string;
  /** The peer's one address (its AllowedIPs are this /32). */
  address: string;
}

export interface WireguardState {
  privateKey: string;
  listenPort: number;
  /** The interface's address with its network's prefix, e.g. `10.0.0.1/16`. */
  address: string;
  mtu: number;
  peers: readonly WireguardPeer[];
}

const run = (cmd: string, args: string[]) => execFileAsync(cmd, args, { timeout: 10_000 });
const quiet = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );

/** Whether a program is installed in one of the system's directories. */
export function onSystemPath(name: string): boolean {
  return ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].some((dir) => existsSync(path.join(dir, name)));
}

/** The `wg syncconf` text of a state: the interface's key and port, one section per peer. */
export function wgConfigText(state: Pick<WireguardState, 'privateKey' | 'listenPort' | 'peers'>) {
  const lines = [
    '[Interface]',
    `PrivateKey = ${state.privateKey}`,
    `ListenPort = ${state.listenPort}`,
  ];
  for (const peer of state.peers)
    lines.push('', '[Peer]', `PublicKey = ${peer.publicKey}`, `AllowedIPs = ${peer.address}/32`);
  return `${lines.join('\n')}\n`;
}

/**
 * Calls `fn` with the path of a file holding `text`, readable by root only, removed afterwards (a
 * secret never goes on a command line; `/dev/stdin` cannot be opened on Node's socket pipes).
 */
async function withPrivateFile<T>(text: string, fn: (file: string) => Promise<T>): Promise<T> {
  const dir = await fsp.mkdtemp(path.join(tmpdir(), 'vdi-wg-'));
  try {
    const file = path.join(dir, 'wg.conf');
    await fsp.writeFile(file, text, { mode: 0o600 });
    return await fn(file);
  } finally {
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

export class WireguardInterface {
  /** How the interface is made; undefined while it is down. */
  kind: 'kernel' | 'userspace' | undefined;
  private child: ChildProcess | undefined;
  private address: string | undefined;
  private mtu: number | undefined;

  constructor(
    readonly name: string,
    private readonly log: (line: string) => void = () => undefined,
  ) {
    if (!/^[A-Za-z0-9_-]{1,15}$/.test(name)) throw new Error(`invalid interface name ${name}`);
  }

  /** Makes the interface (a leftover of the same name is deleted first). */
  async up(): Promise<'kernel' | 'userspace'> {
    await this.down();
    if (await quiet(run('ip', ['link', 'add', 'dev', this.name, 'type', 'wireguard']))) {
      this.kind = 'kernel';
      return this.kind;
    }
    const socket = path.join(WIREGUARD_GO_SOCKETS, `${this.name}.sock`);
    const child = spawn('wireguard-go', ['-f', this.name], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'error' },
    });
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    let failed: Error | undefined;
    child.on('error', (error) => {
      failed = error;
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.kind = undefined;
      this.log(`VPN endpoint: wireguard-go ended (${signal ?? code}): ${stderr.trim()}`);
    });
    for (let i = 0; i < 100; i++) {
      if (existsSync(`/sys/class/net/${this.name}`) && existsSync(socket)) {
        this.kind = 'userspace';
        return this.kind;
      }
      if (failed || child.exitCode !== null || this.child !== child) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await this.down();
    if ((failed as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
      throw new Error('the kernel has no WireGuard module and wireguard-go is not installed');
    throw new Error(`wireguard-go did not make ${this.name}: ${stderr.trim() || 'no answer'}`);
  }

  /** Applies the whole state: keys, port and peers (`wg syncconf`), then address and MTU. */
  async apply(state: WireguardState): Promise<void> {
    await withPrivateFile(wgConfigText(state), (file) => run('wg', ['syncconf', this.name, file]));
    if (this.address !== state.address) {
      await run('ip', ['address', 'flush', 'dev', this.name]);
      await run('ip', ['address', 'add', state.address, 'dev', this.name]);
      this.address = state.address;
    }
    if (this.mtu !== state.mtu) {
      await run('ip', ['link', 'set', 'dev', this.name, 'mtu', String(state.mtu), 'up']);
      this.mtu = state.mtu;
    }
  }

  /** The public keys of the peers the interface has now. */
  async peerKeys(): Promise<string[]> {
    const { stdout } = await run('wg', ['show', this.name, 'peers']);
    return stdout.split('\n').filter(Boolean);
  }

  /** Deletes the interface (`wireguard-go` ends with it; it is signalled when it does not). */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.kind = undefined;
    this.address = undefined;
    this.mtu = undefined;
    await quiet(run('ip', ['link', 'del', 'dev', this.name]));
    if (child && child.exitCode === null && child.signalCode === null) {
      const ended = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([ended, new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
  }
}
