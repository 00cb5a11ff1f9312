/**
 * Desktop networks as root, end to end: a Tiny Linux desktop (real QEMU, TCG) on the NAT network
 * gets a TAP device on the network's bridge, takes an address from the network's dnsmasq, the
 * address shows in its record, the host fetches the guest's web page there, and the address and
 * the TAP go when the desktop stops. The bridge, TAP and NAT table names carry a prefix of this
 * process, and the subnet is this file's own, so parallel test files cannot clash; everything is
 * removed at the end, failed or not.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app.ts';
import { desktops } from '../../platform/db/schema.ts';
import { HostNetworks } from '../../platform/hypervisor/host-networks.ts';
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

const network = {
  mode: 'bridge' as const,
  prefix: `n${(process.pid % 46_656).toString(36)}`,
  natSubnet: `10.${200 + (process.pid % 50)}.${process.pid % 250}`,
};

describe('desktop networks (root, real QEMU, bridge, TAP, dnsmasq)', () => {
  let t: TestApp;
  let token: string;
  /** The desktops' update events, as the sockets get them. */
  const updates: { id: string; ip?: string; state: string }[] = [];

  const listed = async (id: string) => {
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/user/desktops',
    });
    return res.json<{ id: string; ip?: string; state: string }[]>().find((d) => d.id === id);
  };
  const action = (id: string, a: string) =>
    injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/desktop/${a}/${id}` });

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase(), {
      prepareImages: true,
      tinyLinux: true,
      network,
    });
    await t.app.engine.reconcile();
    t.app.events.subscribe((event) => {
      if (event.name === 'desktops.updated') updates.push(event.payload);
    });
    token = await login(t.app, 'user');
  });
  afterAll(async () => {
    // Whatever failed: the VMs, then the TAPs, dnsmasq, the NAT table and the bridge of this prefix.
    const built = t as TestApp | undefined;
    if (built)
      for (const d of await built.app.db.select().from(desktops))
        await built.app.hypervisor.stop(d.id).catch(() => undefined);
    killTracked();
    await new HostNetworks(network).teardown();
    await built?.close();
  });

  it('boots Tiny Linux on the NAT network: its address is in its record and serves its page, and goes when it stops', async () => {
    const created = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/api/v3/persistent_desktop',
      payload: { template_id: TINY_LINUX_TEMPLATE_ID, name: 'Tiny on NAT' },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json<{ id: string }>();
    await untilWithin(20_000)(
      async () => (await listed(id))?.state,
      (s) => s === 'stopped',
    );
    expect((await action(id, 'start')).statusCode).toBe(200);
    const stateAndDetail = async () => {
      const d = await t.app.desktops.byId(id);
      return `${d?.state} ${d?.detail ?? ''}`.trim();
    };
    expect(await untilWithin(20_000)(stateAndDetail, (s) => !s.startsWith('starting'))).toBe(
      'started',
    );
    const row = await t.app.desktops.byId(id);
    const pid = (row?.runtime as { pid?: number }).pid;
    if (pid) trackPid(pid);

    // The card's TAP device is on the network's bridge.
    const host = new HostNetworks(network);
    const tap = host.tapName(id, 0);
    expect(readFileSync(`/sys/class/net/${tap}/master/uevent`, 'utf8')).toContain(
      `INTERFACE=${host.bridge}`,
    );

    // The address from dnsmasq's lease reaches the record (and the list the cards show).
    const ip = await untilWithin(45_000)(
      async () => (await listed(id))?.ip,
      (value) => typeof value === 'string',
    );
    expect(ip).toMatch(new RegExp(`^${network.natSubnet.replaceAll('.', '\\.')}\\.\\d+$`));
    const runtime = (await t.app.desktops.byId(id))?.runtime as Record<string, unknown>;
    expect(runtime.ip).toBe(ip);
    // Live: an update event carried it to the sockets.
    expect(updates.some((d) => d.id === id && d.state === 'started' && d.ip === ip)).toBe(true);

    // The host reaches the guest over the bridge: its page names it (by its MAC).
    const mac = macFor(id, 0);
    const page = await untilWithin(20_000)(
      () =>
        fetch(`http://${ip}/`, { signal: AbortSignal.timeout(2000) })
          .then((res) => res.text())
          .catch(() => ''),
      (text) => text.includes(`address: ${ip}`),
    );
    expect(page).toContain(TINY_LINUX_BANNER);
    expect(page).toContain(`tiny-${mac.split(':').slice(3).join('')}`);

    // A server restart: the guest keeps running, and the new server follows its address again.
    await t.app.desktops.update(id, { runtime: { ...runtime, ip: undefined } });
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
});
