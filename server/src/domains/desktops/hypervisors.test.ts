/**
 * The hypervisor hosts through the portal, without a VM: their administration (the seeded host
 * local, the write-only SSH key, admins only), HYPERVISOR_URI's host, and on a host driven by the
 * fake driver a start placed there (pinned), a stop that reaches it, the host falling silent (its
 * desktop failed within 10 s, named; no start placed there) and the refusals of a cluster that
 * can not take a start.
 */
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditLog, hypervisors } from '../../platform/db/schema.ts';
import { createFakeDriver } from '../../platform/hypervisor/fake-driver.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { until } from '../../../test/support/wait.ts';
import { seedHosts, uriHostName, uriWithKey } from './hypervisors.ts';

const HOSTS = '/api/v3/admin/hypervisors';
const KEY = '/etc/vdi/keys/fake1';

describe('hypervisor hosts', () => {
  let t: TestApp;
  let admin: string;
  let user: string;
  const fake = createFakeDriver();

  const call = (
    token: string,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) => injectWithToken(t.app, token, { method, url, ...(payload ? { payload } : {}) });
  const action = (id: string, a: string) => call(user, 'GET', `/api/v3/desktop/${a}/${id}`);
  const rowOf = async (id: string) => t.app.desktops.byId(id);

  beforeAll(async () => {
    t = await buildTestApp(await createTestDatabase(), {
      prepareImages: true,
      shutdownGraceMs: 1000,
      // Capacities at face value (placement.test.ts covers the overcommit).
      memoryOvercommitPercent: 100,
    });
    admin = await login(t.app, 'admin');
    user = await login(t.app, 'user');
  });
  afterAll(async () => {
    await t.close();
  });

  it('lists the seeded host local, keeps the SSH key write-only, and lets only admins in', async () => {
    const list = await call(admin, 'GET', HOSTS);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual([
      expect.objectContaining({
        id: 'local',
        kind: 'local',
        uri: null,
        console_address: '127.0.0.1',
        enabled: true,
        running: 0,
      }),
    ]);
    expect((await call(user, 'GET', HOSTS)).statusCode).toBe(403);
    expect((await call(admin, 'DELETE', `${HOSTS}/local`)).json()).toMatchObject({
      description_code: 'hypervisor_local_not_deletable',
    });
    expect(
      (await call(admin, 'PUT', `${HOSTS}/local`, { uri: 'qemu:///system' })).json(),
    ).toMatchObject({ description_code: 'hypervisor_local_fixed' });

    const created = await call(admin, 'POST', HOSTS, {
      name: 'fake1',
      uri: 'qemu+ssh://vdi@192.0.2.1/system',
      ssh_key: KEY,
      vcpus: 4,
      memory_mib: 1024,
    });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json()).toEqual({ id: 'fake1' });
    t.app.hypervisor.use('fake1', fake);
    const shown = await call(admin, 'GET', `${HOSTS}/fake1`);
    // The consoles' address is by default the URI's host name (and follows a new URI).
    expect(shown.json()).toMatchObject({
      kind: 'libvirt',
      ssh_key_set: true,
      enabled: true,
      console_address: '192.0.2.1',
    });
    expect(uriHostName('qemu+ssh://vdi@[2001:db8::5]:2222/system?no_verify=1')).toBe('2001:db8::5');
    expect(uriHostName('qemu:///session')).toBe('127.0.0.1');
    const answers = [shown.body, (await call(admin, 'GET', HOSTS)).body];
    const audit = await t.app.db.select().from(auditLog).where(eq(auditLog.targetId, 'fake1'));
    expect(audit).toHaveLength(1);
    for (const text of [...answers, JSON.stringify(audit)]) expect(text).not.toContain(KEY);
    await call(admin, 'PUT', `${HOSTS}/fake1`, { uri: 'qemu+ssh://vdi@192.0.2.9/system' });
    expect((await call(admin, 'GET', `${HOSTS}/fake1`)).json()).toMatchObject({
      console_address: '192.0.2.9',
    });
    expect(
      (
        await call(admin, 'POST', HOSTS, {
          name: 'fake1',
          uri: 'qemu:///system',
          vcpus: 1,
          memory_mib: 512,
        })
      ).json(),
    ).toMatchObject({ description_code: 'hypervisor_exists' });
    // The key file joins the URI the driver connects with.
    expect(uriWithKey('qemu+ssh://vdi@h/system?no_verify=1&keyfile=/old', KEY)).toBe(
      `qemu+ssh://vdi@h/system?keyfile=${KEY}&no_verify=1`,
    );
  });

  it('places a pinned start on its host, stops it there, and fails it within 10 s when the host falls silent (not at one late answer)', async () => {
    await until(
      async () => (await call(admin, 'GET', `${HOSTS}/fake1`)).json<{ last_seen: number | null }>(),
      (h) => h.last_seen !== null,
    );
    const created = await call(user, 'POST', '/api/v3/persistent_desktop', {
      template_id: 'demo-template',
      name: 'On fake1',
      hardware: { memory: 0.5, vcpus: 1 },
    });
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json<{ id: string }>();
    await until(
      () => rowOf(id),
      (r) => r?.state === 'stopped',
    );
    // Only an admin pins a desktop; local has more memory free, the pin wins.
    expect(
      (await call(user, 'PUT', `/api/v3/domain/${id}`, { forced_hyp: 'fake1' })).statusCode,
    ).toBe(403);
    expect(
      (await call(admin, 'PUT', `/api/v3/domain/${id}`, { forced_hyp: 'nowhere' })).json(),
    ).toMatchObject({ description_code: 'hypervisor_not_found' });
    expect(
      (await call(admin, 'PUT', `/api/v3/domain/${id}`, { forced_hyp: 'fake1' })).statusCode,
    ).toBe(200);

    expect((await action(id, 'start')).statusCode).toBe(200);
    const started = await until(
      () => rowOf(id),
      (r) => r?.state === 'started',
    );
    expect(started?.runtime).toMatchObject({ host: 'fake1' });
    expect(fake.domains.has(id)).toBe(true);
    expect((await call(admin, 'GET', `${HOSTS}/fake1`)).json()).toMatchObject({
      running: 1,
      running_memory_mib: 512,
    });
    expect((await call(admin, 'DELETE', `${HOSTS}/fake1`)).json()).toMatchObject({
      description_code: 'hypervisor_has_desktops',
    });

    expect((await action(id, 'stop')).statusCode).toBe(200);
    await until(
      () => rowOf(id),
      (r) => r?.state === 'stopped',
    );
    expect(fake.domains.has(id)).toBe(false);

    expect((await action(id, 'start')).statusCode).toBe(200);
    await until(
      () => rowOf(id),
      (r) => r?.state === 'started',
    );
    // One probe answered late (a host busy creating a class's domains) fails nothing; a second
    // late one in a row does. The probe's time-out is 4 s, a round every 2 s.
    fake.pingDelayMs = 5_000;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect((await rowOf(id))?.state).toBe('started');
    const late = await until(
      () => rowOf(id),
      (r) => r?.state === 'failed',
      15_000,
    );
    expect(late?.detail).toContain('fake1');
    fake.pingDelayMs = 0;
    // Back: its domain still runs there, so the desktop is adopted as started.
    await until(
      () => rowOf(id),
      (r) => r?.state === 'started',
      15_000,
    );
    fake.unreachable = true;
    const silent = Date.now();
    const failed = await until(
      () => rowOf(id),
      (r) => r?.state === 'failed',
      10_000,
    );
    expect(Date.now() - silent).toBeLessThan(10_000);
    expect(failed?.detail).toContain('fake1');
    // A failed desktop is retried (its disk verified) before it starts again.
    expect((await action(id, 'updating')).statusCode).toBe(200);
    await until(
      () => rowOf(id),
      (r) => r?.state === 'stopped',
    );
    expect((await action(id, 'start')).json()).toMatchObject({
      description_code: 'hypervisor_forced_unavailable',
    });

    // Unpinned, with local disabled and fake1 silent: no host; fake1 back but too small: full.
    await call(admin, 'PUT', `/api/v3/domain/${id}`, { forced_hyp: null });
    await call(admin, 'PUT', `${HOSTS}/local`, { enabled: false });
    const refused = await action(id, 'start');
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toMatchObject({ description_code: 'hypervisors_not_available' });
    fake.unreachable = false;
    // Back, the host stops the domain it kept of the failed desktop.
    await until(
      async () => fake.domains.has(id),
      (running) => !running,
    );
    await call(admin, 'PUT', `${HOSTS}/fake1`, { memory_mib: 256 });
    const seen = Date.now() / 1000;
    await until(
      async () => (await call(admin, 'GET', `${HOSTS}/fake1`)).json<{ last_seen: number }>(),
      (h) => h.last_seen >= seen - 1,
    );
    expect((await action(id, 'start')).json()).toMatchObject({
      description_code: 'hypervisors_full',
    });
    expect((await rowOf(id))?.state).toBe('stopped');
  });

  it('adopts, on a host that answers again, the domains it still runs; the others settle stopped', async () => {
    await call(admin, 'PUT', `${HOSTS}/fake1`, { memory_mib: 65_536 });
    const ids: string[] = [];
    for (const name of ['Kept', 'Lost']) {
      const created = await call(user, 'POST', '/api/v3/persistent_desktop', {
        template_id: 'demo-template',
        name,
        hardware: { memory: 0.5, vcpus: 1 },
      });
      const { id } = created.json<{ id: string }>();
      await until(
        () => rowOf(id),
        (r) => r?.state === 'stopped',
      );
      await call(admin, 'PUT', `/api/v3/domain/${id}`, { forced_hyp: 'fake1' });
      await until(
        async () => (await action(id, 'start')).statusCode,
        (status) => status === 200,
      );
      ids.push(id);
    }
    const [kept = '', lost = ''] = ids;
    for (const id of ids)
      await until(
        () => rowOf(id),
        (r) => r?.state === 'started',
      );
    const runtime = (await rowOf(kept))?.runtime;
    fake.unreachable = true;
    for (const id of ids)
      await until(
        () => rowOf(id),
        (r) => r?.state === 'failed',
        10_000,
      );
    // While the host is silent, one of its domains ends.
    fake.guestPowerOff(lost);
    fake.unreachable = false;
    const back = await until(
      () => rowOf(kept),
      (r) => r?.state === 'started',
    );
    expect(back?.runtime).toMatchObject({ ...runtime, host: 'fake1' });
    expect(back?.detail).toBeNull();
    expect(fake.domains.has(kept)).toBe(true);
    await until(
      () => rowOf(lost),
      (r) => r?.state === 'stopped',
    );
    expect(fake.domains.has(lost)).toBe(false);
  });

  it('seeds the host of HYPERVISOR_URI and keeps it at that URI', async () => {
    await seedHosts(t.app.db, 'qemu:///session');
    await seedHosts(t.app.db, 'qemu:///system');
    const [row] = await t.app.db
      .select()
      .from(hypervisors)
      .where(eq(hypervisors.id, 'hypervisor-uri'));
    expect(row).toMatchObject({ uri: 'qemu:///system', enabled: true });
  });
});
