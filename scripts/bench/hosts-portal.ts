/**
 * The portal side of `hosts.ts`: a private portal (`server/src/server.ts`, temporary DATA_DIR,
 * TCG) with the two libvirt hosts added as an admin would (URI, SSH key file, capacity), then
 *  - click Open -> first frame in Chromium (`/usr/bin/chromium`): `user`'s card "Start and open"
 *    clicked while stopped, until the noVNC canvas of the viewer tab shows a non-blank frame; the
 *    seeded "Demo desktop 1" pinned to the host local, "Demo desktop 2" moved to host A (its disk
 *    copied into A's pool first, outside the timing); `runs` times each, the median printed;
 *  - start-all: `n` desktops of `admin` (the demo template, 512 MiB) started at once through the
 *    API, placed by the portal over the two hosts (both with far more memory than the host local),
 *    from the first start call until every desktop is `started`.
 * Every desktop it started is stopped at the end, also after a failure (each stop settles before
 * the next), and the volumes it left in the hosts' pools removed; the caller ends the hosts.
 * Needs the SPA built (`npx vite build`).
 */
import { stopProcessGroup } from '../lib/stop-process-group.ts';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from '@playwright/test';
import { killQemus } from '../../tests/support/qemu-teardown.ts';
import {
  destroySessionDomains,
  type SshTestHost,
} from '../../server/src/platform/hypervisor/libvirt-test-host.ts';
import { templateVolume } from '../../server/src/platform/hypervisor/host-volumes.ts';

const root = join(import.meta.dirname, '..', '..');
const PASSWORD = 'bench-hosts-password';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Row {
  id: string;
  name: string;
  state: string;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The API of one user of the portal at `base`. */
async function apiOf(base: string, username: string) {
  const form = new FormData();
  form.set('username', username);
  form.set('password', PASSWORD);
  const login = await fetch(`${base}/authentication/login?provider=form&category_id=default`, {
    method: 'POST',
    body: form,
  });
  const token = (await login.text()).trim();
  return async <T>(path: string, init: RequestInit = {}): Promise<T> => {
    const response = await fetch(`${base}/api/v3${path}`, {
      ...init,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        ...init.headers,
      },
    });
    const text = await response.text();
    if (!response.ok)
      throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  };
}
type Api = Awaited<ReturnType<typeof apiOf>>;

/** Waits until `check` holds (polled every 200 ms) or throws after `ms`. */
async function until(what: string, check: () => Promise<boolean>, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await sleep(200);
  }
}

/** Starts the portal; answers its base URL. */
async function startPortal(dataDir: string): Promise<{ base: string; server: ChildProcess }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = spawn('npx', ['tsx', 'server/src/server.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      DEMO_PASSWORD: PASSWORD,
      QEMU_ACCEL: 'tcg',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true, // own process group: npx + tsx + node end together
  });
  server.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (!text.includes('npm warn')) process.stderr.write(`[server] ${text}`);
  });
  await until('the portal answers', () =>
    fetch(`${base}/api/v3/health`).then(
      (r) => r.ok,
      () => false,
    ),
  );
  return { base, server };
}

/** Click Open on a stopped card -> first non-blank frame of its viewer tab, in ms. */
async function openToFrame(page: Page, id: string): Promise<number> {
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await card.and(page.locator('[data-state="stopped"]')).waitFor({ timeout: 60_000 });
  const popup = page.context().waitForEvent('page');
  const t0 = performance.now();
  await card.getByTestId('desktop-open').click();
  const viewer = await popup;
  try {
    while (performance.now() - t0 < 90_000) {
      const lit = await viewer
        .evaluate(() => {
          const canvas = document.querySelector<HTMLCanvasElement>(
            '[data-testid="vnc-screen"] canvas',
          );
          if (!canvas?.width || !canvas.height) return 0;
          const px = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data;
          let count = 0;
          if (px)
            for (let i = 0; i < px.length; i += 4)
              if ((px[i] ?? 0) + (px[i + 1] ?? 0) + (px[i + 2] ?? 0) > 48) count += 1;
          return count;
        })
        .catch(() => 0);
      if (lit > 2000) return Math.round(performance.now() - t0);
      await sleep(25);
    }
    throw new Error(`no frame of ${id} within 90 s`);
  } finally {
    await viewer.close();
  }
}

/** Stops a desktop (a second stop forces it: the demo guest ignores ACPI) until it is stopped. */
async function stopDesktop(api: Api, id: string, list: () => Promise<Row[]>): Promise<void> {
  const state = async () => (await list()).find((d) => d.id === id)?.state;
  if ((await state()) === 'stopped') return;
  await api(`/desktop/stop/${id}`).catch(() => undefined);
  await sleep(300);
  if ((await state()) !== 'stopped') await api(`/desktop/stop/${id}`).catch(() => undefined);
  await until(`${id} stopped`, async () => (await state()) === 'stopped', 60_000);
}

export interface PortalFigures {
  openLocal: number[];
  openLibvirt: number[];
  startAll: { n: number; ms: number; split: Record<string, number> };
}

export async function benchPortal(
  hosts: SshTestHost[],
  options: { runs: number; n: number },
): Promise<PortalFigures> {
  const dataDir = mkdtempSync(join(tmpdir(), 'vdi-bench-hosts-portal-'));
  let server: ChildProcess | undefined;
  let browser: Browser | undefined;
  /** Every desktop the bench started, by the API that stops it. */
  const started = new Map<string, { api: Api; list: () => Promise<Row[]> }>();
  try {
    const portal = await startPortal(dataDir);
    server = portal.server;
    const admin = await apiOf(portal.base, 'admin');
    const user = await apiOf(portal.base, 'user');
    const names = hosts.map((_, i) => `bench-${'ab'[i] ?? i}`);
    for (const [i, host] of hosts.entries()) {
      const keyfile = /keyfile=([^&]+)/.exec(host.uri)?.[1];
      await admin('/admin/hypervisors', {
        method: 'POST',
        body: JSON.stringify({
          name: names[i],
          uri: host.uri.replace(/keyfile=[^&]+&?/, ''),
          ssh_key: keyfile,
          vcpus: 64,
          memory_mib: 262_144,
        }),
      });
    }
    const hostRows = () =>
      admin<{ name: string; id: string; running: number; last_seen: number | null }[]>(
        '/admin/hypervisors',
      );
    await until('both hosts answer', async () =>
      (await hostRows()).every((h) => !names.includes(h.name) || h.last_seen !== null),
    );
    const hostId = (name: string) =>
      hostRows().then((rows) => rows.find((h) => h.name === name)?.id);

    // Click Open -> first frame: Demo desktop 1 pinned to local, Demo desktop 2 moved to host A.
    const userList = () => user<Row[]>('/user/desktops');
    const demo = (await userList())
      .filter((d) => d.name.startsWith('Demo desktop'))
      .sort((a, b) => a.name.localeCompare(b.name));
    const [local, remote] = demo;
    if (!local || !remote) throw new Error('no seeded demo desktops');
    for (const [desktop, host] of [
      [local, 'local'],
      [remote, await hostId(names[0] ?? '')],
    ] as const)
      await admin(`/desktop/${desktop.id}/move`, {
        method: 'POST',
        body: JSON.stringify({ host }),
      });
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run'],
    });
    const context = await browser.newContext({
      baseURL: portal.base,
      viewport: { width: 1280, height: 900 },
    });
    const page = await context.newPage();
    await page.goto('/login');
    await page.locator('input[name=username]').fill('user');
    await page.locator('input[name=password]').fill(PASSWORD);
    await page.getByTestId('login-submit').click();
    await page.waitForURL(/\/desktops$/);
    const openLocal: number[] = [];
    const openLibvirt: number[] = [];
    for (let run = 0; run < options.runs; run++)
      for (const [desktop, times] of [
        [local, openLocal],
        [remote, openLibvirt],
      ] as const) {
        started.set(desktop.id, { api: user, list: userList });
        times.push(await openToFrame(page, desktop.id));
        await stopDesktop(user, desktop.id, userList);
      }
    await browser.close();
    browser = undefined;

    // Start-all of n desktops over the two hosts.
    const adminList = () => admin<Row[]>('/user/desktops');
    const ids: string[] = [];
    for (let i = 0; i < options.n; i++) {
      const made = await admin<{ id: string }>('/persistent_desktop', {
        method: 'POST',
        body: JSON.stringify({
          template_id: 'demo-template',
          name: `bench all ${i}`,
          hardware: { memory: 0.5, vcpus: 1 },
        }),
      });
      ids.push(made.id);
    }
    await until('the desktops are made', async () => {
      const rows = await adminList();
      return ids.every((id) => rows.find((d) => d.id === id)?.state === 'stopped');
    });
    for (const id of ids) started.set(id, { api: admin, list: adminList });
    const t0 = performance.now();
    const calls = await Promise.allSettled(ids.map((id) => admin(`/desktop/start/${id}`)));
    const refused = calls.find((c) => c.status === 'rejected');
    if (refused) throw refused.reason;
    await until(
      'every desktop started',
      async () => {
        const rows = await adminList();
        const failed = rows.find((d) => ids.includes(d.id) && d.state === 'failed');
        if (failed) throw new Error(`${failed.name} failed`);
        return ids.every((id) => rows.find((d) => d.id === id)?.state === 'started');
      },
      600_000,
    );
    const ms = performance.now() - t0;
    const split = Object.fromEntries((await hostRows()).map((h) => [h.name, h.running]));
    return { openLocal, openLibvirt, startAll: { n: options.n, ms, split } };
  } finally {
    await browser?.close().catch(() => undefined);
    const stops = await Promise.allSettled(
      [...started].map(([id, { api, list }]) => stopDesktop(api, id, list)),
    );
    const unstopped = stops.filter((s) => s.status === 'rejected').length;
    if (unstopped) console.error(`${unstopped} desktops did not stop through the portal`);
    // Whatever the portal could not stop is destroyed on the hosts; the volumes go too.
    for (const host of hosts) {
      for (const id of started.keys()) destroySessionDomains(host.user, `vdi-${id}`);
      removeVolumes(host, dataDir, [...started.keys()]);
    }
    await stopProcessGroup(server?.pid);
    await killQemus(dataDir);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Removes the volumes of the desktops `ids` and of this portal's template from the pool `vdi`. */
function removeVolumes(host: SshTestHost, dataDir: string, ids: string[]): void {
  const virsh = (...args: string[]) =>
    execFileSync(host.directVirsh, ['-c', 'qemu:///session', ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
  const template = templateVolume(join(dataDir, 'images', 'demo-template.qcow2'));
  for (const name of [template, ...ids.map((id) => `${id}.qcow2`)])
    try {
      virsh('vol-delete', '--pool', 'vdi', name);
    } catch {
      /* not there */
    }
}
