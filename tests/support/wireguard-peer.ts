/**
 * A WireGuard peer as a user runs one, for the tests that run as root: a network namespace of its
 * own that reaches the host through a veth pair (the host's end is `<net>.1`, what the portal's
 * VPN settings name as the endpoint host), and a userspace WireGuard interface (wireguard-go) in
 * it, set up only from a client file the portal hands out, as wg-quick would (keys, endpoint,
 * allowed IPs; then its address, MTU and a route per allowed network). Every name starts with the
 * caller's prefix; close() removes the namespace, the veth pair and the process, failed or not.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** A command's output; its failure names the command and what it wrote on stderr. */
export const sh = async (cmd: string, ...args: string[]): Promise<string> =>
  (
    await execFileAsync(cmd, args, { timeout: 20_000 }).catch((error: unknown) => {
      const { stderr, signal } = error as { stderr?: string; signal?: string };
      throw new Error(`${cmd} ${args.join(' ')}: ${stderr?.trim() || signal || String(error)}`);
    })
  ).stdout;

/** Whether a command succeeded. */
export const quiet = (p: Promise<unknown>): Promise<boolean> =>
  p.then(
    () => true,
    () => false,
  );

/** A command run in a network namespace. */
export const inNs = (ns: string, ...args: string[]): Promise<string> =>
  sh('ip', 'netns', 'exec', ns, ...args);

/** A UDP port nothing listens on now. */
export async function freeUdpPort(): Promise<number> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '0.0.0.0', resolve));
  const { port } = socket.address();
  await new Promise<void>((resolve) => socket.close(resolve));
  return port;
}

export type WireguardFile = Record<'Interface' | 'Peer', Record<string, string>>;

/** The sections of a WireGuard file (`[Section]`, `Key = value`). */
export function parseWireguardFile(content: string): WireguardFile {
  const conf: WireguardFile = { Interface: {}, Peer: {} };
  let section: Record<string, string> | undefined;
  for (const line of content.split('\n')) {
    const header = /^\[(Interface|Peer)\]$/.exec(line);
    if (header) section = conf[header[1] as 'Interface' | 'Peer'];
    const m = /^(\w+) = (.+)$/.exec(line);
    if (m && section) section[m[1] ?? ''] = m[2] ?? '';
  }
  return conf;
}

export interface WireguardPeerOptions {
  /** Starts every name (at most 11 characters: Linux interface names have 15). */
  prefix: string;
  /** The veth pair's /30 as three octets: the host is `<net>.1`, the peer `<net>.2`. */
  net: string;
}

export class WireguardPeer {
  readonly ns: string;
  readonly iface: string;
  /** The host's end of the veth pair: the endpoint host the peer dials. */
  readonly hostAddress: string;
  private readonly hostLink: string;
  private readonly dir = mkdtempSync(join(tmpdir(), 'wireguard-peer-'));
  private process: ChildProcess | undefined;

  private constructor(private readonly options: WireguardPeerOptions) {
    this.ns = `${options.prefix}cl`;
    this.iface = `${options.prefix}cw`;
    this.hostLink = `${options.prefix}h`;
    this.hostAddress = `${options.net}.1`;
  }

  /** The namespace, its veth pair to the host and its WireGuard interface (no keys yet). */
  static async start(options: WireguardPeerOptions): Promise<WireguardPeer> {
    const peer = new WireguardPeer(options);
    try {
      await peer.setUp();
    } catch (error) {
      await peer.close();
      throw error;
    }
    return peer;
  }

  private async setUp(): Promise<void> {
    const { ns, hostLink } = this;
    const client = `${this.options.prefix}c`;
    await sh('ip', 'netns', 'add', ns);
    await sh('ip', 'link', 'add', hostLink, 'type', 'veth', 'peer', 'name', client, 'netns', ns);
    await sh('ip', 'address', 'add', `${this.hostAddress}/30`, 'dev', hostLink);
    await sh('ip', 'link', 'set', hostLink, 'up');
    await inNs(ns, 'ip', 'address', 'add', `${this.options.net}.2/30`, 'dev', client);
    await inNs(ns, 'ip', 'link', 'set', client, 'up');
    const started = spawn('ip', ['netns', 'exec', ns, 'wireguard-go', '-f', this.iface], {
      stdio: 'ignore',
    });
    this.process = started;
    const socket = `/var/run/wireguard/${this.iface}.sock`;
    const deadline = Date.now() + 5000;
    while (!existsSync(socket)) {
      if (started.exitCode !== null || Date.now() > deadline)
        throw new Error(`wireguard-go ${this.iface} did not start`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Configures the interface from a downloaded file, as wg-quick would; the file's sections. */
  async useFile(content: string): Promise<WireguardFile> {
    const { ns, iface } = this;
    const conf = parseWireguardFile(content);
    const { Address: address = '', MTU: mtu = '1420', ...wgInterface } = conf.Interface;
    const lines = ['[Interface]', ...Object.entries(wgInterface).map(([k, v]) => `${k} = ${v}`)];
    lines.push('[Peer]', ...Object.entries(conf.Peer).map(([k, v]) => `${k} = ${v}`));
    const file = join(this.dir, 'client.conf');
    writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
    await inNs(ns, 'wg', 'setconf', iface, file);
    await inNs(ns, 'ip', 'address', 'flush', 'dev', iface);
    await inNs(ns, 'ip', 'address', 'add', `${address}/32`, 'dev', iface);
    await inNs(ns, 'ip', 'link', 'set', iface, 'mtu', mtu, 'up');
    for (const allowed of (conf.Peer.AllowedIPs ?? '').split(','))
      await inNs(ns, 'ip', 'route', 'replace', allowed.trim(), 'dev', iface);
    return conf;
  }

  /**
   * One ping from the namespace: whether it was answered within half a second (the round trip
   * between namespaces of one host, WireGuard handshake included, takes milliseconds).
   */
  pings(address: string): Promise<boolean> {
    return quiet(inNs(this.ns, 'timeout', '-s', 'INT', '0.5', 'busybox', 'ping', '-c1', address));
  }

  /** The body of an HTTP GET from the namespace, or undefined when it failed. */
  fetch(url: string): Promise<string | undefined> {
    return inNs(this.ns, 'curl', '-s', '--max-time', '3', url).catch(() => undefined);
  }

  async close(): Promise<void> {
    if (this.process?.pid && this.process.exitCode === null) this.process.kill('SIGTERM');
    await quiet(sh('ip', 'netns', 'del', this.ns));
    await quiet(sh('ip', 'link', 'del', this.hostLink));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
