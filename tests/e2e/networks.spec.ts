/**
 * Desktop networks, the users' VPN and the bastion end to end, as root, with real QEMU and ONE
 * Tiny Linux guest for the whole file (the tests run in order and share it). This file's portal
 * bridges its desktops' networks (its own network prefix and subnets) on a PostgreSQL of its own,
 * where the test writes the admin's VPN and bastion settings (no screen edits them): the VPN's
 * port and users' network (another portal of the host may hold the defaults) and its endpoint
 * host (the peer's veth link), the bastion's domain and roles (advanced and up). `advanced`, signed
 * in once for the file, owns the guest: the bastion is theirs to use, and `user` is the other user
 * whose tunnel must not reach it.
 *
 * 1. `advanced` creates a Tiny Linux desktop on the NAT network (and the VPN network) on the New
 *    desktop page and starts it from its card; the card shows its NAT address; the guest reaches
 *    the portal's host (its `/cgi-bin/reach` pings the NAT network's host address). While QEMU
 *    boots the guest (most of this file's time), the UI steps of tests 2 and 3 that need no guest
 *    run: the VPN file's download and the bastion's turning on.
 * 2. `advanced` downloads the VPN file from the profile; a WireGuard peer in a network namespace of
 *    its own, configured only from that file (tests/support/wireguard-peer.ts), pings the desktop's
 *    VPN address (its second card's, from the VPN network's DHCP leases: the card shows the
 *    first card's) and fetches its page; `user`'s file connects (the server answers in the tunnel)
 *    but does not reach `advanced`'s desktop; after `advanced` resets the VPN keys in the profile,
 *    the old file no longer connects.
 * 3. `advanced` enables the bastion's SSH (with a public key) and HTTP in the desktop's bastion
 *    modal: OpenSSH's `ssh -p <port> <target>@127.0.0.1` with the matching private key runs
 *    `hostname` in the guest as the desktop's guest user (its guest credentials' `isard`, not
 *    root; another key is refused), curl with the target's host name gets the guest's page, and
 *    HTTPS to that name on the bastion's HTTPS port is passed through to the guest (its own
 *    certificate answers); once disabled in the modal, all three are refused.
 *
 * The browser RDP viewer (step 4 of the networks issue) is rdp.spec.ts, against a guacd double.
 * Without root the tests do not run, and their title says why.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import type { APIRequestContext, Page } from '@playwright/test';
import { test as base, expect } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';
import { startPostgres, type PgCluster } from '../support/postgres';
import { freeUdpPort, quiet, sh, WireguardPeer } from '../support/wireguard-peer';
import { bridgeFiles } from '../../server/src/platform/hypervisor/host-bridges';
import {
  HOST_NETWORKS_DIR,
  HostNetworks,
} from '../../server/src/platform/hypervisor/host-networks';
import { seededNetwork } from '../../server/src/platform/hypervisor/network-defs';
import { macFor } from '../../server/src/platform/hypervisor/qemu-network';
import { TINY_LINUX_BANNER, TINY_LINUX_CACHE_DIR } from '../../server/src/seed/tiny-linux';

const execFileAsync = promisify(execFile);
const root = process.getuid?.() === 0;
const NOT_ROOT =
  'not run: bridges, TAP devices, dnsmasq and WireGuard need root (README, "Desktop networks")';
const pid = process.pid;
/** This file's network names and subnets (clear of the other tests' and of a portal's defaults). */
const network = {
  mode: 'bridge' as const,
  prefix: `e${(pid % 1296).toString(36)}`,
  natSubnet: `10.${60 + (pid % 30)}.${pid % 250}`,
};
const nat = seededNetwork(network.prefix, network.natSubnet, 'nat');
const vpnNet = seededNetwork(network.prefix, network.natSubnet, 'vpn');
const USERS_NET = `10.${30 + (pid % 30)}.0.0/16`;
const BASTION_DOMAIN = 'bastion.test';
/** How often a poll asks again: what it waits for comes within milliseconds of being possible. */
const POLL = [100];

interface Host {
  database: PgCluster;
  sshPort: number;
  httpsPort: number;
  vpnPort: number;
  peer: WireguardPeer;
}

async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        address && typeof address === 'object'
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });
}

const test = base.extend<object, { host: Host }>({
  host: [
    async ({ browserName: _browserName }, use) => {
      const [database, peer] = await Promise.all([
        startPostgres(),
        WireguardPeer.start({ prefix: `${network.prefix}p`, net: `172.29.${pid % 250}` }),
      ]);
      await use({
        database,
        sshPort: await freeTcpPort(),
        httpsPort: await freeTcpPort(),
        vpnPort: await freeUdpPort(),
        peer,
      });
      // After the portal (which depends on this): whatever it left of its networks.
      await peer.close();
      await quiet(sh('nft', 'delete', 'table', 'ip', `${network.prefix}_vpn`));
      await quiet(sh('ip', 'link', 'del', `${network.prefix}wg0`));
      await new HostNetworks(network).teardown();
      database.stop();
    },
    { scope: 'worker' },
  ],
  portalEnv: [
    async ({ host }, use) =>
      use({
        DATABASE_URL: host.database.url,
        NETWORK_MODE: network.mode,
        NETWORK_PREFIX: network.prefix,
        NAT_SUBNET: network.natSubnet,
        BASTION_SSH_PORT: String(host.sshPort),
        BASTION_HTTPS_PORT: String(host.httpsPort),
        // One key per machine: the Tiny Linux disk that trusts it is built once and cached.
        BASTION_KEY_FILE: join(TINY_LINUX_CACHE_DIR, 'test-portal-key'),
      }),
    { scope: 'worker' },
  ],
});

/** The admin's settings, written where the portal reads them (no screen edits these). */
async function writeSettings(host: Host): Promise<void> {
  const client = new pg.Client({ connectionString: host.database.url });
  await client.connect();
  try {
    const put = (key: string, value: object) =>
      client.query(
        `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
        [key, JSON.stringify(value)],
      );
    await put('bastion', {
      enabled: true,
      domain: BASTION_DOMAIN,
      ssh_port: null,
      individual_domains: false,
      roles: ['advanced', 'manager', 'admin'],
    });
    await put('vpn', {
      endpoint_host: host.peer.hostAddress,
      port: host.vpnPort,
      users_net: USERS_NET,
      guests_nets: null,
      mtu: 1420,
    });
  } finally {
    await client.end();
  }
}

/** The guest's address on a network, from the network's DHCP leases (by the card's MAC). */
function leasedAddress(bridge: string, mac: string): string | undefined {
  try {
    const leases = readFileSync(bridgeFiles(HOST_NETWORKS_DIR, bridge).leases, 'utf8');
    return leases
      .split('\n')
      .map((line) => line.split(' '))
      .find((fields) => fields[1] === mac)?.[2];
  } catch {
    return undefined;
  }
}

/** The public keys the server's WireGuard interface has as peers. */
const serverPeers = () => sh('wg', 'show', `${network.prefix}wg0`, 'peers').catch(() => '');
/** A client file's public key. */
const publicKeyOf = async (file: string) => {
  const privateKey = /^PrivateKey = (.+)$/m.exec(file)?.[1] ?? '';
  const child = execFileAsync('wg', ['pubkey']);
  child.child.stdin?.end(`${privateKey}\n`);
  return (await child).stdout.trim();
};

/** Downloads the VPN file from the profile page, as the user does. */
async function downloadVpnFile(page: Page): Promise<string> {
  await page.goto('/profile');
  const download = page.waitForEvent('download');
  await page.locator('[data-action="vpnConfig"]').click();
  return readFileSync(await (await download).path(), 'utf8');
}

/** Opens the bastion modal of the desktop from its card's menu. */
async function openBastion(page: Page, id: string) {
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await card.getByTestId('record-more').click();
  await page.locator('[data-action="bastion"]').click();
  const modal = page.getByRole('dialog', { name: /^Bastion of/ });
  await expect(modal).toBeVisible();
  return modal;
}

test.describe.configure({ mode: 'serial' });

test.describe(`desktop networks, the VPN and the bastion (root, real QEMU, Tiny Linux)${root ? '' : ` (${NOT_ROOT})`}`, () => {
  test.skip(!root, NOT_ROOT);
  const guest = { id: '', name: `e2e-net-${Date.now()}`, ip: '', vpnIp: '' };
  /** The test's SSH keys: made by the worker that runs the tests (not when the file is listed). */
  let keys = '';
  /** `advanced`, signed in once for the file: one page, and the API with its token. */
  let page: Page;
  let api: APIRequestContext;
  /** What test 1 does while its guest boots, for the next tests: the VPN file, the SSH command. */
  const early = { vpnFile: '', sshCommand: '' };
  /**
   * Turns the bastion's SSH (with the `id` key) and HTTP access on or off in the modal; answers
   * the SSH command it shows while on.
   */
  const setBastion = async (on: boolean) => {
    const publicKey = readFileSync(join(keys, 'id.pub'), 'utf8').trim();
    const modal = await openBastion(page, guest.id);
    const http = modal.getByTestId('bastion-http-enabled');
    const ssh = modal.getByTestId('bastion-ssh-enabled');
    if (on) {
      await http.check();
      await ssh.check();
      await modal.getByTestId('bastion-keys').fill(publicKey);
    } else {
      await http.uncheck();
      await ssh.uncheck();
    }
    // Shown while SSH is on.
    const command = on
      ? ((await modal.getByTestId('bastion-ssh-command').textContent()) ?? '')
      : '';
    await modal.getByTestId('bastion-save').click();
    await expect(modal).toBeHidden();
    return command;
  };

  test.beforeAll(async ({ browser, portal, host }) => {
    keys = mkdtempSync(join(tmpdir(), 'e2e-bastion-'));
    await writeSettings(host);
    page = await browser.newPage({ baseURL: portal.url, locale: 'en-GB' });
    const [token] = await Promise.all([
      apiToken(portal.url, 'advanced'),
      loginUi(page, 'advanced'),
      // The bastion's key pair, and another key it does not know.
      ...['id', 'stranger'].map((name) =>
        sh('ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', join(keys, name)),
      ),
    ]);
    api = await apiAs(portal.url, token);
  });
  test.afterAll(async () => {
    await page?.close();
    if (keys) rmSync(keys, { recursive: true, force: true });
  });

  test('advanced creates a Tiny Linux desktop on the NAT network; its card shows its address; the guest reaches the portal host', async () => {
    test.setTimeout(90_000);
    await page.getByTestId('resource-create').click();
    await page.getByRole('combobox', { name: 'Template' }).click();
    await page.getByRole('option', { name: 'Tiny Linux' }).click();
    const nameInput = page.getByRole('textbox', { name: 'Name', exact: true });
    await expect(nameInput).toHaveValue('Tiny Linux');
    await nameInput.fill(guest.name);
    // Its first card on the NAT network (the template's), a second one on the VPN network.
    await page.getByRole('combobox', { name: 'Networks' }).focus();
    await page.keyboard.press('ArrowDown');
    await page.getByRole('option', { name: 'wireguard' }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect(page).toHaveURL(/\/desktops$/, { timeout: 30_000 });
    const list = (await (await api.get('/api/v3/user/desktops')).json()) as {
      id: string;
      name: string;
    }[];
    guest.id = list.find((d) => d.name === guest.name)?.id ?? '';
    expect(guest.id, 'the new desktop is listed').toBeTruthy();

    await page.getByTestId('resource-filter').fill(guest.name);
    const card = page.locator(`[data-testid="record"][data-record-id="${guest.id}"]`);
    await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 30_000 });
    await card.getByTestId('record-more').click();
    await page.locator('[data-action="start"]').click();
    await expect(card).toHaveAttribute('data-state', 'started', { timeout: 30_000 });
    // While QEMU boots the guest, the steps of the next tests that need no guest: the VPN file
    // from the profile, and the bastion's SSH and HTTP access turned on in the modal.
    early.vpnFile = await downloadVpnFile(page);
    await page.goto('/desktops');
    await page.getByTestId('resource-filter').fill(guest.name);
    early.sshCommand = await setBastion(true);

    // The card shows the guest's address on the NAT network (its first card), from DHCP.
    const onNat = new RegExp(`${nat.subnet.replaceAll('.', '\\.')}\\.\\d+`);
    await expect(card).toContainText(onNat, { timeout: 30_000 });
    guest.ip = onNat.exec((await card.textContent()) ?? '')?.[0] ?? '';
    // The guest pings the portal's host (the NAT network's host address).
    await expect
      .poll(
        async () =>
          (await fetch(`http://${guest.ip}/cgi-bin/reach?${nat.subnet}.1`).catch(() => undefined))
            ?.text()
            .then((text) => text.trim()),
        { timeout: 20_000, intervals: POLL },
      )
      .toBe('reachable');
  });

  test('the VPN file from the profile reaches the own desktop only, and no longer after a key reset', async ({
    baseURL,
    host,
  }) => {
    test.setTimeout(60_000);
    const { peer } = host;
    const file = early.vpnFile;
    const key = await publicKeyOf(file);
    // The endpoint has the new key before the peer dials (a refused handshake is retried 5 s later).
    await expect.poll(serverPeers, { timeout: 10_000, intervals: POLL }).toContain(key);
    const conf = await peer.useFile(file);
    expect(conf.Peer.Endpoint).toBe(`${peer.hostAddress}:${host.vpnPort}`);
    const gateway = (conf.Peer.AllowedIPs ?? '').split(',')[0]?.replace('/32', '') ?? '';

    // The desktop's address on the VPN network (its second card).
    await expect
      .poll(() => leasedAddress(vpnNet.bridge, macFor(guest.id, 1)), {
        timeout: 20_000,
        intervals: POLL,
      })
      .toMatch(new RegExp(`^${vpnNet.subnet.replaceAll('.', '\\.')}\\.\\d+$`));
    guest.vpnIp = leasedAddress(vpnNet.bridge, macFor(guest.id, 1)) ?? '';
    await expect
      .poll(() => peer.pings(guest.vpnIp), { timeout: 15_000, intervals: POLL })
      .toBe(true);
    expect(await peer.fetch(`http://${guest.vpnIp}/`)).toContain(TINY_LINUX_BANNER);

    // Another user's tunnel works, and does not reach this desktop.
    const userApi = await apiAs(baseURL ?? '', await apiToken(baseURL ?? '', 'user'));
    const userFile = (
      (await (await userApi.get('/api/v3/user/vpn/config')).json()) as {
        content: string;
      }
    ).content;
    await expect
      .poll(serverPeers, { timeout: 10_000, intervals: POLL })
      .toContain(await publicKeyOf(userFile));
    await peer.useFile(userFile);
    await expect.poll(() => peer.pings(gateway), { timeout: 10_000, intervals: POLL }).toBe(true);
    expect(await peer.pings(guest.vpnIp)).toBe(false);

    // Reset in the profile: the endpoint drops the old key, and the old file connects to nothing.
    await page.goto('/profile');
    await page.locator('[data-action="resetVpn"]').click();
    await page.getByTestId('confirm-action').click();
    await expect.poll(serverPeers, { timeout: 10_000, intervals: POLL }).not.toContain(key);
    await peer.useFile(file);
    // Each unanswered ping waits out its time: both at once.
    expect(await Promise.all([peer.pings(gateway), peer.pings(guest.vpnIp)])).toEqual([
      false,
      false,
    ]);
  });

  test('the bastion modal: ssh runs hostname in the guest as its guest user, HTTP and HTTPS by host name reach it; disabled, all are refused', async ({
    baseURL,
    host,
  }) => {
    test.setTimeout(60_000);
    await page.goto('/desktops');
    await page.getByTestId('resource-filter').fill(guest.name);

    // `ssh -p <port> <target id>@<bastion domain>`: the same to this host's address.
    const command = early.sshCommand;
    const [, port, target] = /^ssh -p (\d+) ([\w-]+)@/.exec(command) ?? [];
    expect(port).toBe(String(host.sshPort));
    const ssh = (key: string) =>
      execFileAsync(
        'ssh',
        [
          ...['-p', port ?? '', '-i', join(keys, key), '-o', 'IdentitiesOnly=yes'],
          ...['-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no'],
          ...['-o', 'UserKnownHostsFile=/dev/null', '-o', 'ConnectTimeout=5'],
          `${target ?? ''}@127.0.0.1`,
          'hostname; id -un',
        ],
        { timeout: 15_000 },
      ).then(
        ({ stdout }) => stdout.trim(),
        (error: unknown) => `error: ${(error as { stderr?: string }).stderr ?? String(error)}`,
      );
    // The guest's host name (named after its first card's MAC), once dropbear runs, and the
    // desktop's guest user (the template's guest credentials).
    const guestName = `tiny-${macFor(guest.id, 0).split(':').slice(3).join('')}`;
    await expect
      .poll(() => ssh('id'), { timeout: 20_000, intervals: POLL })
      .toBe(`${guestName}\nisard`);
    expect(await ssh('stranger')).toMatch(/Permission denied/);

    const portalPort = new URL(baseURL ?? '').port;
    const targetHost = `${target ?? ''}.${BASTION_DOMAIN}`;
    const curl = () =>
      execFileAsync('curl', [
        ...['-s', '-i', '--max-time', '5', '--resolve', `${targetHost}:${portalPort}:127.0.0.1`],
        `http://${targetHost}:${portalPort}/`,
      ]).then(({ stdout }) => stdout);
    const page200 = await curl();
    expect(page200).toMatch(/^HTTP\/1\.1 200/);
    expect(page200).toContain(TINY_LINUX_BANNER);
    // HTTPS by the same name on the bastion's HTTPS port: the TLS is the guest's (its certificate
    // names the guest), passed through, not ended by the portal.
    const httpsPort = String(host.httpsPort);
    const curlTls = () =>
      execFileAsync('curl', [
        ...['-s', '-k', '-v', '--max-time', '5'],
        ...['--resolve', `${targetHost}:${httpsPort}:127.0.0.1`],
        `https://${targetHost}:${httpsPort}/index.html`,
      ]).then(
        ({ stdout, stderr }) => `${stderr}\n${stdout}`,
        (error: unknown) => `error: ${String((error as { code?: unknown }).code)}`,
      );
    // The guest's HTTPS server starts in the background of its boot: it may come after SSH.
    await expect
      .poll(curlTls, { timeout: 20_000, intervals: POLL })
      .toContain(`subject: CN=${guestName}`);
    expect(await curlTls()).toContain(TINY_LINUX_BANNER);

    await setBastion(false);
    const [sshRefused, refused, tlsRefused] = await Promise.all([ssh('id'), curl(), curlTls()]);
    expect(sshRefused).toMatch(/Permission denied/);
    expect(refused).toMatch(/^HTTP\/1\.1 403/);
    expect(refused).toMatch(/^x-bastion-refused: disabled\r?$/m);
    // Closed before any TLS answer (curl's 35: the handshake failed).
    expect(tlsRefused).toBe('error: 35');
  });
});
