/**
 * The host side of the desktops' networks.
 *
 * As root (mode `bridge`): the NAT network (`default`) is a Linux bridge `<prefix>nat0` with the
 * address `<subnet>.1/24`, a `dnsmasq` on it for DHCP and DNS (pid and leases in
 * `/run/vdi-networks/<bridge>.{pid,leases}`, shared by the portals of the host), IPv4 forwarding, and masquerading of the subnet's
 * outbound traffic with nftables (a table `ip <prefix>_nat`), or iptables when `nft` is missing,
 * or none (with a log line) when both are. Each card of a started domain gets a TAP device
 * `<prefix>t<hash>` plugged into the bridge before QEMU starts; it is deleted when the domain
 * ends. A domain's address is read from dnsmasq's lease file by the card's MAC and reported with
 * the `address` event (`null` when the domain ends).
 *
 * Without root (mode `user`): QEMU's user-mode network, outbound only; no address is reported.
 * Mode `none`: no network card at all.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { HypervisorError, type DomainSpec } from './types.ts';

const execFileAsync = promisify(execFile);

/** The host's networks state (dnsmasq's pid and lease files): under /run, gone at a reboot. */
export const HOST_NETWORKS_DIR = '/run/vdi-networks';

/** `auto`: `bridge` as root when `ip` and `dnsmasq` are there, `user` otherwise. */
export type NetworkMode = 'auto' | 'bridge' | 'user' | 'none';

export interface HostNetworksOptions {
  mode: NetworkMode;
  /** Prefix of the bridge, TAP and nftables names (1..6 lower-case letters and digits). Default `vdi`. */
  prefix?: string;
  /** The NAT network's /24, as its first three octets. Default `10.87.0`. */
  natSubnet?: string;
  /**
   * Where dnsmasq's pid and lease files are. Default HOST_NETWORKS_DIR: a bridge is the host's, so
   * every portal on the host that uses it shares its dnsmasq and reads the same leases.
   */
  stateDir?: string;
  /** Lease file poll period (ms). Default 1000. */
  pollMs?: number;
  /** Where the one-off lines go (the fallback to user-mode networking, a missing NAT tool). */
  log?: (line: string) => void;
}

interface Card {
  mac: string;
  tap: string;
  /** The lease line of this MAC when the card was plugged in (a stale lease is no address). */
  staleLease: string | undefined;
}

export interface HostNetworkEvents {
  address: [id: string, ip: string | null];
}

const run = (cmd: string, args: string[]) => execFileAsync(cmd, args, { timeout: 10_000 });
const quiet = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );
const onPath = (name: string) =>
  ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].some((dir) => existsSync(path.join(dir, name)));

/** The lease lines of a dnsmasq lease file, by MAC (`<expiry> <mac> <ip> <host> <client-id>`). */
export function parseLeases(text: string): Map<string, { ip: string; line: string }> {
  const leases = new Map<string, { ip: string; line: string }>();
  for (const line of text.split('\n')) {
    const [, mac, ip] = line.trim().split(/\s+/);
    if (mac && ip) leases.set(mac.toLowerCase(), { ip, line });
  }
  return leases;
}

export class HostNetworks extends EventEmitter<HostNetworkEvents> {
  readonly mode: 'bridge' | 'user' | 'none';
  readonly prefix: string;
  readonly bridge: string;
  readonly subnet: string;
  readonly leaseFile: string;
  private readonly dir: string;
  private readonly pidFile: string;
  private readonly log: (line: string) => void;
  private readonly cards = new Map<string, Card[]>();
  private readonly reported = new Map<string, string | null>();
  /** When each domain's cards were plugged in (or found after a restart). */
  private readonly since = new Map<string, number>();
  private ready: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly pollMs: number;

  constructor(options: HostNetworksOptions) {
    super();
    this.prefix = options.prefix ?? 'vdi';
    if (!/^[a-z0-9]{1,6}$/.test(this.prefix))
      throw new Error(`network prefix must be 1..6 lower-case letters or digits: ${this.prefix}`);
    this.subnet = options.natSubnet ?? '10.87.0';
    if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(this.subnet))
      throw new Error(`NAT subnet must be three octets (a /24): ${this.subnet}`);
    this.bridge = `${this.prefix}nat0`;
    this.dir = options.stateDir ?? HOST_NETWORKS_DIR;
    this.leaseFile = path.join(this.dir, `${this.bridge}.leases`);
    this.pidFile = path.join(this.dir, `${this.bridge}.pid`);
    this.log = options.log ?? (() => undefined);
    this.pollMs = options.pollMs ?? 1000;
    const root = process.getuid?.() === 0;
    if (options.mode === 'auto') {
      this.mode = root && onPath('ip') && onPath('dnsmasq') ? 'bridge' : 'user';
      if (this.mode === 'user')
        this.log(
          'desktop networks: not root (or no ip/dnsmasq): desktops get QEMU user-mode networking (outbound only, no address shown)',
        );
    } else this.mode = options.mode;
  }

  /** The TAP device of card `index` of domain `id` (at most 15 characters). */
  tapName(id: string, index: number): string {
    const hash = createHash('sha256').update(id).digest('hex').slice(0, 7);
    return `${this.prefix}t${hash}${index}`;
  }

  /** The spec with the host side of its cards (made now); no card in mode `none`. */
  async attach(spec: DomainSpec): Promise<DomainSpec> {
    const nics = spec.network ?? [];
    if (nics.length === 0 || this.mode === 'none') return { ...spec, network: [] };
    for (const nic of nics)
      if (nic.network !== 'default')
        throw new HypervisorError('invalid_spec', `unknown network ${nic.network}`);
    if (this.mode === 'user')
      return { ...spec, network: nics.map((nic) => ({ ...nic, backend: { kind: 'user' } })) };
    await this.ensureNat();
    const leases = parseLeases(await fsp.readFile(this.leaseFile, 'utf8').catch(() => ''));
    const cards: Card[] = [];
    try {
      for (const [i, nic] of nics.entries()) {
        const tap = this.tapName(spec.id, i);
        await quiet(run('ip', ['link', 'del', tap]));
        await run('ip', ['tuntap', 'add', 'dev', tap, 'mode', 'tap']);
        cards.push({ mac: nic.mac, tap, staleLease: leases.get(nic.mac)?.line });
        await run('ip', ['link', 'set', tap, 'master', this.bridge]);
        await run('ip', ['link', 'set', tap, 'up']);
      }
    } catch (error) {
      for (const card of cards) await quiet(run('ip', ['link', 'del', card.tap]));
      throw new HypervisorError('start_failed', `cannot plug the network card: ${String(error)}`, {
        cause: error,
      });
    }
    this.cards.set(spec.id, cards);
    this.reported.set(spec.id, null);
    this.since.set(spec.id, Date.now());
    this.timer ??= setInterval(() => void this.poll(), this.pollMs).unref();
    return {
      ...spec,
      network: nics.map((nic, i) => ({
        ...nic,
        backend: { kind: 'tap', ifname: cards[i]?.tap ?? '' },
      })),
    };
  }

  /**
   * Follow the address of a domain this process did not start (adopted after a restart) whose
   * first card is still on the bridge.
   */
  track(id: string, mac: string): void {
    if (this.cards.has(id) || !this.serves(id)) return;
    this.cards.set(id, [{ mac, tap: this.tapName(id, 0), staleLease: undefined }]);
    this.reported.set(id, null);
    this.since.set(id, Date.now());
    this.timer ??= setInterval(() => void this.poll(), this.pollMs).unref();
  }

  /** The domain ended: its TAP devices go and its address with them. */
  async release(id: string): Promise<void> {
    const cards = this.cards.get(id);
    if (!cards) return;
    this.cards.delete(id);
    for (const card of cards) await quiet(run('ip', ['link', 'del', card.tap]));
    if (this.reported.get(id)) this.emit('address', id, null);
    this.reported.delete(id);
    this.since.delete(id);
  }

  /** Whether the domain has a card on a bridge (its TAP exists: also after a server restart). */
  serves(id: string): boolean {
    return this.mode === 'bridge' && existsSync(`/sys/class/net/${this.tapName(id, 0)}`);
  }

  /**
   * Whether a guest should not be idle-paused: it has an address on a bridge (it serves there), or
   * its card was plugged in less than `settleMs` ago (it may still be asking for one). A guest that
   * never asks (the idle guest) is paused as any other.
   */
  keepsRunning(id: string, settleMs = 30_000): boolean {
    if (!this.cards.has(id)) return false;
    return !!this.reported.get(id) || Date.now() - (this.since.get(id) ?? 0) < settleMs;
  }

  /** The last address reported for a domain. */
  addressOf(id: string): string | null {
    return this.reported.get(id) ?? null;
  }

  private async poll(): Promise<void> {
    if (this.cards.size === 0) return;
    const leases = parseLeases(await fsp.readFile(this.leaseFile, 'utf8').catch(() => ''));
    for (const [id, cards] of this.cards) {
      let ip: string | null = null;
      for (const card of cards) {
        const lease = leases.get(card.mac);
        if (lease && lease.line !== card.staleLease) {
          ip = lease.ip;
          break;
        }
      }
      if (this.reported.get(id) !== ip && this.cards.has(id)) {
        this.reported.set(id, ip);
        this.emit('address', id, ip);
      }
    }
  }

  private ensureNat(): Promise<void> {
    this.ready ??= this.setUpNat().catch((error: unknown) => {
      this.ready = undefined;
      throw new HypervisorError('start_failed', `cannot set up the NAT network: ${String(error)}`, {
        cause: error,
      });
    });
    return this.ready;
  }

  private async setUpNat(): Promise<void> {
    const br = this.bridge;
    await fsp.mkdir(this.dir, { recursive: true });
    // Another portal on this host may be making the same bridge: "exists" is no failure.
    await quiet(run('ip', ['link', 'add', br, 'type', 'bridge']));
    if (!existsSync(`/sys/class/net/${br}`)) await run('ip', ['link', 'add', br, 'type', 'bridge']);
    await quiet(run('ip', ['addr', 'add', `${this.subnet}.1/24`, 'dev', br]));
    await run('ip', ['link', 'set', br, 'up']);
    await fsp.writeFile('/proc/sys/net/ipv4/ip_forward', '1\n');
    await this.masquerade(true);
    if (!this.dnsmasqPid()) await this.startDnsmasq();
  }

  private async masquerade(on: boolean): Promise<void> {
    const net = `${this.subnet}.0/24`;
    const table = `${this.prefix}_nat`;
    if (onPath('nft')) {
      await quiet(run('nft', ['delete', 'table', 'ip', table]));
      if (!on) return;
      const rules = [
        `add table ip ${table}`,
        `add chain ip ${table} vdi_postrouting { type nat hook postrouting priority 100 ; }`,
        `add rule ip ${table} vdi_postrouting ip saddr ${net} ip daddr != ${net} masquerade`,
        `add chain ip ${table} vdi_forward { type filter hook forward priority 0 ; }`,
        `add rule ip ${table} vdi_forward iifname ${this.bridge} accept`,
        `add rule ip ${table} vdi_forward oifname ${this.bridge} ct state established,related accept`,
      ];
      await run('nft', [rules.join(' ; ')]);
    } else if (onPath('iptables')) {
      const rule = ['POSTROUTING', '-s', net, '!', '-d', net, '-j', 'MASQUERADE'];
      while (await quiet(run('iptables', ['-t', 'nat', '-D', ...rule])));
      if (on) await run('iptables', ['-t', 'nat', '-A', ...rule]);
    } else if (on) {
      this.log(
        'desktop networks: neither nft nor iptables: the NAT network has no outbound access',
      );
    }
  }

  private dnsmasqPid(): number | undefined {
    try {
      const pid = Number(readFileSync(this.pidFile, 'utf8').trim());
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      return cmdline.includes('dnsmasq') && cmdline.includes(this.bridge) ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  private async startDnsmasq(): Promise<void> {
    const s = this.subnet;
    // Detached: like the QEMU processes, it outlives a restart of the server.
    const child = spawn(
      'dnsmasq',
      [
        '--keep-in-foreground',
        '--conf-file=/dev/null',
        `--interface=${this.bridge}`,
        '--bind-interfaces',
        '--except-interface=lo',
        `--dhcp-range=${s}.10,${s}.250,255.255.255.0,1h`,
        `--dhcp-leasefile=${this.leaseFile}`,
        '--dhcp-authoritative',
        `--pid-file=${this.pidFile}`,
        '--log-facility=-',
      ],
      { detached: true, stdio: 'ignore' },
    );
    child.unref();
    const pid = child.pid;
    if (!pid) throw new Error('dnsmasq did not start');
    for (let i = 0; i < 50 && !this.dnsmasqPid(); i++) {
      if (child.exitCode !== null) throw new Error(`dnsmasq exited with ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!this.dnsmasqPid()) throw new Error('dnsmasq wrote no pid file');
  }

  /** Stops the lease poll (the bridge, dnsmasq and TAPs of running domains stay). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Removes everything: TAPs, dnsmasq, the NAT rules and the bridge (tests, uninstall). */
  async teardown(): Promise<void> {
    this.close();
    for (const id of [...this.cards.keys()]) await this.release(id);
    const links = await fsp.readdir('/sys/class/net').catch(() => [] as string[]);
    for (const link of links.filter((name) => name.startsWith(`${this.prefix}t`)))
      await quiet(run('ip', ['link', 'del', link]));
    const pid = this.dnsmasqPid();
    if (pid) process.kill(pid, 'SIGTERM');
    if (this.mode === 'bridge') await this.masquerade(false);
    await quiet(run('ip', ['link', 'del', this.bridge]));
    await fsp.rm(this.leaseFile, { force: true });
    await fsp.rm(this.pidFile, { force: true });
    this.ready = undefined;
  }
}
