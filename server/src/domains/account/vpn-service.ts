/**
 * The users' WireGuard VPN: each user gets a key pair and an address of the users' network the
 * first time the configuration is asked for; resetting makes new keys and keeps the address. The
 * server's own key pair is made once and kept in the settings table (key `vpn_server_keys`).
 *
 * Addresses are handed out under one transaction lock, lowest free first, so parallel first
 * downloads (on any node) never get the same one; the unique constraint on the column backs it.
 * An address outside the network the settings name now (the network changed) is replaced.
 *
 * The client file routes the server's tunnel address (the users' network's first host) and the
 * desktops' networks into the tunnel, and names the endpoint the server's VPN endpoint listens on
 * (`vpn-endpoint.ts`: the same key and port).
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../platform/http/api-error.ts';
import { queryOn } from '../../platform/db/query.ts';
import { cidrOf } from '../../platform/hypervisor/network-defs.ts';
import { vpnNetwork } from '../desktops/index.ts';
import {
  endpointOf,
  gatewayOf,
  ipv4ToNumber,
  isUserAddressIn,
  isWireguardKey,
  newWireguardKeyPair,
  numberToIpv4,
  parseIpv4Network,
  userAddressRange,
  wireguardClientConfig,
  type Ipv4Network,
  type WireguardKeyPair,
} from '../../platform/lib/wireguard.ts';

/** The settings row holding the server's key pair. */
export const VPN_SERVER_KEYS_SETTING = 'vpn_server_keys';

/** Lock space and key of the address allocation (apart from the quota locks' spaces). */
const ADDRESS_LOCK_SPACE = 10;
const ADDRESS_LOCK_KEY = 'vpn_users_addresses';

export interface UserVpn {
  address: string;
  privateKey: string;
  publicKey: string;
}

interface VpnRow {
  wg_address: string | null;
  wg_private_key: string | null;
  wg_public_key: string | null;
}

export interface VpnService {
  /** The user's address and keys, made now when missing (or when the address left the network). */
  ensure(userId: string): Promise<UserVpn>;
  /** New keys for the user (the address stays). */
  reset(userId: string): Promise<void>;
  /** The server's key pair, made on first use. */
  serverKeys(): Promise<WireguardKeyPair>;
  /** The client configuration file of the user; `requestHost` is the last fallback endpoint host. */
  clientConfig(userId: string, requestHost: string | undefined): Promise<string>;
}

const HOST_RE = /^[A-Za-z0-9.-]+$|^\[?[0-9A-Fa-f:.]+\]?$/;

/** The host a URL or Host header names, or undefined when there is none worth writing. */
function hostOf(value: string | undefined): string | undefined {
  if (!value) return undefined;
  try {
    const host = new URL(value.includes('://') ? value : `http://${value}`).hostname;
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    return bare && HOST_RE.test(bare) ? bare : undefined;
  } catch {
    return undefined;
  }
}

export function createVpnService(app: FastifyInstance): VpnService {
  const { query } = app.database;
  let serverKeys: WireguardKeyPair | undefined;

  const networkOf = async (): Promise<Ipv4Network> => {
    const { vpn } = await app.settings.all();
    const net = parseIpv4Network(vpn.users_net);
    if (!net)
      throw new ApiError(
        'internal_server',
        `The VPN users network ${vpn.users_net} is not an IPv4 network`,
        'unable_to_process_vpnfile',
      );
    return net;
  };

  const rowOf = async (userId: string): Promise<VpnRow> => {
    const rows = await query<VpnRow>(
      'SELECT wg_address, wg_private_key, wg_public_key FROM users WHERE id = $1',
      [userId],
    );
    const row = rows[0];
    if (!row) throw new ApiError('not_found', 'User not found', 'vpn_data_not_found');
    return row;
  };

  /** Gives the user the lowest free address of `net` unless another request already did. */
  const allocate = async (userId: string, net: Ipv4Network): Promise<void> => {
    const range = userAddressRange(net);
    const full = () =>
      new ApiError('conflict', 'The VPN users network has no free address', 'vpn_network_full');
    if (!range) throw full();
    await app.db.transaction(async (on) => {
      const tx = queryOn(on);
      await tx('SELECT pg_advisory_xact_lock($1::int, hashtext($2))', [
        ADDRESS_LOCK_SPACE,
        ADDRESS_LOCK_KEY,
      ]);
      const mine = await tx<{ wg_address: string | null }>(
        'SELECT wg_address FROM users WHERE id = $1',
        [userId],
      );
      const current = mine[0]?.wg_address ?? null;
      if (current !== null && isUserAddressIn(current, net)) return;
      const taken = new Set(
        (
          await tx<{ wg_address: string }>(
            'SELECT wg_address FROM users WHERE wg_address IS NOT NULL',
          )
        ).map((r) => ipv4ToNumber(r.wg_address)),
      );
      let candidate = range.first;
      while (candidate <= range.last && taken.has(candidate)) candidate++;
      if (candidate > range.last) throw full();
      await app.users.setVpnAddress(userId, numberToIpv4(candidate), on);
    });
  };

  const service: VpnService = {
    async ensure(userId) {
      let row = await rowOf(userId);
      const net = await networkOf();
      if (row.wg_address === null || !isUserAddressIn(row.wg_address, net)) {
        await allocate(userId, net);
        row = await rowOf(userId);
      }
      if (row.wg_private_key === null || row.wg_public_key === null) {
        const keys = newWireguardKeyPair();
        // Only the first of parallel requests writes its keys; the others read them back.
        await app.users.setVpnKeys(userId, keys, true);
        row = await rowOf(userId);
      }
      if (row.wg_address === null || row.wg_private_key === null || row.wg_public_key === null)
        throw new ApiError('precondition_required', 'No WireGuard keys', 'no_wireguard_keys');
      return {
        address: row.wg_address,
        privateKey: row.wg_private_key,
        publicKey: row.wg_public_key,
      };
    },

    async reset(userId) {
      const keys = newWireguardKeyPair();
      await app.users.setVpnKeys(userId, keys);
    },

    async serverKeys() {
      if (serverKeys) return serverKeys;
      const made = newWireguardKeyPair();
      await query(
        `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (key) DO NOTHING`,
        [
          VPN_SERVER_KEYS_SETTING,
          JSON.stringify({ private_key: made.privateKey, public_key: made.publicKey }),
        ],
      );
      const rows = await query<{ value: { private_key?: unknown; public_key?: unknown } }>(
        'SELECT value FROM settings WHERE key = $1',
        [VPN_SERVER_KEYS_SETTING],
      );
      const stored = rows[0]?.value;
      const privateKey = stored?.private_key;
      const publicKey = stored?.public_key;
      if (
        typeof privateKey !== 'string' ||
        typeof publicKey !== 'string' ||
        !isWireguardKey(privateKey) ||
        !isWireguardKey(publicKey)
      )
        throw new ApiError(
          'precondition_required',
          'The VPN server keys are missing or damaged',
          'no_wireguard_keys',
        );
      serverKeys = { privateKey, publicKey };
      return serverKeys;
    },

    async clientConfig(userId, requestHost) {
      const mine = await service.ensure(userId);
      const server = await service.serverKeys();
      const { vpn } = await app.settings.all();
      const host =
        hostOf(vpn.endpoint_host ?? undefined) ??
        hostOf(app.config.publicUrl) ??
        hostOf(requestHost) ??
        'localhost';
      return wireguardClientConfig({
        address: mine.address,
        privateKey: mine.privateKey,
        mtu: vpn.mtu,
        serverPublicKey: server.publicKey,
        endpoint: endpointOf(host, vpn.port),
        allowedIps: [
          `${gatewayOf(await networkOf())}/32`,
          vpn.guests_nets ??
            cidrOf((await vpnNetwork(app.db))?.subnet ?? app.config.network.natSubnet),
        ].join(','),
      });
    },
  };
  return service;
}
