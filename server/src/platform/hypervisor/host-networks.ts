/**
 * The host side of the desktops' networks.
 *
 * As root (mode `bridge`): each network (`network-defs.ts`; the networks table, read at each
 * start) is a Linux bridge with dnsmasq for DHCP and DNS and the forwarding rules of its kind
 * (`host-bridges.ts`), made at the first start that needs it or when an admin creates the network,
 * removed when the admin deletes it. Each card of a started domain gets a TAP device
 * `<prefix>t<hash><index>` plugged into its network's bridge before QEMU starts, in the order of
 * the cards; it is deleted when the domain ends. A domain's addresses are read from the lease
 * files of its networks by the cards' MACs and reported with the `address` event: the first
 * card's address and every card's by network (`null` and none when the domain ends).
 *
 * Without root (mode `user`): QEMU's user-mode network for every card, outbound only; no address
 * is reported, and network changes touch nothing on the host (said once). Mode `none`: no card.
 */
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { existsSync, promises as fsp } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { HypervisorError, type DomainSpec } from './types.ts';
import {
  bridgeFiles,
  deleteTaps,
  dnsmasqPid,
  ipBatch,
  onPath,
  quiet,
  readLeases,
  run,
  setUpBridge,
  tearDownBridge,
} from './host-bridges.ts';
import { seededNetworks, type NetworkDef } from './network-defs.ts';

/** The host's networks state (dnsmasq's pid and lease files): under /run, gone at a reboot. */
export const HOST_NETWORKS_DIR = '/run/vdi-networks';

/** `auto`: `bridge` as root when `ip` and `dnsmasq` are there, `user` otherwise. */
export type NetworkMode = 'auto' | 'bridge' | 'user' | 'none';

export interface HostNetworksOptions {
  mode: NetworkMode;
  /** Prefix of the seeded bridges, the TAP and nftables names (1..6 lower-case letters and digits). Default `vdi`. */
  prefix?: string;
  /** The NAT network's /24, as its first three octets (the seeded networks follow it). Default `10.87.0`. */
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
  /** The networks as defined now (the networks table). Default: the seeded three. */
  definitions?: () => Promise<readonly NetworkDef[]>;
}

interface Card {
  network: string;
  mac: string;
  tap: string;
  leases: string;
  /** The lease line of this MAC when the card was plugged in (a stale lease is no address). */
  staleLease: string | undefined;
}

export interface HostNetworkEvents {
  address: [id: string, ip: string | null, addresses: Record<string, string>];
}

/** How often `plug` looks for the TAP devices QEMU makes as it starts. */
const TAP_POLL_MS = 5;

export class HostNetworks extends EventEmitter<HostNetworkEvents> {
  readonly mode: 'bridge' | 'user' | 'none';
  readonly prefix: string;
  /** The seeded NAT network's bridge and /24. */
  readonly bridge: string;
  readonly subnet: string;
  /** The users' WireGuard interface, the one thing a vpn network's bridge forwards to. */
  readonly tunnel: string;
  private readonly dir: string;
  private readonly log: (line: string) => void;
  private readonly definitions: () => Promise<readonly NetworkDef[]>;
  private readonly cards = new Map<string, Card[]>();
  /** Cards attached to a spec whose QEMU has not been plugged in yet, with their bridges. */
  private readonly pending = new Map<string, { cards: Card[]; bridges: string[] }>();
  private readonly reported = new Map<string, string>();
  /** When each domain's cards were plugged in (or found after a restart). */
  private readonly since = new Map<string, number>();
  /** The bridges made by this process, by what they were made as. */
  private readonly ready = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly pollMs: number;
  private saidUnchanged = false;

  constructor(options: HostNetworksOptions) {
    super();
    this.prefix = options.prefix ?? 'vdi';
    if (!/^[a-z0-9]{1,6}$/.test(this.prefix))
      throw new Error(`network prefix must be 1..6 lower-case letters or digits: ${this.prefix}`);
    this.subnet = options.natSubnet ?? '10.87.0';
    if (!/^\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(this.subnet))
      throw new Error(`NAT subnet must be three octets (a /24): ${this.subnet}`);
    const seeded = seededNetworks(this.prefix, this.subnet);
    this.bridge = seeded[0]?.bridge ?? '';
    this.tunnel = `${this.prefix}wg0`;
    this.definitions = options.definitions ?? (async () => seeded);
    this.dir = options.stateDir ?? HOST_NETWORKS_DIR;
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

  /** The dnsmasq lease file of the seeded NAT network. */
  get leaseFile(): string {
    return bridgeFiles(this.dir, this.bridge).leases;
  }

  /** The TAP device of card `index` of domain `id` (at most 15 characters). */
  tapName(id: string, index: number): string {
    const hash = createHash('sha256').update(id).digest('hex').slice(0, 7);
    return `${this.prefix}t${hash}${index}`;
  }

  /** The networks defined now, by id. */
  private async defined(): Promise<Map<string, NetworkDef>> {
    return new Map((await this.definitions()).map((def) => [def.id, def]));
  }

  /**
   * The spec with the host side of its cards; no card in mode `none`. On bridges the TAP devices
   * are named, not made: QEMU makes each as it starts (and they go when it exits), and `plug`
   * puts them on their bridges meanwhile, so the start does not wait for `ip` before QEMU.
   */
  async attach(spec: DomainSpec): Promise<DomainSpec> {
    const nics = spec.network ?? [];
    if (nics.length === 0 || this.mode === 'none') return { ...spec, network: [] };
    const defs = await this.defined();
    const nets = nics.map((nic) => {
      const def = defs.get(nic.network);
      if (!def) throw new HypervisorError('invalid_spec', `unknown network ${nic.network}`);
      return def;
    });
    if (this.mode === 'user')
      return { ...spec, network: nics.map((nic) => ({ ...nic, backend: { kind: 'user' } })) };
    for (const def of new Set(nets)) await this.ensure(def);
    const cards: Card[] = [];
    try {
      for (const [i, nic] of nics.entries()) {
        const def = nets[i] as NetworkDef;
        const tap = this.tapName(spec.id, i);
        const leases = bridgeFiles(this.dir, def.bridge).leases;
        const stale = (await readLeases(leases)).get(nic.mac)?.line;
        cards.push({ network: def.id, mac: nic.mac, tap, leases, staleLease: stale });
      }
      // a TAP device left by a start that crashed goes first
      await deleteTaps(cards);
    } catch (error) {
      throw new HypervisorError('start_failed', `cannot plug the network card: ${String(error)}`, {
        cause: error,
      });
    }
    this.pending.set(spec.id, { cards, bridges: nets.map((def) => def.bridge) });
    return {
      ...spec,
      network: nics.map((nic, i) => ({
        ...nic,
        backend: { kind: 'tap', ifname: cards[i]?.tap ?? '' },
      })),
    };
  }

  /**
   * Puts the TAP devices of an attached spec on their bridges as soon as its QEMU has made them
   * (called as QEMU is spawned, while it starts); then follows their addresses. Rejects when the
   * devices do not appear before `signal` aborts or `timeoutMs` passes, or `ip` refuses.
   */
  async plug(id: string, signal: AbortSignal, timeoutMs = 30_000): Promise<void> {
    const attached = this.pending.get(id);
    if (!attached) return;
    const deadline = Date.now() + timeoutMs;
    try {
      for (const card of attached.cards) {
        while (!existsSync(`/sys/class/net/${card.tap}`)) {
          if (signal.aborted) throw new Error('the start ended before its network card appeared');
          if (Date.now() > deadline) throw new Error(`${card.tap} did not appear`);
          await sleep(TAP_POLL_MS);
        }
      }
      await ipBatch(
        attached.cards.map(
          (card, i) => `link set dev ${card.tap} master ${attached.bridges[i] ?? ''} up`,
        ),
      );
    } catch (error) {
      throw new HypervisorError('start_failed', `cannot plug the network card: ${String(error)}`, {
        cause: error,
      });
    }
    if (this.pending.get(id) !== attached) return;
    this.pending.delete(id);
    this.follow(id, attached.cards);
  }

  private follow(id: string, cards: Card[]): void {
    this.cards.set(id, cards);
    this.reported.set(id, '');
    this.since.set(id, Date.now());
    this.timer ??= setInterval(() => void this.poll(), this.pollMs).unref();
  }

  /**
   * Follow the addresses of a domain this process did not start (adopted after a restart): its
   * cards (network and MAC, in order) whose TAP device is still there.
   */
  async track(id: string, nics: readonly { network: string; mac: string }[]): Promise<void> {
    if (this.cards.has(id) || !this.serves(id)) return;
    const defs = await this.defined();
    const cards = nics.flatMap((nic, i) => {
      const def = defs.get(nic.network);
      const tap = this.tapName(id, i);
      if (!def || !existsSync(`/sys/class/net/${tap}`)) return [];
      const leases = bridgeFiles(this.dir, def.bridge).leases;
      return [{ network: def.id, mac: nic.mac, tap, leases, staleLease: undefined }];
    });
    if (cards.length > 0) this.follow(id, cards);
  }

  /** The domain ended: its TAP devices go and its addresses with them. */
  async release(id: string): Promise<void> {
    const attached = this.pending.get(id);
    this.pending.delete(id);
    if (attached) await deleteTaps(attached.cards);
    const cards = this.cards.get(id);
    if (!cards) return;
    this.cards.delete(id);
    await deleteTaps(cards);
    if (this.reported.get(id)) this.emit('address', id, null, {});
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

  /** The last first-card address reported for a domain. */
  addressOf(id: string): string | null {
    const reported = this.reported.get(id);
    return reported ? (JSON.parse(reported) as { ip: string | null }).ip : null;
  }

  private async poll(): Promise<void> {
    if (this.cards.size === 0) return;
    const files = new Set([...this.cards.values()].flatMap((cards) => cards.map((c) => c.leases)));
    const leases = new Map(
      await Promise.all([...files].map(async (f) => [f, await readLeases(f)] as const)),
    );
    for (const [id, cards] of this.cards) {
      const addresses: Record<string, string> = {};
      for (const card of cards) {
        const lease = leases.get(card.leases)?.get(card.mac);
        if (lease && lease.line !== card.staleLease) addresses[card.network] ??= lease.ip;
      }
      const first = cards[0];
      const ip = first ? (addresses[first.network] ?? null) : null;
      const now = Object.keys(addresses).length > 0 ? JSON.stringify({ ip, addresses }) : '';
      if (this.reported.get(id) !== now && this.cards.has(id)) {
        this.reported.set(id, now);
        this.emit('address', id, ip, addresses);
      }
    }
  }

  /** Makes a network's bridge once (again after a failure, or when it was defined anew). */
  private ensure(def: NetworkDef): Promise<void> {
    const key = JSON.stringify(def);
    let ready = this.ready.get(key);
    if (!ready) {
      ready = setUpBridge(this.dir, def, this.tunnel, this.log).catch((error: unknown) => {
        this.ready.delete(key);
        throw new HypervisorError(
          'start_failed',
          `cannot set up the network ${def.id}: ${String(error)}`,
          { cause: error },
        );
      });
      this.ready.set(key, ready);
    }
    return ready;
  }

  /** Whether network changes reach the host; says once when they do not (not root). */
  private changesHost(): boolean {
    if (this.mode === 'bridge') return true;
    if (!this.saidUnchanged)
      this.log(
        `desktop networks: mode ${this.mode}: network changes make or remove no bridge on this host`,
      );
    this.saidUnchanged = true;
    return false;
  }

  /** The last of the admin's changes to reach this host (see `inTurn`). */
  private changes: Promise<void> = Promise.resolve();

  /**
   * An admin's changes reach this host one at a time, in the order they came (from this node's
   * routes or another node's events): a delete that comes while an edit still makes the bridge
   * anew waits for the edit's dnsmasq to run, then stops it, instead of leaving it behind.
   */
  private inTurn(change: () => Promise<void>): Promise<void> {
    const done = this.changes.then(change, change);
    this.changes = done.catch(() => undefined);
    return done;
  }

  /**
   * An admin created a network, or changed it from `before`: its bridge is made now, anew when its
   * kind, bridge or subnet changed (a change of its description or allowed lists touches nothing).
   */
  define(def: NetworkDef, before?: NetworkDef): Promise<void> {
    if (!this.changesHost()) return Promise.resolve();
    return this.inTurn(async () => {
      if (before && JSON.stringify(before) !== JSON.stringify(def)) await this.tearDown(before);
      await this.ensure(def);
    });
  }

  /** An admin deleted a network: its bridge, dnsmasq and rules go. */
  remove(def: NetworkDef): Promise<void> {
    if (!this.changesHost()) return Promise.resolve();
    return this.inTurn(() => this.tearDown(def));
  }

  /** Takes a network off this host, once a start that is still making it has done so. */
  private async tearDown(def: NetworkDef): Promise<void> {
    const key = JSON.stringify(def);
    await this.ready.get(key)?.catch(() => undefined);
    this.ready.delete(key);
    await tearDownBridge(this.dir, def, this.tunnel, this.log);
  }

  /** Whether a network's bridge and its dnsmasq run on this host (tests, diagnostics). */
  isUp(def: NetworkDef): boolean {
    return (
      existsSync(`/sys/class/net/${def.bridge}`) && dnsmasqPid(this.dir, def.bridge) !== undefined
    );
  }

  /** Stops the lease poll (the bridges, dnsmasq and TAPs of running domains stay). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Removes everything: TAPs, then each network's dnsmasq, rules and bridge (tests, uninstall). */
  async teardown(): Promise<void> {
    this.close();
    for (const id of [...this.cards.keys()]) await this.release(id);
    const links = await fsp.readdir('/sys/class/net').catch(() => [] as string[]);
    for (const link of links.filter((name) => name.startsWith(`${this.prefix}t`)))
      await quiet(run('ip', ['link', 'del', link]));
    for (const def of await this.definitions())
      if (this.mode === 'bridge' || existsSync(`/sys/class/net/${def.bridge}`))
        await tearDownBridge(this.dir, def, this.tunnel, this.log);
    // The NAT table of versions that had one network.
    if (onPath('nft')) await quiet(run('nft', ['delete', 'table', 'ip', `${this.prefix}_nat`]));
    this.ready.clear();
  }
}
