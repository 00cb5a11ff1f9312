import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../platform/repository/settings-repository.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser, loginTo, userRow } from '../../../test/support/fixtures.ts';

let t: TestApp;
let dir: string;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  dir = mkdtempSync(join(tmpdir(), 'vpn-test-'));
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

interface Download {
  kind: string;
  name: string;
  ext: string;
  mime: string;
  content: string;
}

type Conf = Record<'Interface' | 'Peer', Record<string, string>>;

/** Sections of a WireGuard file: `[Section]` headers, `Key = value` lines. */
function parse(content: string): Conf {
  const conf: Conf = { Interface: {}, Peer: {} };
  let section: Record<string, string> | undefined;
  for (const line of content.split('\n')) {
    if (line === '') continue;
    const header = /^\[(Interface|Peer)\]$/.exec(line);
    if (header) {
      section = conf[header[1] as 'Interface' | 'Peer'];
      continue;
    }
    const m = /^(\w+) = (\S+)$/.exec(line);
    if (!m || !section) throw new Error(`not a WireGuard line: ${line}`);
    section[m[1] ?? ''] = m[2] ?? '';
  }
  return conf;
}

async function download(token: string, headers: Record<string, string> = {}) {
  const res = await injectWithToken(t.app, token, {
    method: 'GET',
    url: '/api/v3/user/vpn/config',
    headers,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Download;
}

const wgPubkey = (privateKey: string) =>
  execFileSync('/usr/bin/wg', ['pubkey'], { input: `${privateKey}\n` })
    .toString()
    .trim();

const setVpn = (vpn: Partial<typeof defaultSettings.vpn>) =>
  t.app.settings.set('vpn', { ...defaultSettings.vpn, ...vpn });

describe('WireGuard VPN', () => {
  it('answers a configuration file whose private key belongs to the stored public key', async () => {
    const token = await login(t.app, 'user');
    const file = await download(token);
    expect(file).toMatchObject({
      kind: 'file',
      name: 'isard-vpn',
      ext: 'conf',
      mime: 'text/plain',
    });
    const conf = parse(file.content);
    expect(Object.keys(conf.Interface)).toEqual(['Address', 'PrivateKey', 'MTU']);
    expect(Object.keys(conf.Peer)).toEqual([
      'PublicKey',
      'Endpoint',
      'AllowedIPs',
      'PersistentKeepalive',
    ]);
    // The first user of a fresh network gets the first address after the gateway.
    expect(conf.Interface.Address).toBe('10.0.0.2');
    expect(conf.Interface.MTU).toBe('1420');
    // The server's tunnel address and the VPN network (seeded two /24s after NAT_SUBNET).
    expect(conf.Peer.AllowedIPs).toBe('10.0.0.1/32,10.87.2.0/24');
    expect(conf.Peer.PersistentKeepalive).toBe('25');
    expect(conf.Peer.Endpoint).toBe('localhost:443');

    const row = await userRow(t.app, 'user');
    expect(row.wgAddress).toBe('10.0.0.2');
    expect(conf.Interface.PrivateKey).toBe(row.wgPrivateKey);
    expect(existsSync('/usr/bin/wg')).toBe(true);
    expect(wgPubkey(conf.Interface.PrivateKey ?? '')).toBe(row.wgPublicKey);

    const server = await t.app.database.query<{
      value: { private_key: string; public_key: string };
    }>("SELECT value FROM settings WHERE key = 'vpn_server_keys'");
    const serverKeys = server[0]?.value;
    expect(conf.Peer.PublicKey).toBe(serverKeys?.public_key);
    expect(wgPubkey(serverKeys?.private_key ?? '')).toBe(serverKeys?.public_key);
  });

  it('is a file wg-quick reads', async () => {
    const file = await download(await login(t.app, 'user'));
    const path = join(dir, 'wg0.conf');
    writeFileSync(path, file.content, { mode: 0o600 });
    const stripped = execFileSync('/usr/bin/wg-quick', ['strip', path], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }).toString();
    const conf = parse(stripped);
    // wg-quick keeps what `wg` itself reads and drops its own keys (Address, MTU).
    expect(Object.keys(conf.Interface)).toEqual(['PrivateKey']);
    expect(conf.Peer).toEqual(parse(file.content).Peer);
  });

  it('gives the same file again, and new keys but the same address after a reset', async () => {
    const token = await login(t.app, 'user');
    const first = await download(token);
    expect((await download(token)).content).toBe(first.content);
    const before = await userRow(t.app, 'user');

    const reset = await injectWithToken(t.app, token, {
      method: 'PUT',
      url: '/api/v3/user/reset-vpn',
    });
    expect(reset.statusCode).toBe(200);
    const after = await userRow(t.app, 'user');
    expect(after.wgPrivateKey).not.toBe(before.wgPrivateKey);
    expect(after.wgPublicKey).not.toBe(before.wgPublicKey);
    expect(after.wgAddress).toBe(before.wgAddress);

    const conf = parse((await download(token)).content);
    expect(conf.Interface.PrivateKey).toBe(after.wgPrivateKey);
    expect(wgPubkey(conf.Interface.PrivateKey ?? '')).toBe(after.wgPublicKey);
    expect(conf.Interface.Address).toBe(before.wgAddress);
    expect(conf.Peer.PublicKey).toBe(parse(first.content).Peer.PublicKey);
  });

  it('never gives two users the same address, even on parallel first downloads', async () => {
    const names = Array.from({ length: 12 }, (_, i) => `vpn-user-${i}`);
    for (const username of names)
      await addUser(t.app, {
        username,
        role: 'user',
        categoryId: 'default',
        groupId: 'default-users',
      });
    const tokens = await Promise.all(names.map((n) => loginTo(t.app, n, 'default')));
    // Every user asks twice at once.
    const files = await Promise.all([...tokens, ...tokens].map((tk) => download(tk)));
    const addresses = files.map((f) => parse(f.content).Interface.Address);
    for (let i = 0; i < tokens.length; i++) {
      expect(files[i]?.content).toBe(files[i + tokens.length]?.content);
    }
    const own = addresses.slice(0, tokens.length);
    expect(new Set(own).size).toBe(tokens.length);
    const stored = await t.app.database.query<{ wg_address: string }>(
      'SELECT wg_address FROM users WHERE wg_address IS NOT NULL',
    );
    expect(new Set(stored.map((r) => r.wg_address)).size).toBe(stored.length);
    for (const address of own) {
      expect(address).toMatch(/^10\.0\.\d+\.\d+$/);
      expect(['10.0.0.0', '10.0.0.1', '10.0.255.255']).not.toContain(address);
    }
  });

  it('takes the endpoint from the settings, else the public URL, else the request host', async () => {
    const token = await login(t.app, 'user');
    const endpoint = async (headers: Record<string, string> = {}) =>
      parse((await download(token, headers)).content).Peer.Endpoint;
    expect(await endpoint({ host: 'portal.example.net:8443' })).toBe('portal.example.net:443');
    const publicUrl = t.app.config.publicUrl;
    t.app.config.publicUrl = 'https://vdi.example.com';
    try {
      expect(await endpoint({ host: 'portal.example.net' })).toBe('vdi.example.com:443');
      await setVpn({ endpoint_host: 'vpn.example.org', port: 51820, guests_nets: '10.7.0.0/16' });
      const conf = parse((await download(token)).content);
      expect(conf.Peer.Endpoint).toBe('vpn.example.org:51820');
      expect(conf.Peer.AllowedIPs).toBe('10.0.0.1/32,10.7.0.0/16');
    } finally {
      t.app.config.publicUrl = publicUrl;
      await setVpn({});
    }
  });

  it('moves users into a new network and refuses when it has no address left', async () => {
    await setVpn({ users_net: '10.9.0.0/30' });
    try {
      const user = await download(await login(t.app, 'user'));
      // /30: .0 network, .1 gateway, .3 broadcast: only .2 is left for users.
      expect(parse(user.content).Interface.Address).toBe('10.9.0.2');
      const res = await injectWithToken(t.app, await login(t.app, 'advanced'), {
        method: 'GET',
        url: '/api/v3/user/vpn/config',
      });
      expect(res.statusCode).toBe(409);
      expect((res.json() as { description_code: string }).description_code).toBe(
        'vpn_network_full',
      );
    } finally {
      await setVpn({});
    }
    expect((await userRow(t.app, 'advanced')).wgAddress).toBeNull();
  });

  it('runs no endpoint while the desktop networks are not bridged (the tests default: none)', () => {
    expect(t.app.config.network.mode).toBe('none');
    expect(t.app.vpnEndpoint.running).toBe(false);
  });

  it('keeps the server key pair out of the portal settings and the users out of each other', async () => {
    const all = await t.app.settings.all();
    expect(Object.keys(all)).not.toContain('vpn_server_keys');
    const res = await injectWithToken(t.app, await login(t.app, 'user'), {
      method: 'GET',
      url: '/api/v3/user',
    });
    expect(res.body).not.toMatch(/wg_|PrivateKey/);
  });
});
