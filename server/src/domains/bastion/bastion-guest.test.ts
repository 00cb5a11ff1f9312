/**
 * The bastion end to end, as root, with one Tiny Linux desktop (real QEMU, TCG) on the NAT
 * network: with the target enabled and a public key set, an SSH client signs in through the
 * bastion port with the matching private key and runs `hostname` in the guest (the bastion signs
 * in to the guest with the portal's key, which the guest trusts); a request for
 * `<target id>.<bastion domain>` gets the guest's page; once disabled, both are refused. The
 * network's names and subnet are this file's own; everything is removed at the end.
 */
import path from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktops } from '../../platform/db/schema.ts';
import { HostNetworks } from '../../platform/hypervisor/host-networks.ts';
import { macFor } from '../../platform/hypervisor/qemu-network.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import { TINY_LINUX_BANNER, TINY_LINUX_CACHE_DIR } from '../../seed/tiny-linux.ts';
import { TINY_LINUX_TEMPLATE_ID } from '../../seed/index.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { untilWithin } from '../../../test/support/wait.ts';
import type { Bastion } from '../../../../src/generated/types.ts';

const { Client, utils } = ssh2;

const DOMAIN = 'bastion.test';
const network = {
  mode: 'bridge' as const,
  prefix: `b${(process.pid % 46_656).toString(36)}`,
  natSubnet: `10.${150 + (process.pid % 50)}.${process.pid % 250}`,
};
const wait = untilWithin(45_000);

/** Runs a command through the SSH bastion: its output, or the error's message. */
function sshRun(port: number, username: string, privateKey: string, command: string) {
  return new Promise<string>((resolve) => {
    const client = new Client();
    client
      .on('ready', () =>
        client.exec(command, (err, stream) => {
          if (err) return resolve(`error: ${err.message}`);
          let out = '';
          stream.on('data', (d: Buffer) => (out += d.toString()));
          stream.on('close', () => {
            client.end();
            resolve(out.trim());
          });
        }),
      )
      .on('error', (err) => resolve(`error: ${err.message}`))
      .connect({ host: '127.0.0.1', port, username, privateKey, readyTimeout: 20_000 });
  });
}

describe('the bastion (root, real QEMU, Tiny Linux on the NAT network)', () => {
  let t: TestApp;
  let token: string;
  const userKey = utils.generateKeyPairSync('ed25519');

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase(), {
      prepareImages: true,
      tinyLinux: true,
      network,
      // One key per machine: the Tiny Linux disk that trusts it is built once and cached.
      bastion: {
        sshPort: 0,
        httpsPort: undefined,
        keyFile: path.join(TINY_LINUX_CACHE_DIR, 'test-portal-key'),
      },
    });
    await t.app.settings.set('bastion', {
      enabled: true,
      domain: DOMAIN,
      ssh_port: null,
      individual_domains: false,
    });
    await t.app.engine.reconcile();
    token = await login(t.app, 'user');
  });
  afterAll(async () => {
    const built = t as TestApp | undefined;
    if (built)
      for (const d of await built.app.db.select().from(desktops))
        await built.app.hypervisor.stop(d.id).catch(() => undefined);
    killTracked();
    await new HostNetworks(network).teardown();
    await built?.close();
  });

  it('relays SSH and HTTP to the running guest while enabled, and refuses both once disabled', async () => {
    const api = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
      injectWithToken(t.app, token, { method, url: `/api/v3${url}`, payload });
    const created = await api('POST', '/persistent_desktop', {
      template_id: TINY_LINUX_TEMPLATE_ID,
      name: 'Tiny behind the bastion',
    });
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json<{ id: string }>();
    const state = async () => `${(await t.app.desktops.byId(id))?.state}`;
    await wait(state, (s) => s === 'stopped');
    expect((await api('GET', `/desktop/start/${id}`)).statusCode).toBe(200);
    await wait(state, (s) => s !== 'starting');
    const pid = ((await t.app.desktops.byId(id))?.runtime as { pid?: number }).pid;
    if (pid) trackPid(pid);

    const target = (await api('GET', `/desktop/bastion/${id}`)).json<Bastion>();
    const enable = (on: boolean) =>
      api('PUT', `/desktop/bastion/${id}`, {
        http: { ...target.http, enabled: on },
        ssh: { ...target.ssh, enabled: on, authorized_keys: [userKey.public] },
      });
    expect((await enable(true)).statusCode).toBe(200);
    const port = t.app.bastionPorts.ssh ?? 0;
    expect(port).toBeGreaterThan(0);

    // SSH: the guest's host name (named after its MAC), once it has an address and dropbear runs.
    const guestName = `tiny-${macFor(id, 0).split(':').slice(3).join('')}`;
    expect(
      await wait(
        () => sshRun(port, target.id, userKey.private, 'hostname'),
        (out) => out === guestName,
      ),
    ).toBe(guestName);
    // Another key is not let in.
    const stranger = utils.generateKeyPairSync('ed25519');
    expect(await sshRun(port, target.id, stranger.private, 'hostname')).toMatch(/^error:/);

    // HTTP: the target's host name gets the guest's page.
    const get = () =>
      t.app.inject({ method: 'GET', url: '/', headers: { host: `${target.id}.${DOMAIN}` } });
    const page = await get();
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(TINY_LINUX_BANNER);

    // Disabled: both refused.
    expect((await enable(false)).statusCode).toBe(200);
    expect(await sshRun(port, target.id, userKey.private, 'hostname')).toMatch(
      /^error: All configured authentication methods failed/,
    );
    const refused = await get();
    expect([refused.statusCode, refused.headers['x-bastion-refused']]).toEqual([403, 'disabled']);
  });
});
