/**
 * A desktop through the portal on a libvirt host the admin adds (its URI and SSH key file): placement
 * chooses it over the host local (it has more memory free), and the demo template's desktop runs
 * there as a domain of a test user's session daemon, reached over SSH on loopback as a remote host
 * would be, answers on VNC, gives its screen, and its stop reaches it. The host's console address
 * is a second loopback address (127.0.0.2, not the URI's 127.0.0.1): its consoles listen there and
 * the portal's VNC proxy and SPICE tunnel reach them there. When the host falls silent (its sshd
 * and connections end) the desktop turns failed, naming the host, while its domain keeps running;
 * when the host answers again the domain is adopted: the desktop is started again, its console
 * open through the proxy as before. Its disk is a volume of hostA's storage pool: the first start
 * makes it there (the template copied into the pool with its progress on the card, the desktop's
 * overlay made on the host) and removes the portal's file. Stopped, an admin moves it to hostB (a
 * second user's daemon, its pool in another directory): the volume is copied between the pools
 * with its progress on the card, and its next start boots there. Its size counts from the volume.
 * Its ISO and floppy (files of the portal) reach each host it starts on as volumes of that host's
 * pool, their upload's progress on the card. Stopped there, it becomes a template: its volume's
 * chain downloaded into the portal's template store and flattened, with progress. Its network card
 * is user-mode there (the session daemon may not plug into the host's bridge).
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { connect } from 'node:net';
import { eq } from 'drizzle-orm';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktops, hypervisors } from '../../platform/db/schema.ts';
import { addMedia, userRow } from '../../../test/support/fixtures.ts';
import {
  ensureTestUser,
  sessionDomainPid,
  sessionDomainXml,
  startSshTestHost,
  type SshTestHost,
  type TestHostUser,
} from '../../platform/hypervisor/libvirt-test-host.ts';
import { mediaVolume, templateVolume } from '../../platform/hypervisor/host-volumes.ts';
import { macFor } from '../../platform/hypervisor/qemu-network.ts';
import { checkDisks } from '../storage/index.ts';
import { isBlankScreen, isPng } from '../../platform/hypervisor/png.ts';
import { listenAddresses, readRfbBanner } from '../../platform/hypervisor/test-support.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const until = untilWithin(30_000);

describe('desktops on a libvirt host added as a hypervisor (over SSH)', () => {
  let user: TestHostUser;
  let host: SshTestHost;
  let userB: TestHostUser;
  let hostB: SshTestHost;
  /** The copy progress (percent) each desktop's card was sent: its disk's, its media's. */
  const copied = new Map<string, number[]>();
  const copiedMedia = new Map<string, number[]>();
  /** The percents of template copies pushed. */
  const templatePercents: number[] = [];
  /** An ISO and a floppy image the portal keeps. */
  let mediaFiles: string[] = [];
  let t: TestApp;
  let token: string;
  let wsBase: string;

  const stateOf = async (id: string) => (await t.app.desktops.byId(id))?.state;
  const action = (id: string, a: string) =>
    injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/desktop/${a}/${id}` });

  /** The first bytes of the desktop's VNC through the portal's websocket proxy. */
  const bannerThroughProxy = async (id: string): Promise<string> => {
    const viewer = await injectWithToken(t.app, token, {
      method: 'GET',
      url: `/api/v3/desktop/${id}/viewer/browser-vnc`,
    });
    expect(viewer.statusCode, viewer.body).toBe(200);
    const url = `${wsBase}${viewer.json<{ url: string }>().url}`;
    const ws = new WebSocket(url, { headers: { origin: wsBase.replace('ws', 'http') } });
    try {
      return await new Promise<string>((resolve, reject) => {
        ws.once('message', (data: Buffer) => resolve(data.toString('latin1')));
        ws.once('unexpected-response', (_req, res) => reject(new Error(`${res.statusCode}`)));
        ws.once('error', reject);
      });
    } finally {
      ws.terminate();
    }
  };

  /** The magic of the SPICE link answer through the portal's CONNECT tunnel (its .vv credential). */
  const spiceThroughTunnel = async (id: string): Promise<string> => {
    const vv = await injectWithToken(t.app, token, {
      method: 'GET',
      url: `/api/v3/desktop/${id}/viewer/file-spice`,
    });
    expect(vv.statusCode, vv.body).toBe(200);
    const content = vv.json<{ content: string }>().content;
    const proxy = new URL(/^proxy=(.*)$/m.exec(content)?.[1] ?? '');
    const target = `127.0.0.1:${/^port=(\d+)$/m.exec(content)?.[1] ?? ''}`;
    const auth = Buffer.from(
      `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`,
    ).toString('base64');
    const socket = connect(Number(new URL(wsBase).port), '127.0.0.1');
    try {
      socket.write(
        `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\nProxy-Authorization: Basic ${auth}\r\n\r\n`,
      );
      // A SPICE link message (magic REDQ, version 2.2, no channels or capabilities).
      const link = Buffer.alloc(16 + 18);
      link.write('REDQ', 0, 'latin1');
      link.writeUInt32LE(2, 4);
      link.writeUInt32LE(2, 8);
      link.writeUInt32LE(18, 12);
      link.writeUInt8(1, 20); // main channel
      link.writeUInt32LE(18, 30);
      let got = '';
      return await new Promise<string>((resolve, reject) => {
        socket.on('data', (chunk: Buffer) => {
          got += chunk.toString('latin1');
          const head = got.indexOf('\r\n\r\n');
          if (head < 0) return;
          if (!got.startsWith('HTTP/1.1 200')) return reject(new Error(got.split('\r\n')[0]));
          if (got.length === head + 4) return void socket.write(link);
          if (got.length >= head + 8) resolve(got.slice(head + 4, head + 8));
        });
        socket.once('error', reject);
      });
    } finally {
      socket.destroy();
    }
  };

  beforeAll(async () => {
    user = ensureTestUser('vdi-hv-a');
    userB = ensureTestUser('vdi-hv-b');
    [host, hostB] = await Promise.all([startSshTestHost(user), startSshTestHost(userB)]);
    t = await buildTestApp(await createTestDatabase(), {
      prepareImages: true,
      shutdownGraceMs: 1000,
      hypervisorDiskOwner: { uid: user.uid, gid: user.gid },
    });
    // The session daemon's QEMU runs as the test user: it walks into DATA_DIR to the disks.
    chmodSync(t.config.dataDir, 0o755);
    await t.app.engine.reconcile();
    token = await login(t.app, 'user');
    t.app.events.subscribe((event) => {
      const d = event.payload as {
        id?: string;
        queue?: { event?: string; percent?: number } | null;
      };
      const percentage = (event.payload as { progress?: { percentage?: number } | null }).progress
        ?.percentage;
      if (event.name === 'templates.updated' && typeof percentage === 'number')
        templatePercents.push(percentage);
      const seen = d.queue?.event === 'copy_media' ? copiedMedia : copied;
      if (d.id && typeof d.queue?.percent === 'number')
        seen.set(d.id, [...(seen.get(d.id) ?? []), d.queue.percent]);
    });
    // The key file leaves the URI: the host's SSH key is its own (write-only) field. Placement
    // prefers hostA (more memory free).
    const admin = await login(t.app, 'admin');
    for (const [name, h, address, memory] of [
      ['hostA', host, '127.0.0.2', 67_108_864],
      ['hostB', hostB, '127.0.0.1', 4096],
    ] as const) {
      const keyfile = /keyfile=([^&]+)&?/.exec(h.uri);
      const added = await injectWithToken(t.app, admin, {
        method: 'POST',
        url: '/api/v3/admin/hypervisors',
        payload: {
          name,
          uri: h.uri.replace(keyfile?.[0] ?? '', ''),
          ssh_key: keyfile?.[1],
          console_address: address,
          vcpus: 2,
          memory_mib: memory,
        },
      });
      expect(added.statusCode, added.body).toBe(200);
    }
    await until(
      async () => (await t.app.db.select().from(hypervisors)).filter((h) => h.lastSeen !== null),
      (seen) => seen.length === 3,
    );
    wsBase = (await t.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
    const mediaDir = join(t.config.dataDir, 'test-media');
    mkdirSync(mediaDir, { recursive: true });
    mediaFiles = [join(mediaDir, 'tools.iso'), join(mediaDir, 'drivers.img')];
    writeFileSync(mediaFiles[0] ?? '', Buffer.alloc(64 * 2048, 1));
    writeFileSync(mediaFiles[1] ?? '', Buffer.alloc(1_474_560));
    const owner = await userRow(t.app, 'user');
    await addMedia(t.app, owner, { id: 'tools-iso', kind: 'iso', path: mediaFiles[0] ?? '' });
    await addMedia(t.app, owner, { id: 'drivers-fd', kind: 'floppy', path: mediaFiles[1] ?? '' });
  });
  afterAll(async () => {
    // What this run left on the hosts goes with it, also when a test failed half way: its domains,
    // its desktops' volumes and the template volumes it copied into the pools.
    for (const d of await t.app.db.select().from(desktops)) {
      await t.app.hypervisor.stop(d.id).catch(() => undefined);
      if (d.diskPath) await t.app.hypervisor.deleteDisk(d.diskPath).catch(() => undefined);
    }
    const template = (await t.app.templates.get('demo-template'))?.diskPath ?? '';
    const copies = [templateVolume(template), ...mediaFiles.map(mediaVolume)];
    for (const id of ['hostA', 'hostB'])
      for (const volume of copies)
        await t.app.hypervisor
          .driverOf(id)
          ?.volumes?.remove(volume)
          .catch(() => undefined);
    await t.close();
    await Promise.all([host.stop(), hostB.stop()]);
  });

  it('starts the demo desktop as a libvirt domain, shows its screen, and stops it', async () => {
    const created = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/api/v3/persistent_desktop',
      payload: {
        template_id: 'demo-template',
        name: 'On libvirt',
        hardware: { memory: 0.5, vcpus: 1 },
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json<{ id: string }>();
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );

    const portalDisk = (await t.app.desktops.byId(id))?.diskPath ?? '';
    expect(existsSync(portalDisk)).toBe(true);
    const hardware = (await t.app.desktops.byId(id))?.hardware;
    await t.app.db
      .update(desktops)
      .set({
        hardware: { ...hardware, isos: [{ id: 'tools-iso' }], floppies: [{ id: 'drivers-fd' }] },
      })
      .where(eq(desktops.id, id));
    const t0 = Date.now();
    expect((await action(id, 'start')).statusCode).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'started' || s === 'failed',
    );
    const row = await t.app.desktops.byId(id);
    expect(row?.state, row?.detail ?? '').toBe('started');
    expect(row?.runtime).toMatchObject({ host: 'hostA' });
    console.log(`[measure] libvirt desktop: start to started ${Date.now() - t0} ms`);
    // Its disk is now a volume of hostA's pool: an overlay made there on the template's volume,
    // which came with its progress on the card; the portal's file is gone.
    expect(row?.diskPath).toBe(join(t.config.dataDir, 'hosts', 'hostA', 'disks', `${id}.qcow2`));
    expect(existsSync(portalDisk)).toBe(false);
    expect(copied.get(id)?.at(-1)).toBe(100);
    const volumeA = await t.app.hypervisor.diskInfo(row?.diskPath ?? '');
    expect(basename(volumeA.backingFile ?? '')).toMatch(/^tpl-[0-9a-f]{10}-/);
    const poolA = dirname(volumeA.backingFile ?? '');
    expect(poolA.startsWith(user.home)).toBe(true);
    // Its ISO and floppy are volumes of hostA's pool, uploaded with their progress on the card.
    const mediaOn = (u: TestHostUser, pool: string) => {
      const xml = sessionDomainXml(u, `vdi-${id}`);
      return mediaFiles.map((file) => xml.includes(`file='${pool}/${mediaVolume(file)}'`));
    };
    expect(mediaOn(user, poolA)).toEqual([true, true]);
    expect(copiedMedia.get(id)?.at(-1)).toBe(100);
    // Its card on the NAT network: user-mode, as this host's session daemon may not plug into a
    // bridge (its qemu-bridge-helper is not setuid), with the desktop's MAC.
    expect(sessionDomainXml(user, `vdi-${id}`)).toMatch(
      new RegExp(`<interface type='user'>\\s*<mac address='${macFor(id, 0)}'/>`),
    );
    // the domain runs under the test user's daemon, its console on loopback with a password
    expect(sessionDomainPid(user, `vdi-${id}`)).toBeGreaterThan(0);
    const rt = row?.runtime as { vncPort: number; vncPassword: string };
    expect(rt.vncPassword).toHaveLength(8);
    expect(rt).toMatchObject({ consoleHost: '127.0.0.2' });
    expect(listenAddresses(rt.vncPort)).toEqual(['127.0.0.2']);
    expect(await readRfbBanner(rt.vncPort, 5000, '127.0.0.2')).toBe('RFB 003.008\n');
    expect(await bannerThroughProxy(id)).toBe('RFB 003.008\n');
    expect(await spiceThroughTunnel(id)).toBe('REDQ');
    const shot = await until(
      () => t.app.hypervisor.screenshot(id),
      (png) => isPng(png) && !isBlankScreen(png),
    );
    expect(isPng(shot)).toBe(true);

    // The host falls silent: failed, named, within 10 s; its domain runs on.
    const pid = sessionDomainPid(user, `vdi-${id}`);
    await host.down();
    const silent = Date.now();
    const failed = await until(
      () => t.app.desktops.byId(id),
      (r) => r?.state === 'failed',
      10_000,
    );
    expect(failed?.detail).toContain('hostA');
    console.log(`[measure] libvirt desktop: silent host to failed ${Date.now() - silent} ms`);
    expect(sessionDomainPid(user, `vdi-${id}`)).toBe(pid);
    // It answers again: the running domain is adopted, its console reached as before.
    await host.up();
    const back = await until(
      () => t.app.desktops.byId(id),
      (r) => r?.state === 'started',
    );
    expect(back?.runtime).toMatchObject({ host: 'hostA', vncPort: rt.vncPort });
    expect(back?.detail).toBeNull();
    expect(await bannerThroughProxy(id)).toBe('RFB 003.008\n');

    // Stop: the ACPI button (the demo guest ignores it), then destroyed after the grace.
    expect((await action(id, 'stop')).statusCode).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
    expect(await t.app.hypervisor.status(id)).toBe('absent');
    expect(sessionDomainPid(user, `vdi-${id}`)).toBe(0);
    expect(await t.app.hypervisor.lastExit(id)).toMatchObject({ expected: true });

    // Moved (admins only) to hostB: the volume copied from hostA's pool into hostB's (another
    // directory), its progress on the card, hostA's volume removed; the next start boots there.
    const before = (await t.app.desktops.byId(id))?.diskPath ?? '';
    const move = (tok: string) =>
      injectWithToken(t.app, tok, {
        method: 'POST',
        url: `/api/v3/desktop/${id}/move`,
        payload: { host: 'hostB' },
      });
    expect((await move(token)).statusCode).toBe(403);
    copied.delete(id);
    const moved = await move(await login(t.app, 'admin'));
    expect(moved.statusCode, moved.body).toBe(200);
    const after = await t.app.desktops.byId(id);
    expect(after).toMatchObject({ state: 'stopped', forcedHyp: 'hostB', queue: null });
    expect(after?.diskPath).toBe(
      join(t.config.dataDir, 'hosts', 'hostB', 'disks', basename(before)),
    );
    expect(copied.get(id)?.at(-1)).toBe(100);
    await expect(t.app.hypervisor.diskInfo(before)).rejects.toMatchObject({
      code: 'disk_not_found',
    });
    const volumeB = await t.app.hypervisor.diskInfo(after?.diskPath ?? '');
    expect(dirname(volumeB.backingFile ?? '')).not.toBe(poolA);
    expect(volumeB.backingFile?.startsWith(userB.home)).toBe(true);
    // The storage quota reads the volume's size from its host; a disk increase grows the volume.
    const sizeOf = async () =>
      (await t.app.storageService.sizes.read(after?.diskPath ?? ''))?.virtualSize;
    expect(await sizeOf()).toBe(volumeB.virtualSize);
    const grown = await injectWithToken(t.app, token, {
      method: 'PUT',
      url: `/api/v3/storage/${id}/priority/low/increase/1`,
    });
    expect(grown.statusCode, grown.body).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
    expect(await sizeOf()).toBeGreaterThan(volumeB.virtualSize);
    // The boot disk check leaves a disk kept on a host to its host (no portal file to find).
    expect((await checkDisks(t.app)).failedDesktops).not.toContain(id);
    expect(await stateOf(id)).toBe('stopped');
    expect((await action(id, 'start')).statusCode).toBe(200);
    const again = await until(
      () => t.app.desktops.byId(id),
      (r) => r?.state === 'started' || r?.state === 'failed',
    );
    expect(again?.state, again?.detail ?? '').toBe('started');
    expect(again?.runtime).toMatchObject({ host: 'hostB' });
    expect(sessionDomainPid(userB, `vdi-${id}`)).toBeGreaterThan(0);
    expect(mediaOn(userB, dirname(volumeB.backingFile ?? ''))).toEqual([true, true]);

    // Stopped (forced), it becomes a template: its volume's chain downloaded from hostB's pool
    // into the portal's template store and flattened there, with progress; nothing else stays.
    expect((await action(id, 'stop')).statusCode).toBe(200);
    expect((await action(id, 'stop')).statusCode).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
    const made = await injectWithToken(t.app, await login(t.app, 'admin'), {
      method: 'POST',
      url: '/api/v3/template',
      payload: { desktop_id: id, name: 'From hostB' },
    });
    expect(made.statusCode, made.body).toBe(200);
    const template = await until(
      () => t.app.templates.get(made.json<{ id: string }>().id),
      (row) => row?.status === 'ready' || row?.status === 'failed',
    );
    expect(template?.status, template?.detail ?? '').toBe('ready');
    expect(await t.app.hypervisor.diskInfo(template?.diskPath ?? '')).toMatchObject({
      backingFile: null,
      virtualSize: (await t.app.hypervisor.diskInfo(after?.diskPath ?? '')).virtualSize,
    });
    expect(templatePercents).toContain(100);
    expect(
      readdirSync(dirname(template?.diskPath ?? '')).filter((f) => /\.(chain-\d+|part)$/.test(f)),
    ).toEqual([]);
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );

    // Deleted to the recycle bin, then emptied from it: the volume goes from hostB's pool.
    const del = await injectWithToken(t.app, token, {
      method: 'DELETE',
      url: `/api/v3/desktop/${id}`,
    });
    expect(del.statusCode, del.body).toBe(200);
    const [entry] = await t.app.database.query<{ id: string }>(
      "SELECT id FROM recycle_bin WHERE data->'desktops'->0->>'id' = $1",
      [id],
    );
    const emptied = await injectWithToken(t.app, token, {
      method: 'DELETE',
      url: `/api/v3/recycle_bin/${entry?.id ?? ''}`,
    });
    expect(emptied.statusCode, emptied.body).toBe(200);
    await until(
      () =>
        t.app.hypervisor.diskInfo(after?.diskPath ?? '').then(
          () => 'there',
          () => 'gone',
        ),
      (s) => s === 'gone',
    );
  });
});
