/**
 * The users' VPN endpoint: when the desktops' networks are bridged (the server runs as root), this
 * node runs the WireGuard interface `<prefix>wg0` of the users' network (the kernel module when
 * present, `wireguard-go` otherwise) with the server's key and the port the settings name (what
 * the downloaded files name as the endpoint), the users' network's first host as its address, and
 * one peer per active user with keys and an address in the network. The nftables table
 * `<prefix>_vpn` lets each tunnel reach the bridge of the VPN network (the networks table's vpn
 * network) and there only the desktops its user may reach (their own, and the desktops of the
 * deployments they own or co-own) while those desktops have an address on it.
 *
 * Peers and pairs are read again from the database and applied whole (`wg syncconf`, one nft
 * transaction) shortly after any change that may move them (a user's keys, address, account, a
 * desktop, the settings, a missed notification) and every SYNC_EVERY_MS besides. One portal of a
 * host runs it (`<state dir>/<interface>.owner` holds its pid); without root, without networks or
 * without the WireGuard tools it logs why once and stays off. The interface and the table go when
 * the server closes.
 */
import { existsSync, promises as fsp, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import {
  gatewayOf,
  isUserAddressIn,
  parseIpv4Network,
  type Ipv4Network,
} from '../../platform/lib/wireguard.ts';
import { HOST_NETWORKS_DIR } from '../../platform/hypervisor/host-networks.ts';
import {
  onSystemPath,
  WireguardInterface,
  type WireguardPeer,
} from '../../platform/hypervisor/wireguard-interface.ts';
import { VpnFirewall, type ReachPair } from '../../platform/hypervisor/vpn-firewall.ts';
import { createVpnService } from './vpn-service.ts';
import { vpnNetwork } from '../desktops/index.ts';

/** A full sync besides the notified ones (what a change without a notification waits at most). */
const SYNC_EVERY_MS = 30_000;
/** Changes that come together are applied once, this long after the first. */
const SYNC_DELAY_MS = 100;

export interface VpnEndpoint {
  /** The interface's name (`<prefix>wg0`). */
  readonly interfaceName: string;
  /** The nftables table that routes the tunnels. */
  readonly firewall: VpnFirewall;
  /** Whether the endpoint runs on this node. */
  readonly running: boolean;
  /** Applies the database's peers and pairs now. */
  sync(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    vpnEndpoint: VpnEndpoint;
  }
}

/** The pid in an owner file when that process still runs, else undefined. */
function livingOwner(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && existsSync(`/proc/${pid}`) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Why the endpoint cannot run here, or undefined when it can. */
function whyOff(mode: string): string | undefined {
  if (process.getuid?.() !== 0) return 'the server does not run as root';
  if (mode !== 'bridge') return `the desktops' networks are not bridged (mode ${mode})`;
  if (!onSystemPath('wg')) return 'wg (wireguard-tools) is not installed';
  if (!onSystemPath('nft')) return 'nft (nftables) is not installed';
  return undefined;
}

const plugin: FastifyPluginAsync = async (app) => {
  const { query } = app.database;
  const networks = app.hostNetworks;
  const vpn = createVpnService(app);
  const iface = new WireguardInterface(`${networks.prefix}wg0`, (line) => app.log.warn(line));
  const firewall = new VpnFirewall(networks.prefix, iface.name, networks.bridge);
  const ownerFile = path.join(HOST_NETWORKS_DIR, `${iface.name}.owner`);
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let every: NodeJS.Timeout | undefined;
  let syncing: Promise<void> | undefined;
  let again = false;
  let lastError = '';
  /** What was applied last (skipped when unchanged, but for the periodic sync). */
  let applied: string | undefined;
  let forceNext = false;

  const peersOf = async (net: Ipv4Network): Promise<WireguardPeer[]> => {
    const rows = await query<{ wg_public_key: string; wg_address: string }>(
      `SELECT wg_public_key, wg_address FROM users
       WHERE active AND wg_public_key IS NOT NULL AND wg_address IS NOT NULL
       ORDER BY wg_address`,
    );
    return rows
      .filter((r) => isUserAddressIn(r.wg_address, net))
      .map((r) => ({ publicKey: r.wg_public_key, address: r.wg_address }));
  };

  /**
   * (user's tunnel address, desktop address) for every desktop with an address on the VPN network
   * (`network`) and its users.
   */
  const pairsOf = async (network: string): Promise<ReachPair[]> =>
    query<ReachPair>(
      `SELECT DISTINCT u.wg_address AS "user", d.runtime->'addresses'->>$1 AS desktop
       FROM desktops d
       LEFT JOIN deployments p ON p.id = d.tag
       JOIN users u ON u.id = d.user_id
         OR u.id = p.user_id
         OR p.co_owners @> jsonb_build_array(u.id)
       WHERE d.runtime->'addresses'->>$1 IS NOT NULL
         AND u.active AND u.wg_address IS NOT NULL AND u.wg_public_key IS NOT NULL`,
      [network],
    );

  const apply = async (force: boolean): Promise<void> => {
    const { vpn: settings } = await app.settings.all();
    const net = parseIpv4Network(settings.users_net);
    if (!net) throw new Error(`the VPN users network ${settings.users_net} is not IPv4`);
    const keys = await vpn.serverKeys();
    const peers = await peersOf(net);
    const state = {
      privateKey: keys.privateKey,
      listenPort: settings.port,
      address: `${gatewayOf(net)}/${net.prefix}`,
      mtu: settings.mtu,
      peers,
    };
    const tunnels = new Set(peers.map((p) => p.address));
    const network = await vpnNetwork(app.db);
    if (network) firewall.useBridge(network.bridge);
    const pairs = network ? (await pairsOf(network.id)).filter((p) => tunnels.has(p.user)) : [];
    const wanted = JSON.stringify([state, pairs, network]);
    if (!force && wanted === applied) return;
    applied = undefined;
    await iface.apply(state);
    await firewall.apply(pairs);
    applied = wanted;
  };

  const sync = async (): Promise<void> => {
    if (!running) return;
    if (syncing) {
      again = true;
      return syncing;
    }
    syncing = (async () => {
      do {
        again = false;
        const force = forceNext;
        forceNext = false;
        try {
          // Made again when it is gone (wireguard-go ended, or the link was deleted).
          if (!iface.kind || !existsSync(`/sys/class/net/${iface.name}`)) {
            applied = undefined;
            await iface.up();
          }
          await apply(force);
          lastError = '';
        } catch (err) {
          // A failure is logged once until the endpoint works again.
          if (String(err) !== lastError) app.log.warn({ err }, 'VPN endpoint: sync failed');
          lastError = String(err);
        }
      } while (again && running);
    })().finally(() => {
      syncing = undefined;
    });
    return syncing;
  };

  const soon = () => {
    if (!running || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void sync();
    }, SYNC_DELAY_MS);
    timer.unref();
  };
  for (const kind of [
    'vpn.changed',
    'user.changed',
    'desktop.changed',
    'settings.changed',
    'resync',
  ] as const)
    app.cluster.on(kind, soon);

  app.decorate('vpnEndpoint', {
    interfaceName: iface.name,
    firewall,
    get running() {
      return running;
    },
    sync,
  } satisfies VpnEndpoint);

  app.addHook('onReady', async () => {
    const why = whyOff(networks.mode);
    if (why) {
      app.log.info(`VPN endpoint: off (${why}): the downloaded VPN files connect to nothing`);
      return;
    }
    const owner = livingOwner(ownerFile);
    if (owner !== undefined && owner !== process.pid) {
      app.log.info(`VPN endpoint: off here: process ${owner} runs ${iface.name} on this host`);
      return;
    }
    await fsp.mkdir(HOST_NETWORKS_DIR, { recursive: true });
    await fsp.writeFile(ownerFile, `${process.pid}\n`);
    await fsp.writeFile('/proc/sys/net/ipv4/ip_forward', '1\n');
    running = true;
    await sync();
    if (iface.kind) app.log.info(`VPN endpoint: ${iface.name} (${iface.kind}) is up`);
    every = setInterval(() => {
      forceNext = true;
      soon();
    }, SYNC_EVERY_MS).unref();
  });

  app.addHook('onClose', async () => {
    if (!running) return;
    running = false;
    clearTimeout(timer);
    clearInterval(every);
    await syncing;
    await iface.down();
    await firewall.remove().catch((err: unknown) => app.log.warn({ err }, 'VPN endpoint'));
    if (livingOwner(ownerFile) === process.pid) await fsp.rm(ownerFile, { force: true });
  });
};

export default globalPlugin(plugin, 'vpn-endpoint');
