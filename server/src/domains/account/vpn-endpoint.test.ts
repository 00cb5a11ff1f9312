/**
 * The users' VPN endpoint as root (README, "The users' VPN": it needs root): the server runs the
 * WireGuard interface (wireguard-go here: the kernel has no module); a WireGuard peer in its own
 * network namespace, configured only from the file the API hands out, reaches the server's tunnel
 * address and the desktop of its user, not another user's; a key reset, a disable and a delete
 * take the peer out within seconds; closing the server removes the interface and its nftables
 * table. The stand-in desktops are network namespaces with a veth on the VPN network's bridge and
 * an address of its range, recorded as running desktops (the driver reports them running). Every
 * name carries a prefix of this process; everything is removed at the end, failed or not.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deployments } from '../../platform/db/schema.ts';
import { HostNetworks } from '../../platform/hypervisor/host-networks.ts';
import { seededNetwork, VPN_NETWORK } from '../../platform/hypervisor/network-defs.ts';
import { defaultSettings } from '../../platform/repository/settings-repository.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, addUser, loginTo, userRow } from '../../../test/support/fixtures.ts';
import { until } from '../../../test/support/wait.ts';
import {
  freeUdpPort,
  inNs,
  quiet,
  sh,
  WireguardPeer,
} from '../../../../tests/support/wireguard-peer.ts';

const root = process.getuid?.() === 0;
const pid = process.pid;
const prefix = `w${(pid % 46_656).toString(36)}`;
const network = {
  mode: 'bridge' as const,
  prefix,
  natSubnet: `10.${150 + (pid % 50)}.${pid % 250}`,
};
const usersNet = `10.${100 + (pid % 50)}.0.0/16`;
/** The VPN network seeded from this prefix and NAT subnet: the bridge the tunnels reach. */
const vpnNet = seededNetwork(prefix, network.natSubnet, 'vpn');
/** The stand-in desktops: namespace, host end of its veth, address. */
const standIns = [1, 2].map((n) => ({
  ns: `${prefix}d${n}`,
  veth: `${prefix}v${n}`,
  ip: `${vpnNet.subnet}.${50 + n}`,
}));

describe.skipIf(!root)('the users’ VPN endpoint (root, wireguard-go, nftables)', () => {
  let t: TestApp;
  let client: WireguardPeer;
  let token: string;
  const running = new Set<string>();

  const download = async (tk: string) => {
    const res = await injectWithToken(t.app, tk, { method: 'GET', url: '/api/v3/user/vpn/config' });
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ content: string }>().content;
  };
  const peers = () => sh('wg', 'show', `${prefix}wg0`, 'peers');

  /** A desktop of `owner` recorded as running at `ip` (its write notifies as a start does). */
  async function runningDesktop(owner: string, ip: string, tag?: string) {
    const id = await addDesktop(t.app, await userRow(t.app, owner), `vpn ${ip}`, {
      ...(tag ? { tag } : {}),
    });
    running.add(id);
    await t.app.desktops.update(id, {
      state: 'started',
      runtime: {
        pid: 1,
        vncPort: 5900,
        node: t.config.nodeName,
        ip,
        addresses: { [VPN_NETWORK]: ip },
      },
    });
    return id;
  }

  beforeAll(async () => {
    // The client: its own namespace, reaching the host through a veth pair, and its WireGuard.
    client = await WireguardPeer.start({ prefix, net: `172.31.${pid % 250}` });
    t = await buildTestApp(await createTestDatabase(), { network });
    // The stand-ins' "VMs" run as far as the reconciler asks.
    const status = t.app.hypervisor.status.bind(t.app.hypervisor);
    vi.spyOn(t.app.hypervisor, 'status').mockImplementation(async (id) =>
      running.has(id) ? 'running' : status(id),
    );
    const port = await freeUdpPort();
    await t.app.settings.set('vpn', {
      ...defaultSettings.vpn,
      endpoint_host: client.hostAddress,
      port,
      users_net: usersNet,
    });

    // The VPN network's bridge (as the first start of a desktop on it makes it) and the two
    // stand-ins on it.
    const bridge = vpnNet.bridge;
    await sh('ip', 'link', 'add', bridge, 'type', 'bridge');
    await sh('ip', 'address', 'add', `${vpnNet.subnet}.1/24`, 'dev', bridge);
    await sh('ip', 'link', 'set', bridge, 'up');
    for (const s of standIns) {
      await sh('ip', 'netns', 'add', s.ns);
      await sh('ip', 'link', 'add', s.veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', s.ns);
      await sh('ip', 'link', 'set', s.veth, 'master', bridge, 'up');
      await inNs(s.ns, 'ip', 'address', 'add', `${s.ip}/24`, 'dev', 'eth0');
      await inNs(s.ns, 'ip', 'link', 'set', 'eth0', 'up');
      await inNs(s.ns, 'ip', 'route', 'add', 'default', 'via', `${vpnNet.subnet}.1`);
    }

    token = await login(t.app, 'user');
  });

  afterAll(async () => {
    // Whatever failed: the server's interface and table, then every namespace, link and process.
    await t?.close();
    await client?.close();
    for (const ns of standIns.map((s) => s.ns)) await quiet(sh('ip', 'netns', 'del', ns));
    for (const name of [...standIns.map((s) => s.veth), `${prefix}wg0`])
      await quiet(sh('ip', 'link', 'del', name));
    await quiet(sh('nft', 'delete', 'table', 'ip', `${prefix}_vpn`));
    await new HostNetworks(network).teardown();
  });

  it('lets a peer set up from the downloaded file reach the server and its own desktop only', async () => {
    expect(t.app.vpnEndpoint.running).toBe(true);
    const [mine, theirs] = standIns as [(typeof standIns)[0], (typeof standIns)[0]];
    await runningDesktop('user', mine.ip);
    await runningDesktop('advanced', theirs.ip);
    // The new user's keys reach the endpoint within seconds (before the client dials: a
    // handshake the endpoint refuses is tried again only 5 s later).
    const file = await download(token);
    const key = (await userRow(t.app, 'user')).wgPublicKey ?? '';
    await until(peers, (list) => list.includes(key), 5000);
    const conf = await client.useFile(file);
    const gateway = usersNet.replace('0.0/16', '0.1');
    expect(conf.Peer.AllowedIPs).toBe(`${gateway}/32,${vpnNet.subnet}.0/24`);
    expect(conf.Peer.Endpoint).toBe(
      `${client.hostAddress}:${(await t.app.settings.all()).vpn.port}`,
    );

    // The server answers in the tunnel.
    await until(
      () => client.pings(gateway),
      (ok) => ok,
      10_000,
    );
    await until(
      () => t.app.vpnEndpoint.firewall.pairs(),
      (pairs) => pairs.some((p) => p.desktop === mine.ip),
      5000,
    );
    await until(
      () => client.pings(mine.ip),
      (ok) => ok,
      5000,
    );
    // The host reaches the other user's stand-in: only the tunnel's rule keeps this user out.
    await sh('busybox', 'ping', '-c1', '-W1', theirs.ip);
    expect(await client.pings(theirs.ip)).toBe(false);

    // A deployment's desktop is reachable by its owner and co-owners.
    const deploymentId = randomUUID();
    await download(await login(t.app, 'advanced'));
    const advanced = await userRow(t.app, 'advanced');
    await t.app.db.insert(deployments).values({
      id: deploymentId,
      name: 'vpn deployment',
      userId: advanced.id,
      categoryId: advanced.categoryId,
      groupId: advanced.groupId,
      coOwners: [(await userRow(t.app, 'user')).id],
    });
    const inDeployment = `${vpnNet.subnet}.60`;
    await runningDesktop('manager', inDeployment, deploymentId);
    const tunnels = [(await userRow(t.app, 'user')).wgAddress, advanced.wgAddress];
    const reach = await until(
      () => t.app.vpnEndpoint.firewall.pairs(),
      (pairs) => pairs.filter((p) => p.desktop === inDeployment).length === 2,
      5000,
    );
    expect(
      reach
        .filter((p) => p.desktop === inDeployment)
        .map((p) => p.user)
        .sort(),
    ).toEqual([...tunnels].sort());
  });

  it('drops a peer within seconds of a key reset, a disable and a delete', async () => {
    const gateway = usersNet.replace('0.0/16', '0.1');
    const before = (await userRow(t.app, 'user')).wgPublicKey ?? '';
    expect(await peers()).toContain(before);
    const reset = await injectWithToken(t.app, token, {
      method: 'PUT',
      url: '/api/v3/user/reset-vpn',
    });
    expect(reset.statusCode).toBe(200);
    await until(peers, (list) => !list.includes(before), 5000);
    // The old file no longer gets through; the new one does.
    expect(await client.pings(gateway)).toBe(false);
    const renewedFile = await download(token);
    const renewed = (await userRow(t.app, 'user')).wgPublicKey ?? '';
    await until(peers, (list) => list.includes(renewed), 5000);
    await client.useFile(renewedFile);
    await until(
      () => client.pings(gateway),
      (ok) => ok,
      5000,
    );

    const advanced = (await userRow(t.app, 'advanced')).wgPublicKey ?? '';
    expect(await peers()).toContain(advanced);
    await t.app.users.disable((await userRow(t.app, 'advanced')).id);
    await until(peers, (list) => !list.includes(advanced), 5000);

    const gone = await addUser(t.app, {
      username: 'vpn-gone',
      role: 'user',
      categoryId: 'default',
      groupId: 'default-users',
    });
    await download(await loginTo(t.app, 'vpn-gone', 'default'));
    const goneKey = (await userRow(t.app, 'vpn-gone')).wgPublicKey ?? '';
    await until(peers, (list) => list.includes(goneKey), 5000);
    await t.app.users.remove(gone.id);
    await until(peers, (list) => !list.includes(goneKey), 5000);
  });

  it('removes its interface and nftables table when the server closes', async () => {
    await t.app.close();
    expect(existsSync(`/sys/class/net/${prefix}wg0`)).toBe(false);
    expect(await quiet(sh('nft', 'list', 'table', 'ip', `${prefix}_vpn`))).toBe(false);
  });
});
