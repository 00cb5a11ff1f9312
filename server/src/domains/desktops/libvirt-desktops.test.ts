/**
 * A desktop through the portal on a libvirt host the admin adds (its URI and SSH key file): placement
 * chooses it over the host local (it has more memory free), and the demo template's desktop runs
 * there as a domain of a test user's session daemon, reached over SSH on loopback as a remote host
 * would be, answers on VNC, gives its screen, and its stop reaches it.
 */
import { chmodSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktops, hypervisors } from '../../platform/db/schema.ts';
import {
  ensureTestUser,
  sessionDomainPid,
  startSshTestHost,
  type SshTestHost,
  type TestHostUser,
} from '../../platform/hypervisor/libvirt-test-host.ts';
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
  let t: TestApp;
  let token: string;

  const stateOf = async (id: string) => (await t.app.desktops.byId(id))?.state;
  const action = (id: string, a: string) =>
    injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/desktop/${a}/${id}` });

  beforeAll(async () => {
    user = ensureTestUser('vdi-hv-a');
    host = await startSshTestHost(user);
    t = await buildTestApp(await createTestDatabase(), {
      prepareImages: true,
      shutdownGraceMs: 1000,
      hypervisorDiskOwner: { uid: user.uid, gid: user.gid },
    });
    // The session daemon's QEMU runs as the test user: it walks into DATA_DIR to the disks.
    chmodSync(t.config.dataDir, 0o755);
    await t.app.engine.reconcile();
    token = await login(t.app, 'user');
    // The key file leaves the URI: the host's SSH key is its own (write-only) field.
    const keyfile = /keyfile=([^&]+)&?/.exec(host.uri);
    const added = await injectWithToken(t.app, await login(t.app, 'admin'), {
      method: 'POST',
      url: '/api/v3/admin/hypervisors',
      payload: {
        name: 'hostA',
        uri: host.uri.replace(keyfile?.[0] ?? '', ''),
        ssh_key: keyfile?.[1],
        vcpus: 2,
        memory_mib: 67_108_864,
      },
    });
    expect(added.statusCode, added.body).toBe(200);
    await until(
      async () => (await t.app.db.select().from(hypervisors)).find((h) => h.id === 'hostA'),
      (h) => h?.lastSeen !== null,
    );
  });
  afterAll(async () => {
    for (const d of await t.app.db.select().from(desktops))
      await t.app.hypervisor.stop(d.id).catch(() => undefined);
    await t.close();
    await host.stop();
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
    // the domain runs under the test user's daemon, its console on loopback with a password
    expect(sessionDomainPid(user, `vdi-${id}`)).toBeGreaterThan(0);
    const rt = row?.runtime as { vncPort: number; vncPassword: string };
    expect(rt.vncPassword).toHaveLength(8);
    expect(await readRfbBanner(rt.vncPort)).toBe('RFB 003.008\n');
    expect(listenAddresses(rt.vncPort)).toEqual(['127.0.0.1']);
    const shot = await until(
      () => t.app.hypervisor.screenshot(id),
      (png) => isPng(png) && !isBlankScreen(png),
    );
    expect(isPng(shot)).toBe(true);

    // Stop: the ACPI button (the demo guest ignores it), then destroyed after the grace.
    expect((await action(id, 'stop')).statusCode).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
    expect(await t.app.hypervisor.status(id)).toBe('absent');
    expect(sessionDomainPid(user, `vdi-${id}`)).toBe(0);
    expect(await t.app.hypervisor.lastExit(id)).toMatchObject({ expected: true });
  });
});
