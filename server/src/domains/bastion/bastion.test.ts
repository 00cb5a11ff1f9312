/**
 * The bastion operations through the built app (no VM): the config gates them, the first read
 * makes the default target, the full update, the SSH keys and the custom domain (its CNAME read
 * through a stub resolver) write it, the owner's list and socket events follow, and the HTTP
 * and HTTPS bastions refuse a target whose desktop does not run, the SSH bastion's port (a plain TCP
 * server that loads ssh2 at its first connection) answers SSH and refuses a key the target does
 * not list. A target leaves with its desktop
 * (to the recycle bin or for good) and comes back, as it was, with a restored desktop.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, userRow } from '../../../test/support/fixtures.ts';
import { sshKeyPair } from './bastion-keys.ts';
import { guestLogin, startSshBastion } from './ssh-bastion.ts';
import type { Settings } from '../../platform/repository/settings-repository.ts';
import type { Bastion, UserConfig } from '../../../../src/generated/types.ts';

const DOMAIN = 'bastion.test';
const KEY =
  'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBastionTestKeyOnlyForTheseTests0000000000 me@test';

describe('bastion operations', () => {
  let t: TestApp;
  let user: string;
  let advanced: string;
  let desktopId: string;
  let otherDesktopId: string;
  const events: { name: string; payload: unknown }[] = [];
  const cnames = new Map<string, string[]>();

  const call = (token: string, method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
    injectWithToken(t.app, token, {
      method,
      url: `/api/v3${url}`,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const setBastion = (patch: Partial<Settings['bastion']>) =>
    t.app.settings.set('bastion', {
      enabled: true,
      domain: DOMAIN,
      ssh_port: null,
      individual_domains: true,
      ...patch,
    });
  const firstDesktop = async (token: string) => {
    const res = await call(token, 'GET', '/user/desktops');
    const id = res.json<{ id: string }[]>()[0]?.id;
    if (!id) throw new Error('the seeded account has no desktop');
    return id;
  };

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase(), {
      bastion: { sshPort: undefined, httpsPort: 0, keyFile: undefined },
    });
    t.app.bastion.resolveCname = async (name) => {
      const found = cnames.get(name);
      if (found) return found;
      throw Object.assign(new Error('no record'), { code: 'ENOTFOUND' });
    };
    t.app.events.subscribe((e) => {
      if (e.name.startsWith('bastion.')) events.push({ name: e.name, payload: e.payload });
    });
    [user, advanced] = await Promise.all([login(t.app, 'user'), login(t.app, 'advanced')]);
    [desktopId, otherDesktopId] = await Promise.all([firstDesktop(user), firstDesktop(advanced)]);
  });
  afterAll(() => t?.close());

  it('is refused while the config does not let the role use it, and the config says so', async () => {
    const off = await call(user, 'GET', `/desktop/bastion/${desktopId}`);
    expect(off.statusCode).toBe(403);
    expectErrorShape(off.json(), 'forbidden');
    expect((await call(user, 'GET', '/bastion_targets')).statusCode).toBe(403);

    await setBastion({ roles: ['advanced', 'manager', 'admin'] });
    t.app.settings.invalidate();
    expect((await call(user, 'GET', `/desktop/bastion/${desktopId}`)).statusCode).toBe(403);
    const config = (await call(advanced, 'GET', '/user/config')).json<UserConfig>();
    expect(config).toMatchObject({
      can_use_bastion: true,
      can_use_bastion_individual_domains: true,
      bastion_domain: DOMAIN,
      bastion_ssh_port: '443',
    });
    expect((await call(user, 'GET', '/user/config')).json<UserConfig>()).toMatchObject({
      can_use_bastion: false,
      bastion_domain: null,
      bastion_ssh_port: null,
    });
    await setBastion({});
  });

  it('makes the default target at the first read, then writes it and lists it', async () => {
    const shown = await call(user, 'GET', `/desktop/bastion/${desktopId}`);
    expect(shown.statusCode, shown.body).toBe(200);
    const target = shown.json<Bastion>();
    expect(target).toMatchObject({
      desktop_id: desktopId,
      enabled: false,
      domain: null,
      http: { enabled: false, http_port: 80, https_port: 443 },
      ssh: { enabled: false, port: 22, authorized_keys: [] },
    });
    // Another user's desktop is not the caller's to open.
    expect((await call(user, 'GET', `/desktop/bastion/${otherDesktopId}`)).statusCode).toBe(403);
    // The schema validates the body.
    const bad = await call(user, 'PUT', `/desktop/bastion/${desktopId}`, {
      http: { enabled: true, http_port: 0, https_port: 443 },
      ssh: { enabled: true, port: 22, authorized_keys: [] },
    });
    expect(bad.statusCode).toBe(400);

    const update = await call(user, 'PUT', `/desktop/bastion/${desktopId}`, {
      http: { enabled: true, http_port: 8080, https_port: 8443 },
      ssh: { enabled: true, port: 2222, authorized_keys: [KEY] },
      domain: null,
    });
    expect(update.statusCode, update.body).toBe(200);
    const keys = await call(user, 'PUT', `/desktop/${desktopId}/bastion/authorized_keys`, {
      authorized_keys: [` ${KEY} `, 'ssh-rsa AAAAB3Nza second'],
    });
    expect(keys.statusCode, keys.body).toBe(200);
    const listed = (await call(user, 'GET', '/bastion_targets')).json<Bastion[]>();
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      id: target.id,
      enabled: true,
      http: { enabled: true, http_port: 8080, https_port: 8443 },
      ssh: { enabled: true, port: 2222, authorized_keys: [KEY, 'ssh-rsa AAAAB3Nza second'] },
      version: (target.version ?? 0) + 2,
    });
    expect(events.map((e) => e.name)).toEqual([
      'bastion.created',
      'bastion.updated',
      'bastion.updated',
    ]);
    // The keys need a target: a desktop never read has none.
    const none = await call(advanced, 'PUT', `/desktop/${otherDesktopId}/bastion/authorized_keys`, {
      authorized_keys: [KEY],
    });
    expect(none.statusCode).toBe(404);
  });

  it('sets a custom domain only after its CNAME names the target, once per domain', async () => {
    const { id } = (await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>();
    const put = (token: string, desktop: string, domain: string | null) =>
      call(token, 'PUT', `/desktop/${desktop}/bastion/domain`, { domain });
    const notFound = await put(user, desktopId, 'www.example.org');
    expect([notFound.statusCode, notFound.json().description_code]).toEqual([
      428,
      'bastion_domain_not_found',
    ]);
    cnames.set('www.example.org', ['someone-else.bastion.test']);
    expect((await put(user, desktopId, 'www.example.org')).json().description_code).toBe(
      'bastion_domain_mismatch',
    );
    cnames.set('www.example.org', [`${id}.${DOMAIN}.`]);
    expect((await put(user, desktopId, 'WWW.example.org')).statusCode).toBe(200);
    expect((await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>().domain).toBe(
      'www.example.org',
    );
    // Another target may not take it, nor the bastion domain itself.
    await call(advanced, 'GET', `/desktop/bastion/${otherDesktopId}`);
    expect((await put(advanced, otherDesktopId, 'www.example.org')).statusCode).toBe(409);
    expect((await put(advanced, otherDesktopId, DOMAIN)).json().description_code).toBe(
      'bastion_domain_already_exists',
    );

    // Without the right to custom domains: the call is refused and a full update clears it.
    await setBastion({ individual_domains: false });
    expect((await put(user, desktopId, null)).statusCode).toBe(403);
    const target = (await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>();
    await call(user, 'PUT', `/desktop/bastion/${desktopId}`, {
      http: target.http,
      ssh: target.ssh,
      domain: 'www.example.org',
    });
    expect((await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>().domain).toBe(
      null,
    );
    await setBastion({});
  });

  it('the HTTP bastion refuses targets it can not reach and leaves other hosts to the portal', async () => {
    const { id } = (await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>();
    const get = (host: string) => t.app.inject({ method: 'GET', url: '/', headers: { host } });
    const stopped = await get(`${id}.${DOMAIN}`);
    expect([stopped.statusCode, stopped.headers['x-bastion-refused']]).toEqual([
      503,
      'not_running',
    ]);
    expect(stopped.body).toContain('The desktop is not running.');
    const unknown = await get(`00000000-0000-4000-8000-000000000000.${DOMAIN}`);
    expect([unknown.statusCode, unknown.headers['x-bastion-refused']]).toEqual([404, 'no_target']);
    const target = (await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>();
    await call(user, 'PUT', `/desktop/bastion/${desktopId}`, {
      http: { ...target.http, enabled: false },
      ssh: target.ssh,
    });
    expect((await get(`${id}.${DOMAIN}`)).headers['x-bastion-refused']).toBe('disabled');
    const portal = await t.app.inject({
      method: 'GET',
      url: '/api/v3/user/config',
      headers: { host: 'portal.example.org' },
    });
    expect(portal.headers['x-bastion-refused']).toBeUndefined();
    expect(portal.statusCode).toBe(401);

    // HTTPS (passed through by SNI): no page without a certificate, the connection is closed.
    expect(t.app.bastionPorts.https).toBeGreaterThan(0);
    const closed = await new Promise<boolean>((resolve) => {
      const socket = tls.connect({
        host: '127.0.0.1',
        port: t.app.bastionPorts.https ?? 0,
        servername: `${id}.${DOMAIN}`,
        rejectUnauthorized: false,
      });
      socket.once('secureConnect', () => resolve(false));
      socket.once('error', () => resolve(true));
      socket.once('close', () => resolve(true));
    });
    expect(closed).toBe(true);
  });

  it('keeps a target through the recycle bin, and tells the owner when it leaves and returns', async () => {
    const desktopId = await addDesktop(t.app, await userRow(t.app, 'user'), 'In the bin');
    const { id } = (await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>();
    await call(user, 'PUT', `/desktop/${desktopId}/bastion/authorized_keys`, {
      authorized_keys: [KEY],
    });
    cnames.set('bin.example.org', [`${id}.${DOMAIN}`]);
    const domain = await call(user, 'PUT', `/desktop/${desktopId}/bastion/domain`, {
      domain: 'bin.example.org',
    });
    expect(domain.statusCode, domain.body).toBe(200);
    const before = (await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>();
    expect(before).toMatchObject({
      domain: 'bin.example.org',
      ssh: { authorized_keys: [KEY] },
    });
    const bastionEvents = () => events.splice(0).filter((e) => e.name.startsWith('bastion.'));
    events.length = 0;
    const entryOf = async () => {
      const [entry] = await t.app.database.query<{ id: string }>(
        `SELECT id FROM recycle_bin WHERE status = 'recycled' AND data->'desktops'->0->>'id' = $1`,
        [desktopId],
      );
      if (!entry) throw new Error('no recycle-bin entry');
      return entry.id;
    };

    // To the bin: the target goes with the desktop (`targets_delete`) ...
    expect((await call(user, 'DELETE', `/desktop/${desktopId}`)).statusCode).toBe(200);
    expect(bastionEvents()).toEqual([
      { name: 'bastion.deleted', payload: { id: before.id, version: (before.version ?? 0) + 1 } },
    ]);
    const listed = (await call(user, 'GET', '/bastion_targets')).json<Bastion[]>();
    expect(listed.map((b) => b.id)).not.toContain(before.id);
    // ... and comes back with it: same id, custom domain, keys and ports (`targets_add`).
    const restore = await call(user, 'PUT', `/recycle_bin/restore/${await entryOf()}`);
    expect(restore.statusCode, restore.body).toBe(200);
    expect((await call(user, 'GET', `/desktop/bastion/${desktopId}`)).json<Bastion>()).toEqual(
      before,
    );
    expect(bastionEvents()).toEqual([{ name: 'bastion.created', payload: before }]);
    expect((await t.app.bastion.byIdOrDomain({ domain: 'bin.example.org' }))?.id).toBe(before.id);

    // Deleted for good: announced as it leaves, and emptying the bin leaves nothing to restore.
    expect((await call(user, 'DELETE', `/desktop/${desktopId}`)).statusCode).toBe(200);
    expect(bastionEvents().map((e) => e.name)).toEqual(['bastion.deleted']);
    expect((await call(user, 'DELETE', '/recycle_bin/empty')).statusCode).toBe(200);
    expect(bastionEvents()).toEqual([]);
    expect(
      await t.app.database.query('SELECT id FROM bastion_targets WHERE id = $1', [before.id]),
    ).toEqual([]);
  });

  it('the SSH bastion answers clients that connect together before ssh2 is loaded, and refuses an unlisted key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ssh-bastion-'));
    const bastion = await startSshBastion(t.app, {
      host: '127.0.0.1',
      port: 0,
      hostKey: await sshKeyPair(join(dir, 'host'), 'host'),
      portalKey: await sshKeyPair(join(dir, 'portal'), 'portal'),
    });
    const { port } = bastion;
    const key = ssh2.utils.generateKeyPairSync('ed25519').private;
    const attempt = (username: string) =>
      new Promise<string>((resolve) => {
        const client = new ssh2.Client();
        client
          .on('ready', () => {
            resolve('signed in');
            client.end();
          })
          .on('error', (err: Error & { level?: string }) => resolve(err.level ?? err.message))
          .connect({ host: '127.0.0.1', port, username, privateKey: key, readyTimeout: 10_000 });
      });
    try {
      expect(await Promise.all([attempt(desktopId), attempt('nobody')])).toEqual([
        'client-authentication',
        'client-authentication',
      ]);
    } finally {
      await bastion.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the SSH bastion's sign-in to a guest", () => {
  it('is as the guest user with the portal key, then its password; root with the key alone when unset', () => {
    expect(guestLogin({ username: 'isard', password: 'pirineus' }, 'PORTAL KEY')).toEqual({
      username: 'isard',
      methods: [
        { type: 'publickey', username: 'isard', key: 'PORTAL KEY' },
        { type: 'password', username: 'isard', password: 'pirineus' },
      ],
    });
    expect(guestLogin({ username: '', password: 'pirineus' }, 'PORTAL KEY')).toEqual({
      username: 'root',
      methods: [{ type: 'publickey', username: 'root', key: 'PORTAL KEY' }],
    });
  });
});
