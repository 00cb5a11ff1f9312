/**
 * The Hypervisors administration, generated from the schema: the admin finds the seeded host
 * local in the list, adds a libvirt host through the generated form (its SSH key file never shown
 * back), and deletes it from the row's menu. No VM is started.
 *
 * Then a class on two libvirt hosts (real libvirt: two local users' session daemons, each behind
 * its own sshd on loopback as a remote host would be; TCG, the demo guest idling in GRUB): the
 * admin adds both hosts in the generated form; `teacher`'s deployment for Class B (12 students
 * and the teacher) is started at once and spread over both hosts, the admin's host list shows the
 * split and the videowall one live frame per desktop. Host B falls silent (its sshd ends): its
 * desktops turn failed naming it within 10 s while A's keep running; it answers again: its
 * domains are adopted, and a start goes there. A stopped desktop of A is moved to B (its disk
 * copied between the pools) and boots there. Every guest it started is destroyed at the end, and
 * the volumes it left in the hosts' pools removed.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { APIRequestContext, Page } from '@playwright/test';
import {
  ensureTestUser,
  startSshTestHost,
  type SshTestHost,
} from '../../server/src/platform/hypervisor/libvirt-test-host';
import { templateVolume } from '../../server/src/platform/hypervisor/host-volumes';
import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';

test('the admin adds a libvirt host in the generated form and deletes it; local stays', async ({
  page,
  portal,
}) => {
  const name = `e2e-${randomUUID().slice(0, 6)}`;
  const key = `/etc/vdi/keys/${name}`;
  await loginUi(page, 'admin');
  await page.getByRole('link', { name: 'Hypervisors' }).click();
  await expect(page).toHaveURL(/\/admin\/hypervisors$/);
  await expect(page.getByTestId('record').filter({ hasText: 'local' }).first()).toBeVisible();

  await page.getByTestId('resource-create').click();
  await page.getByRole('textbox', { name: /^Name/ }).fill(name);
  await page.getByRole('textbox', { name: /^Libvirt URI/ }).fill('qemu+ssh://vdi@192.0.2.7/system');
  await page.getByLabel(/^SSH key file/).fill(key);
  await page.getByRole('textbox', { name: /^vCPUs/ }).fill('8');
  await page.getByRole('textbox', { name: /^Memory \(MiB\)/ }).fill('16384');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/hypervisors$/);
  const row = page.getByTestId('record').filter({ hasText: name });
  await expect(row).toContainText('16,384');
  await expect(page.locator('body')).not.toContainText(key);

  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const shown = await admin.get(`/api/v3/admin/hypervisors/${name}`);
  expect(await shown.json()).toMatchObject({ ssh_key_set: true, vcpus: 8, memory_mib: 16384 });
  expect(await shown.text()).not.toContain(key);

  // Deleted from the row's menu, after a confirmation (the admin lists have no live events: the
  // list shows it once read again).
  await row.getByTestId('record-more').click();
  await page.locator('[data-action="delete"]').click();
  await page.getByTestId('confirm-action').click();
  await expect
    .poll(async () => (await admin.get(`/api/v3/admin/hypervisors/${name}`)).status())
    .toBe(404);
  await admin.dispose();
  await page.reload();
  await expect(page.getByTestId('record').filter({ hasText: 'local' }).first()).toBeVisible();
  await expect(row).toHaveCount(0);
});

interface ClassDesktop {
  id: string;
  user_name?: string | null;
  state: string;
}
interface HostRow {
  id: string;
  name: string;
  running: number;
  last_seen: number | null;
}

const POLL = { intervals: [250] };

test('a class spread over two libvirt hosts; host B fails, returns, and takes a moved desktop', async ({
  page,
  portal,
}) => {
  test.setTimeout(300_000);
  const tag = randomUUID().slice(0, 6);
  const names = { a: `hv-a-${tag}`, b: `hv-b-${tag}` };
  const hosts: SshTestHost[] = [];
  let deployment = '';
  let teacher: APIRequestContext | undefined;
  let admin: APIRequestContext | undefined;
  try {
    // Users of their own, so the server tests' hosts (vdi-hv-a, vdi-hv-b) are never touched.
    hosts.push(
      ...(await Promise.all(
        ['vdi-hv-c', 'vdi-hv-d'].map((user) => startSshTestHost(ensureTestUser(user))),
      )),
    );
    const [hostA, hostB] = hosts as [SshTestHost, SshTestHost];
    admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
    teacher = await apiAs(portal.url, await apiToken(portal.url, 'teacher'));

    // The admin adds both hosts in the generated form. B has room for half a desktop more, so
    // placement alternates and a start after one of B's desktops stopped goes to B.
    await loginUi(page, 'admin');
    await page.getByRole('link', { name: 'Hypervisors' }).click();
    for (const [name, host, memory] of [
      [names.a, hostA, 262_144],
      [names.b, hostB, 262_400],
    ] as const) {
      const key = /keyfile=([^&]+)/.exec(host.uri)?.[1] ?? '';
      await page.getByTestId('resource-create').click();
      await page.getByRole('textbox', { name: /^Name/ }).fill(name);
      await page
        .getByRole('textbox', { name: /^Libvirt URI/ })
        .fill(host.uri.replace(/keyfile=[^&]+&?/, ''));
      await page.getByLabel(/^SSH key file/).fill(key);
      await page.getByRole('textbox', { name: /^vCPUs/ }).fill('64');
      await page.getByRole('textbox', { name: /^Memory \(MiB\)/ }).fill(String(memory));
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await expect(page).toHaveURL(/\/admin\/hypervisors$/);
    }
    const hostRows = async () => {
      const res = await admin?.get('/api/v3/admin/hypervisors');
      const rows = ((await res?.json()) ?? []) as HostRow[];
      return { a: rows.find((h) => h.name === names.a), b: rows.find((h) => h.name === names.b) };
    };
    await expect
      .poll(
        async () => {
          const { a, b } = await hostRows();
          return Boolean(a?.last_seen && b?.last_seen);
        },
        { timeout: 30_000, ...POLL },
      )
      .toBe(true);

    // The teacher's deployment for Class B, started at once: it spreads over both hosts.
    const created = await teacher.post('/api/v3/deployments', {
      data: {
        name: `e2e-hosts-${tag}`,
        desktop_name: `Hosts ${tag}`,
        template_id: 'demo-template',
        allowed: { groups: ['default-class-b'] },
        hardware: { memory: 0.5, vcpus: 1 },
        visible: true,
      },
    });
    expect(created.status(), await created.text()).toBe(200);
    deployment = ((await created.json()) as { id: string }).id;
    const desktops = async () => {
      const res = await teacher?.get(`/api/v3/deployment/${deployment}`);
      return ((await res?.json()) as { desktops: ClassDesktop[] }).desktops;
    };
    const total = 13;
    await expect
      .poll(async () => (await desktops()).filter((d) => d.state === 'stopped').length, {
        timeout: 60_000,
        ...POLL,
      })
      .toBe(total);
    const t0 = Date.now();
    expect((await teacher.put(`/api/v3/deployments/start/${deployment}`)).status()).toBe(200);
    await expect
      .poll(
        async () => {
          const now = await desktops();
          const others = now.filter((d) => d.state !== 'started');
          return others.length === 0 ? 'all started' : others.map((d) => d.state).join(' ');
        },
        { timeout: 180_000, intervals: [500] },
      )
      .toBe('all started');
    console.log(
      `[measure] ${total} desktops over 2 libvirt hosts: start-all ${Date.now() - t0} ms`,
    );
    const split = await hostRows();
    const onA = split.a?.running ?? 0;
    const onB = split.b?.running ?? 0;
    expect(onA + onB).toBe(total);
    expect([onA, onB].sort()).toEqual([6, 7]);

    // The admin's host list shows the split.
    await page.reload();
    const running = (name: string) =>
      page.getByTestId('record').filter({ hasText: name }).locator('[data-field="running"]');
    await expect(running(names.a)).toHaveText(String(onA));
    await expect(running(names.b)).toHaveText(String(onB));

    // The videowall shows a live frame of every desktop.
    const wall = await page
      .context()
      .browser()
      ?.newPage({ viewport: { width: 1600, height: 1000 } });
    if (!wall) throw new Error('no second page');
    await showsAllFrames(wall, deployment, total);
    await wall.close();

    // Host B falls silent: its desktops fail naming it within 10 s, A's keep running.
    await hostB.down();
    const silent = Date.now();
    await expect
      .poll(async () => (await desktops()).filter((d) => d.state === 'failed').length, {
        timeout: 10_000,
        ...POLL,
      })
      .toBe(onB);
    console.log(`[measure] host B silent -> its desktops failed: ${Date.now() - silent} ms`);
    const states = await desktops();
    expect(states.filter((d) => d.state === 'started')).toHaveLength(onA);
    const failedOnB = states.filter((d) => d.state === 'failed');
    const sample = failedOnB[0];
    expect(await detailOf(portal.url, sample)).toContain(names.b);

    // B answers again: its domains are adopted; one of its desktops stopped and started again
    // runs there.
    await hostB.up();
    await expect
      .poll(async () => (await desktops()).filter((d) => d.state === 'started').length, {
        timeout: 30_000,
        ...POLL,
      })
      .toBe(total);
    const owner = await ownerApi(portal.url, sample);
    await forceStop(owner, sample?.id ?? '', desktops);
    expect((await hostRows()).b?.running).toBe(onB - 1);
    expect((await owner.get(`/api/v3/desktop/start/${sample?.id ?? ''}`)).status()).toBe(200);
    await expect
      .poll(async () => (await desktops()).find((d) => d.id === sample?.id)?.state, POLL)
      .toBe('started');
    expect((await hostRows()).b?.running).toBe(onB);

    // A stopped desktop of A moves to B (its disk copied) and boots there.
    const onAOnly = states.find((d) => d.state === 'started');
    const mover = await ownerApi(portal.url, onAOnly);
    await forceStop(mover, onAOnly?.id ?? '', desktops);
    const moved = await admin.post(`/api/v3/desktop/${onAOnly?.id ?? ''}/move`, {
      data: { host: (await hostRows()).b?.id },
    });
    expect(moved.status(), await moved.text()).toBe(200);
    expect((await mover.get(`/api/v3/desktop/start/${onAOnly?.id ?? ''}`)).status()).toBe(200);
    await expect
      .poll(async () => (await desktops()).find((d) => d.id === onAOnly?.id)?.state, POLL)
      .toBe('started');
    expect(await hostRows()).toMatchObject({ a: { running: onA - 1 }, b: { running: onB + 1 } });
    await owner.dispose();
    await mover.dispose();
  } finally {
    if (teacher && deployment) {
      await teacher.put(`/api/v3/deployments/stop/${deployment}`);
      await teacher.dispose();
    }
    await cleanUpHosts(hosts, portal.dataDir, deployment ? await idsOf(admin, deployment) : []);
    await admin?.dispose();
  }
});

/** The teacher's videowall: one tile and one live thumbnail per desktop. */
async function showsAllFrames(page: Page, deployment: string, total: number): Promise<void> {
  await loginUi(page, 'teacher');
  await page.goto(`/deployment/${deployment}/videowall`);
  await expect(page.getByTestId('videowall-tile')).toHaveCount(total, { timeout: 20_000 });
  await expect
    .poll(() => page.getByTestId('videowall-thumbnail').count(), { timeout: 60_000, ...POLL })
    .toBe(total);
  await expect(page.getByTestId('videowall-thumbnail').first()).toHaveAttribute('src', /^blob:/);
}

/** The API as a deployment desktop's owner (`Student 31` is student31; else the teacher). */
async function ownerApi(base: string, desktop: ClassDesktop | undefined) {
  const n = /^Student (\d+)$/.exec(desktop?.user_name ?? '')?.[1];
  return apiAs(base, await apiToken(base, n ? `student${n}` : 'teacher'));
}

/** A desktop's detail, read by its owner. */
async function detailOf(base: string, desktop: ClassDesktop | undefined): Promise<string> {
  const api = await ownerApi(base, desktop);
  const list = (await (await api.get('/api/v3/user/desktops')).json()) as {
    id: string;
    detail?: string | null;
  }[];
  await api.dispose();
  return list.find((d) => d.id === desktop?.id)?.detail ?? '';
}

/** Stops a desktop at once (a second stop forces it) and waits until it is stopped. */
async function forceStop(
  api: APIRequestContext,
  id: string,
  desktops: () => Promise<ClassDesktop[]>,
): Promise<void> {
  for (let i = 0; i < 2; i++) await api.get(`/api/v3/desktop/stop/${id}`);
  await expect
    .poll(async () => (await desktops()).find((d) => d.id === id)?.state, POLL)
    .toBe('stopped');
}

async function idsOf(api: APIRequestContext | undefined, deployment: string): Promise<string[]> {
  const res = await api?.get(`/api/v3/deployment/${deployment}`);
  if (!res?.ok()) return [];
  return ((await res.json()) as { desktops: ClassDesktop[] }).desktops.map((d) => d.id);
}

/**
 * Destroys the guests of the deployment's desktops on both hosts and removes the volumes the
 * portal left in their pools (the desktops' disks, the demo template's copy), then ends the sshds.
 */
async function cleanUpHosts(hosts: SshTestHost[], dataDir: string, ids: string[]): Promise<void> {
  const template = templateVolume(join(dataDir, 'images', 'demo-template.qcow2'));
  const ours = (name: string) =>
    name === template || ids.some((id) => name === `vdi-${id}` || name === `${id}.qcow2`);
  for (const host of hosts) {
    const virsh = (...args: string[]) =>
      execFileSync(host.directVirsh, ['-c', 'qemu:///session', ...args], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
    const names = (...args: string[]) => {
      try {
        return virsh(...args)
          .split('\n')
          .map((line) => line.trim().split(/\s+/)[0] ?? '')
          .filter(ours);
      } catch {
        return [];
      }
    };
    for (const domain of names('list', '--name'))
      try {
        virsh('destroy', domain);
      } catch {
        /* gone */
      }
    for (const volume of names('vol-list', 'vdi'))
      try {
        virsh('vol-delete', '--pool', 'vdi', volume);
      } catch {
        /* gone */
      }
    await host.stop();
  }
}
