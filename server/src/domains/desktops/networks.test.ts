/**
 * Desktop networks as root, end to end. As data: the three seeded networks, a network an admin
 * creates through another portal node (one that changes no host) gets its bridge and dnsmasq on
 * this node's host, a user may not give a desktop a card on a network not open to them (403
 * `interface_not_allowed`), an edit of its subnet remakes the bridge, a delete removes it. On the host: two Tiny Linux desktops (real QEMU, TCG), one on the NAT network
 * and one on the private (isolated) network, get a TAP device on their network's bridge and an
 * address from its dnsmasq; the address shows in the record, the host fetches each guest's page
 * there, and the guest's own ping (its `/cgi-bin/reach`) reaches an address beyond the host (a
 * network namespace behind a veth pair) from the NAT network only. The NAT guest's address is
 * followed again after a server restart, and goes with its TAP when the desktop stops. The
 * bridge, TAP and nftables names carry a prefix of this process, and the subnets are this file's
 * own, so parallel test files cannot clash; everything is removed at the end, failed or not.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.ts';
import { desktops } from '../../platform/db/schema.ts';
import { HostNetworks } from '../../platform/hypervisor/host-networks.ts';
import { seededNetwork } from '../../platform/hypervisor/network-defs.ts';
import { macFor } from '../../platform/hypervisor/qemu-network.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import { TINY_LINUX_BANNER } from '../../seed/tiny-linux.ts';
import { TINY_LINUX_TEMPLATE_ID } from '../../seed/index.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const execFileAsync = promisify(execFile);
const pid = process.pid;
const network = {
  mode: 'bridge' as const,
  prefix: `n${(pid % 46_656).toString(36)}`,
  natSubnet: `10.${200 + (pid % 50)}.${pid % 250}`,
};
const nat = seededNetwork(network.prefix, network.natSubnet, 'nat');
const isolated = seededNetwork(network.prefix, network.natSubnet, 'isolated');
/** A /24 of this file `step` networks after the NAT subnet. */
const subnetAfter = (step: number) =>
  network.natSubnet.replace(/\.(\d+)$/, (_, c: string) => `.${(Number(c) + step) % 256}`);
/** The network an admin creates, edits and deletes. */
const lab = { name: 'lab', bridge: `${network.prefix}lab0`, subnet: subnetAfter(3) };
/** A network changed and deleted in one go, as two quick events from another node. */
const raced = {
  id: 'raced',
  kind: 'isolated' as const,
  bridge: `${network.prefix}race0`,
  subnet: subnetAfter(11),
};
/** Beyond the host: a namespace behind a veth pair, reached only through forwarding. */
const outside = {
  ns: `${network.prefix}o`,
  host: `${network.prefix}oh`,
  peer: `${network.prefix}op`,
  net: `172.30.${pid % 250}`,
};

/** The pids of the dnsmasq processes serving `bridge`. */
function dnsmasqsOn(bridge: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv[0]?.endsWith('dnsmasq') && argv.includes(`--interface=${bridge}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const sh = async (cmd: string, ...args: string[]) =>
  (await execFileAsync(cmd, args, { timeout: 10_000 })).stdout;
const quiet = (p: Promise<unknown>) =>
  p.then(
    () => true,
    () => false,
  );

describe('desktop networks (root, real QEMU, bridges, TAPs, dnsmasq)', () => {
  let t: TestApp;
  /** Another portal node on the same database, whose host networks change nothing. */
  let other: TestApp | undefined;
  let token: string;
  let admin: string;
  /** The desktops' update events, as the sockets get them. */
  const updates: { id: string; ip?: string; state: string }[] = [];

  const call = (
    tk: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    injectWithToken(t.app, tk, { method, url: `/api/v3${url}`, ...(payload ? { payload } : {}) });
  const callOther = (
    tk: string,
    method: 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    injectWithToken(other?.app ?? t.app, tk, {
      method,
      url: `/api/v3${url}`,
      ...(payload ? { payload } : {}),
    });
  /** What the host shows once the other node's change has reached this one. */
  const onHost = <T>(fn: () => Promise<T>, ok: (v: T) => boolean) => untilWithin(10_000)(fn, ok);
  const listed = async (id: string) =>
    (await call(token, 'GET', '/user/desktops'))
      .json<{ id: string; ip?: string; state: string }[]>()
      .find((d) => d.id === id);
  const action = (id: string, a: string) => call(token, 'GET', `/desktop/${a}/${id}`);
  const addressesOf = (bridge: string) =>
    sh('ip', '-4', '-o', 'address', 'show', 'dev', bridge).catch(() => '');

  beforeAll(async () => {
    const url = await createTestDatabase();
    t = await buildTestApp(url, {
      prepareImages: true,
      tinyLinux: true,
      network,
      nodeName: 'net-a',
    });
    other = await buildTestApp(url, { network: { ...network, mode: 'none' }, nodeName: 'net-b' });
    await t.app.engine.reconcile();
    t.app.events.subscribe((event) => {
      if (event.name === 'desktops.updated') updates.push(event.payload);
    });
    token = await login(t.app, 'user');
    admin = await login(t.app, 'admin');
    await sh('ip', 'netns', 'add', outside.ns);
    await sh(
      'ip',
      'link',
      'add',
      outside.host,
      'type',
      'veth',
      'peer',
      'name',
      outside.peer,
      'netns',
      outside.ns,
    );
    await sh('ip', 'address', 'add', `${outside.net}.1/30`, 'dev', outside.host);
    await sh('ip', 'link', 'set', outside.host, 'up');
    await sh(
      'ip',
      'netns',
      'exec',
      outside.ns,
      'ip',
      'address',
      'add',
      `${outside.net}.2/30`,
      'dev',
      outside.peer,
    );
    await sh('ip', 'netns', 'exec', outside.ns, 'ip', 'link', 'set', outside.peer, 'up');
  });
  afterAll(async () => {
    // Whatever failed: the VMs, the outside, then the TAPs, dnsmasq, rules and bridges.
    const built = t as TestApp | undefined;
    if (built)
      for (const d of await built.app.db.select().from(desktops))
        await built.app.hypervisor.stop(d.id).catch(() => undefined);
    killTracked();
    await quiet(sh('ip', 'netns', 'del', outside.ns));
    await quiet(sh('ip', 'link', 'del', outside.host));
    const labDef = {
      id: lab.name,
      kind: 'isolated' as const,
      bridge: lab.bridge,
      subnet: lab.subnet,
    };
    await new HostNetworks({
      ...network,
      definitions: async () => [
        nat,
        isolated,
        labDef,
        raced,
        { ...raced, subnet: subnetAfter(12) },
      ],
    }).teardown();
    await new HostNetworks(network).teardown();
    await other?.close();
    await built?.close();
  });

  it('leaves no bridge and no dnsmasq behind when a delete comes while an edit still remakes the network', async () => {
    const host = t.app.hostNetworks;
    await host.define(raced);
    expect(dnsmasqsOn(raced.bridge)).toHaveLength(1);
    const edited = { ...raced, subnet: subnetAfter(12) };
    // The edit and the delete as another node's two events: the second comes before the first
    // has made the bridge anew.
    await Promise.all([host.define(edited, raced), host.remove(edited)]);
    expect(existsSync(`/sys/class/net/${raced.bridge}`)).toBe(false);
    expect(dnsmasqsOn(raced.bridge)).toEqual([]);
  });

  it('administers the networks as data: a new one gets its bridge, is not open to whom it does not name, a new subnet remakes it (a new allowed list keeps it), a delete removes it', async () => {
    const list = await call(admin, 'GET', '/admin/networks');
    expect(list.statusCode, list.body).toBe(200);
    expect(
      list
        .json<{ id: string; kind: string; bridge: string }[]>()
        .map((n) => [n.id, n.kind, n.bridge]),
    ).toEqual([
      ['default', 'nat', nat.bridge],
      ['private', 'isolated', isolated.bridge],
      ['wireguard', 'vpn', `${network.prefix}vpn0`],
    ]);
    expect((await call(token, 'GET', '/admin/networks')).statusCode).toBe(403);

    const created = await callOther(admin, 'POST', '/admin/networks', {
      name: lab.name,
      kind: 'isolated',
      bridge: lab.bridge,
      subnet: `${lab.subnet}.0/24`,
      allowed_roles: ['admin'],
    });
    expect(created.statusCode, created.body).toBe(200);
    const labDef = {
      id: lab.name,
      kind: 'isolated' as const,
      bridge: lab.bridge,
      subnet: lab.subnet,
    };
    await onHost(
      async () => t.app.hostNetworks.isUp(labDef),
      (up) => up,
    );
    expect(await addressesOf(lab.bridge)).toContain(`${lab.subnet}.1/24`);
    const refused = async (payload: object, code: string) => {
      const res = await call(admin, 'POST', '/admin/networks', payload);
      expect([res.statusCode, res.json<{ description_code: string }>().description_code]).toEqual([
        409,
        code,
      ]);
    };
    await refused(
      {
        name: 'vpn2',
        kind: 'vpn',
        bridge: `${network.prefix}vpn9`,
        subnet: `${subnetAfter(9)}.0/24`,
      },
      'network_vpn_exists',
    );
    await refused(
      { name: 'lab2', kind: 'nat', bridge: lab.bridge, subnet: `${subnetAfter(9)}.0/24` },
      'network_exists',
    );

    // Offered to the user as not allowed; a card on it is refused, translated.
    const allowed = (await call(token, 'GET', '/user/hardware/allowed')).json<{
      interfaces: { id: string; allowed: boolean }[];
    }>();
    expect(allowed.interfaces.map((i) => [i.id, i.allowed])).toEqual([
      ['default', true],
      ['lab', false],
      ['private', true],
      ['wireguard', true],
    ]);
    const onLab = await call(token, 'POST', '/persistent_desktop', {
      template_id: TINY_LINUX_TEMPLATE_ID,
      name: 'Tiny on lab',
      hardware: { interfaces: ['default', 'lab'] },
    });
    expect([onLab.statusCode, onLab.json<{ description_code: string }>().description_code]).toEqual(
      [403, 'interface_not_allowed'],
    );

    // Opened to users: the same bridge stays; a new subnet makes it anew.
    const ifindex = () => readFileSync(`/sys/class/net/${lab.bridge}/ifindex`, 'utf8');
    const before = ifindex();
    const opened = await callOther(admin, 'PUT', '/admin/networks/lab', {
      allowed_roles: ['admin', 'user'],
    });
    expect(opened.statusCode, opened.body).toBe(200);
    const reopened = (await call(token, 'GET', '/user/hardware/allowed')).json<{
      interfaces: { id: string; allowed: boolean }[];
    }>();
    expect(reopened.interfaces.find((i) => i.id === 'lab')?.allowed).toBe(true);
    expect(ifindex()).toBe(before);
    const edited = subnetAfter(4);
    expect(
      (await callOther(admin, 'PUT', '/admin/networks/lab', { subnet: `${edited}.0/24` }))
        .statusCode,
    ).toBe(200);
    await onHost(
      () => addressesOf(lab.bridge),
      (shown) => shown.includes(`${edited}.1/24`) && !shown.includes(`${lab.subnet}.1/24`),
    );
    expect((await callOther(admin, 'DELETE', '/admin/networks/lab')).statusCode).toBe(200);
    await onHost(
      async () => existsSync(`/sys/class/net/${lab.bridge}`),
      (exists) => !exists,
    );
    const vpn = await call(admin, 'DELETE', '/admin/networks/wireguard');
    expect([vpn.statusCode, vpn.json<{ description_code: string }>().description_code]).toEqual([
      428,
      'network_vpn_not_deletable',
    ]);
    // The guests below run on this node alone.
    await other?.close();
    other = undefined;
  });

  it('boots Tiny Linux on the NAT and the private network: each gets an address on its bridge, only the NAT one reaches beyond the host, and the address goes when it stops', async () => {
    const create = async (name: string, interfaces: string[]) => {
      const res = await call(token, 'POST', '/persistent_desktop', {
        template_id: TINY_LINUX_TEMPLATE_ID,
        name,
        hardware: { interfaces },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json<{ id: string }>().id;
    };
    const id = await create('Tiny on NAT', ['default']);
    const privateId = await create('Tiny on private', ['private']);
    const stateAndDetail = async (desktop: string) => {
      const d = await t.app.desktops.byId(desktop);
      return `${d?.state} ${d?.detail ?? ''}`.trim();
    };
    for (const desktop of [id, privateId]) {
      await untilWithin(20_000)(
        () => stateAndDetail(desktop),
        (s) => s === 'stopped',
      );
      expect((await action(desktop, 'start')).statusCode).toBe(200);
    }
    for (const desktop of [id, privateId]) {
      expect(
        await untilWithin(20_000)(
          () => stateAndDetail(desktop),
          (s) => !s.startsWith('starting'),
        ),
      ).toBe('started');
      const started = (await t.app.desktops.byId(desktop))?.runtime as { pid?: number };
      if (started.pid) trackPid(started.pid);
    }

    // Each card's TAP device is on its network's bridge.
    const host = t.app.hostNetworks;
    const tap = host.tapName(id, 0);
    for (const [desktop, bridge] of [
      [id, nat.bridge],
      [privateId, isolated.bridge],
    ] as const)
      expect(
        readFileSync(`/sys/class/net/${host.tapName(desktop, 0)}/master/uevent`, 'utf8'),
      ).toContain(`INTERFACE=${bridge}`);

    // The address from each network's dnsmasq reaches the record (and the list the cards show).
    const addressIn = async (desktop: string, subnet: string) => {
      const ip = await untilWithin(45_000)(
        async () => (await listed(desktop))?.ip,
        (value) => typeof value === 'string',
      );
      expect(ip).toMatch(new RegExp(`^${subnet.replaceAll('.', '\\.')}\\.\\d+$`));
      return ip ?? '';
    };
    const ip = await addressIn(id, nat.subnet);
    const privateIp = await addressIn(privateId, isolated.subnet);
    const runtime = (await t.app.desktops.byId(id))?.runtime as Record<string, unknown>;
    expect(runtime.ip).toBe(ip);
    expect(runtime.addresses).toEqual({ default: ip });
    // Live: an update event carried it to the sockets.
    expect(updates.some((d) => d.id === id && d.state === 'started' && d.ip === ip)).toBe(true);

    // The host reaches each guest over its bridge: its page names it (by its MAC).
    const page = async (
      address: string,
      path = '/',
      done = (text: string) => text.includes(`address: ${address}`),
    ) =>
      untilWithin(20_000)(
        () =>
          fetch(`http://${address}${path}`, { signal: AbortSignal.timeout(4000) })
            .then((res) => res.text())
            .catch(() => ''),
        done,
      );
    expect(await page(ip)).toContain(`tiny-${macFor(id, 0).split(':').slice(3).join('')}`);
    expect(await page(privateIp)).toContain(TINY_LINUX_BANNER);
    // Beyond the host: the NAT guest's ping gets through (masqueraded), the private one's does not.
    const reach = `/cgi-bin/reach?${outside.net}.2`;
    expect(await page(ip, reach, (text) => text === 'reachable\n')).toBe('reachable\n');
    expect(await page(privateIp, reach, (text) => text.endsWith('reachable\n'))).toBe(
      'unreachable\n',
    );

    // A server restart: the guest keeps running, and the new server follows its address again.
    await t.app.desktops.update(id, {
      runtime: { ...runtime, ip: undefined, addresses: undefined },
    });
    expect((await listed(id))?.ip).toBeUndefined();
    const config = t.config;
    await t.app.close();
    t.app = await buildApp({ ...config });
    await t.app.ready();
    token = await login(t.app, 'user');
    expect(
      await untilWithin(10_000)(
        async () => (await listed(id))?.ip,
        (value) => value === ip,
      ),
    ).toBe(ip);

    // Stopped: no address in the record, and the TAP device is gone.
    expect((await action(id, 'stop')).statusCode).toBe(200);
    expect((await action(id, 'stop')).statusCode).toBe(200);
    await untilWithin(20_000)(
      async () => (await listed(id))?.state,
      (s) => s === 'stopped',
    );
    expect((await listed(id))?.ip).toBeUndefined();
    expect(updates.filter((d) => d.id === id).at(-1)).not.toHaveProperty('ip');
    await untilWithin(10_000)(
      async () => existsSync(`/sys/class/net/${tap}`),
      (present) => !present,
    );
  });

  it('puts a card on its bridge as soon as QEMU has made its device, and gives up when the start ends first', async () => {
    const host = t.app.hostNetworks;
    const id = 'plug-check';
    // what `attach` reads of a domain's spec: its id and its cards
    const spec = { id, network: [{ network: nat.id, mac: macFor(id, 0) }] };
    const wired = await host.attach(spec as unknown as Parameters<typeof host.attach>[0]);
    const tap = host.tapName(id, 0);
    expect(wired.network?.[0]?.backend).toEqual({ kind: 'tap', ifname: tap });
    // named, not made: QEMU makes it as it starts
    expect(existsSync(`/sys/class/net/${tap}`)).toBe(false);

    const ended = new AbortController();
    const givenUp = host.plug(id, ended.signal);
    ended.abort();
    await expect(givenUp).rejects.toMatchObject({ code: 'start_failed' });

    const plugging = host.plug(id, new AbortController().signal);
    await sh('ip', 'tuntap', 'add', 'dev', tap, 'mode', 'tap'); // as QEMU does at its start
    await plugging;
    expect(readFileSync(`/sys/class/net/${tap}/master/uevent`, 'utf8')).toContain(
      `INTERFACE=${nat.bridge}`,
    );
    // and set up (IFF_UP)
    expect(Number.parseInt(readFileSync(`/sys/class/net/${tap}/flags`, 'utf8'), 16) & 1).toBe(1);
    await host.release(id);
    expect(existsSync(`/sys/class/net/${tap}`)).toBe(false);
  });
});
