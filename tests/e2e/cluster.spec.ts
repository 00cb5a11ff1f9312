/**
 * Two portal nodes on one PostgreSQL behind a real HAProxy (scripts/lib/cluster.ts, what
 * `npm run cluster` runs), with real browsers on each node directly and through HAProxy:
 * - a desktop started by a browser on node 1 turns "started" in a browser on node 2 within 1 s;
 * - the admin on node 1 gives users the deployments menu and takes it back: the entry comes and
 *   goes in a user's browser on node 2 without a reload;
 * - logout on node 1 closes that session's VNC console served by node 2 within 1 s;
 * - node 1 is killed (SIGKILL) while it makes the desktops of a deployment for a class of 30 and
 *   its owner: node 2 takes the job over and the deployment ends with exactly 31 desktops; browsers
 *   through HAProxy that were on node 1 reconnect to node 2, keep their sessions, and show the list
 *   the API answers, with a desktop made meanwhile.
 * A VM runs on the node that started it: that node settles and stops it (the first three tests
 * also prove the other node leaves it running).
 *
 * The cluster is this file's own (not the worker's portal): its tests run in order on it.
 */
import { mkdtempSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from '@playwright/test';
import pg from 'pg';
// The shared fixtures (an unused worker portal included): a spec with a fixture pool of its own
// needs a worker of its own, which Playwright starts only once the shared workers have nothing
// left, and this spec's half minute then ran alone at the end of the suite.
import { expect, test } from './fixtures';
import { startCluster, type Cluster, type ClusterNode } from '../../scripts/lib/cluster';
import { DEMO_PASSWORD, E2E_PORT } from '../../playwright.config';
import { apiAs, apiToken, loginUi } from './helpers';

/** Above the worker portals' ports (E2E_PORT + 10 × worker). */
const CLUSTER_PORT = E2E_PORT + 200;

let cluster: Cluster;
/** The desktop the first test starts; the console test opens it. */
let desktopId = '';

async function signedIn(browser: Browser, baseURL: string, username: string): Promise<Page> {
  const context = await browser.newContext({ baseURL });
  const page = await context.newPage();
  await loginUi(page, username);
  return page;
}

/** The cluster's node n (1-based). */
function node(n: number): ClusterNode {
  const found = cluster.nodes[n - 1];
  if (!found) throw new Error(`the cluster has no node ${n}`);
  return found;
}

const card = (page: Page, id: string) =>
  page.locator(`[data-testid="record"][data-record-id="${id}"]`);

interface Listed {
  id: string;
  state: string;
}

async function listed(baseURL: string): Promise<Listed[]> {
  const api = await apiAs(baseURL, await apiToken(baseURL));
  try {
    return (await (await api.get('/api/v3/user/desktops')).json()) as Listed[];
  } finally {
    await api.dispose();
  }
}

test.describe('two portal nodes behind HAProxy on one PostgreSQL', () => {
  test.describe.configure({ mode: 'serial', timeout: 180_000 });

  test.beforeAll(async () => {
    test.setTimeout(300_000);
    // Beside the portals' data (removed with it after a run that passed): the nodes' output stays
    // there for a failure to be read afterwards.
    const dir = mkdtempSync(join(process.env.E2E_DATA_DIR ?? tmpdir(), 'cluster-'));
    const log = createWriteStream(join(dir, 'cluster.log'));
    cluster = await startCluster({
      nodes: 2,
      port: CLUSTER_PORT,
      env: {
        DEMO_PASSWORD,
        QEMU_ACCEL: 'tcg',
        DESKTOP_STOP_TIMEOUT: '5s',
        NETWORK_MODE: 'none',
        // A killed node's work is taken over within 4 s and a beat.
        WORK_LEASE: '4s',
        PORTAL_CONFIG: join(dir, 'portal.json'),
      },
      output: (line) => {
        log.write(`${line}\n`);
        if (process.env.E2E_SERVER_LOG) console.log(line);
      },
    });
  });

  test.afterAll(async () => {
    await cluster?.stop();
  });

  test('a desktop started on node 1 turns started in a browser on node 2 within 1 s', async ({
    browser,
  }) => {
    const [one, two] = [node(1), node(2)];
    // The seeded desktops' disks are made right after the first start.
    await expect
      .poll(async () => (await listed(one.url)).some((d) => d.state === 'stopped'), {
        timeout: 60_000,
      })
      .toBe(true);
    desktopId = (await listed(one.url)).find((d) => d.state === 'stopped')?.id ?? '';
    const onOne = await signedIn(browser, one.url, 'user');
    const onTwo = await signedIn(browser, two.url, 'user');
    await expect(card(onTwo, desktopId)).toHaveAttribute('data-state', 'stopped');

    await card(onOne, desktopId).getByTestId('record-more').click();
    await onOne.locator('[role="menu"] [data-action="start"]').click();
    await expect(card(onOne, desktopId)).toHaveAttribute('data-state', 'started', {
      timeout: 60_000,
    });
    await expect(card(onTwo, desktopId)).toHaveAttribute('data-state', 'started', {
      timeout: 1_000,
    });
    await onOne.context().close();
    await onTwo.context().close();
  });

  test('the admin on node 1 changes role visibility: a user on node 2 sees it without reload', async ({
    browser,
  }) => {
    const [one, two] = [node(1), node(2)];
    const user = await signedIn(browser, two.url, 'user');
    const deployments = user.getByRole('link', { name: 'Deployments' });
    await expect(deployments).toHaveCount(0);

    const admin = await signedIn(browser, one.url, 'admin');
    await admin.getByRole('link', { name: 'Role visibility' }).click();
    const save = async (check: boolean) => {
      await admin.locator('[data-action="edit"]').click();
      const dialog = admin.getByRole('dialog');
      const item = dialog.locator('[data-resource="deployments"]');
      await item.getByRole('button').first().click();
      for (const set of ['See (menu and screens)', 'Manage']) {
        const box = item.getByRole('checkbox', { name: `${set}: User`, exact: true });
        if (check) await box.check();
        else await box.uncheck();
      }
      await dialog.locator('button[type="submit"]').click();
      await expect(dialog).toBeHidden();
    };
    await save(true);
    await expect(deployments).toBeVisible();
    await save(false);
    await expect(deployments).toHaveCount(0);
    expect(new URL(user.url()).pathname).toBe('/desktops');
    await user.context().close();
    await admin.context().close();
  });

  test("logout on node 1 closes the session's console served by node 2 within 1 s", async ({
    browser,
  }) => {
    const [one, two] = [node(1), node(2)];
    const page = await signedIn(browser, one.url, 'user');
    await expect(card(page, desktopId)).toHaveAttribute('data-state', 'started');
    // The same login session in a second browser that never sees the logout: only node 2 can
    // end its console, on node 1's word.
    const session = (await page.context().cookies()).filter(
      ({ name }) => name === 'vdiportal_session',
    );
    expect(session).toHaveLength(1);
    const elsewhere = await browser.newContext();
    await elsewhere.addCookies(session);
    const viewer = await elsewhere.newPage();
    // The console's websocket (node 2's VNC proxy): closed by node 2 when node 1 ends the session.
    let closed = false;
    viewer.on('websocket', (socket) => {
      if (new URL(socket.url()).pathname === '/api/v3/viewer/vnc')
        socket.on('close', () => (closed = true));
    });
    await viewer.goto(`${two.url}/viewer/vnc/${desktopId}`);
    await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', {
      timeout: 30_000,
    });
    expect(closed).toBe(false);

    await page.getByTestId('logout').click();
    await expect(page).toHaveURL(/\/login$/);
    await expect.poll(() => closed, { timeout: 1_000, intervals: [50] }).toBe(true);
    await elsewhere.close();
    await page.context().close();
  });

  test('node 1 killed while it makes a 31-desktop deployment: node 2 ends it, browsers through HAProxy go on', async ({
    browser,
  }) => {
    const [one, two] = [node(1), node(2)];
    // The VM of the first test runs on node 1: node 1 stops it before it dies.
    const owner = await apiAs(one.url, await apiToken(one.url));
    expect((await owner.get(`/api/v3/desktop/stop/${desktopId}`)).ok()).toBe(true);
    await expect
      .poll(async () => (await listed(one.url)).find((d) => d.id === desktopId)?.state, {
        timeout: 60_000,
      })
      .toBe('stopped');
    await owner.dispose();

    // Browsers through HAProxy, pinned to node 1 by HAProxy's cookie: a user, and a student of
    // the class the deployment is for.
    const throughProxy = async (username: string) => {
      const context = await browser.newContext({ baseURL: cluster.url });
      await context.addCookies([{ name: 'VDI_NODE', value: one.name, url: cluster.url }]);
      const page = await context.newPage();
      await loginUi(page, username);
      const pinned = (await context.cookies()).find(({ name }) => name === 'VDI_NODE');
      expect(pinned?.value).toBe(one.name);
      return page;
    };
    const page = await throughProxy('user');
    const student = await throughProxy('student01');
    await expect(card(page, desktopId)).toHaveAttribute('data-state', 'stopped');

    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    try {
      const teacher = await apiAs(one.url, await apiToken(one.url, 'teacher'));
      const created = await teacher.post('/api/v3/deployments', {
        data: {
          name: 'Node 1 dies',
          desktop_name: 'Node 1 dies desktop',
          template_id: 'demo-template',
          allowed: { groups: ['default-class-a'] },
          visible: true,
        },
      });
      expect(created.ok(), await created.text()).toBe(true);
      // Node 1 took the job that makes the disks before it answered, and makes them in about a
      // second: it is frozen the moment it answers, so that it dies in the middle of the job
      // however fast this machine makes disks (a poll first let it finish, now and then).
      process.kill(one.pid, 'SIGSTOP');
      const { id: deployment } = (await created.json()) as { id: string };
      await teacher.dispose();
      const states = async () =>
        (
          await db.query<{ state: string }>('SELECT state FROM desktops WHERE tag = $1', [
            deployment,
          ])
        ).rows.map((r) => r.state);
      // The job that makes the disks, and who holds it.
      const holders = async () =>
        (
          await db.query<{ holder: string | null }>(
            `SELECT holder FROM cluster_jobs WHERE payload->>'deployment' = $1`,
            [deployment],
          )
        ).rows.map((r) => r.holder ?? '');
      await expect.poll(holders, { intervals: [20] }).toEqual([expect.stringMatching(/^node-1#/)]);
      await one.crash();
      const atCrash = await states();
      expect(atCrash).toHaveLength(31);
      expect(atCrash.filter((state) => state === 'creating').length).toBeGreaterThan(0);

      // A desktop made on node 2 meanwhile reaches the user's page once it has reconnected there.
      const api = await apiAs(two.url, await apiToken(two.url));
      const made = await api.post('/api/v3/persistent_desktop', {
        data: { template_id: 'demo-template', name: `After ${one.name} died` },
      });
      expect(made.ok(), await made.text()).toBe(true);
      const { id } = (await made.json()) as { id: string };

      // Node 2 takes the job over once node 1's lease expired, and makes the rest.
      const seen = new Set<string>();
      await expect
        .poll(
          async () => {
            for (const holder of await holders()) seen.add(holder.split('#')[0] ?? '');
            return (await states()).filter((state) => state === 'creating').length;
          },
          { timeout: 30_000, intervals: [100] },
        )
        .toBe(0);
      expect(seen.has(two.name)).toBe(true);
      const after = await states();
      expect(after).toHaveLength(31);
      expect(after.every((state) => state === 'stopped')).toBe(true);

      await expect(card(page, id)).toBeVisible({ timeout: 30_000 });
      // Still signed in, and the cards are the API's list: none lost, none twice, each in its
      // latest state (the student's desktop made by node 2).
      for (const [browsing, username] of [
        [page, 'user'],
        [student, 'student01'],
      ] as const) {
        expect(new URL(browsing.url()).pathname).toBe('/desktops');
        const as = await apiAs(two.url, await apiToken(two.url, username));
        let answer: Listed[] = [];
        await expect
          .poll(
            async () => {
              answer = (await (await as.get('/api/v3/user/desktops')).json()) as Listed[];
              return answer.filter((d) => d.state === 'creating').length;
            },
            { timeout: 30_000 },
          )
          .toBe(0);
        await as.dispose();
        await expect
          .poll(async () =>
            (
              await browsing
                .locator('[data-testid="record"]')
                .evaluateAll((cards) =>
                  cards.map(
                    (c) => `${c.getAttribute('data-record-id')} ${c.getAttribute('data-state')}`,
                  ),
                )
            ).sort(),
          )
          .toEqual(answer.map((d) => `${d.id} ${d.state}`).sort());
      }
      await api.dispose();
    } finally {
      await db.end();
    }
    await page.context().close();
    await student.context().close();
  });
});
