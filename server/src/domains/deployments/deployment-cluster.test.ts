/**
 * A deployment made on two portal nodes sharing one PostgreSQL, with real disks (qemu-img overlays
 * on the demo template): node A takes the creation job and dies half-way (its disk creations hang
 * and it stops renewing its leases, as a killed process does); node B takes the job over once A's
 * lease expires and makes the rest. The deployment ends with exactly 31 desktops, each disk made
 * once. Leases are short here (LEASE_MS).
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hypervisor, PrepareDiskOptions } from '../../platform/hypervisor/types.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser } from '../../../test/support/fixtures.ts';
import { until } from '../../../test/support/wait.ts';

const LEASE_MS = 1500;
/** Disks node A makes before it "dies" (the next ones hang). */
const MADE_BY_A = 12;

let a: TestApp;
let b: TestApp;

beforeAll(async () => {
  const url = await createTestDatabase();
  a = await buildTestApp(url, { nodeName: 'node-a', workLeaseMs: LEASE_MS, prepareImages: true });
  b = await buildTestApp(url, { nodeName: 'node-b', workLeaseMs: LEASE_MS });
  // The seed's desktops get their disks first (the leader's reconciler makes them).
  await a.app.engine.reconcile();
  await until(
    () => a.app.database.query("SELECT 1 FROM desktops WHERE state = 'creating'"),
    (rows) => rows.length === 0,
  );
}, 120_000);
afterAll(async () => {
  await b.close();
  await a.close();
});

/** Counts the disks a node's driver makes; past `limit`, a call hangs until `fail` is called. */
function watch(driver: Hypervisor, limit = Infinity) {
  const real = driver.prepareDisk.bind(driver);
  const made: string[] = [];
  let calls = 0;
  let fail: (err: Error) => void = () => undefined;
  const hung = new Promise<never>((_, reject) => {
    fail = reject;
  });
  hung.catch(() => undefined);
  driver.prepareDisk = async (options: PrepareDiskOptions) => {
    if (++calls > limit) return hung;
    const info = await real(options);
    made.push(options.path);
    return info;
  };
  return { made, calls: () => calls, fail: () => fail(new Error('the node was killed')) };
}

const states = async (deployment: string) =>
  b.app.database.query<{ id: string; state: string; user_id: string; disk_path: string | null }>(
    'SELECT id, state, user_id, disk_path FROM desktops WHERE tag = $1',
    [deployment],
  );

describe('a deployment made on two nodes', () => {
  it('adds the missing desktops once when two nodes recreate at the same time', async () => {
    const teacher = await login(a.app, 'teacher');
    const res = await injectWithToken(a.app, teacher, {
      method: 'POST',
      url: '/api/v3/deployments',
      payload: {
        name: 'Cluster physics',
        desktop_name: 'Cluster physics desktop',
        template_id: 'demo-template',
        allowed: { groups: ['default-class-b'] },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { id } = res.json<{ id: string }>();
    const made = () =>
      until(
        () => states(id),
        (rows) => rows.every((r) => r.state !== 'creating'),
      );
    expect(await made()).toHaveLength(13);
    for (const n of [1, 2, 3])
      await addUser(a.app, {
        username: `joiner${n}`,
        role: 'user',
        categoryId: 'default',
        groupId: 'default-class-b',
      });
    // The same token on both nodes: the signing keys are shared.
    const answers = await Promise.all(
      [a, b, a, b].map((t) =>
        injectWithToken(t.app, teacher, { method: 'PUT', url: `/api/v3/deployments/${id}` }),
      ),
    );
    for (const answer of answers)
      if (answer.statusCode !== 200)
        expect(answer.json<{ description_code: string }>().description_code).toBe(
          'deployment_creating',
        );
    const rows = await made();
    expect(rows).toHaveLength(16);
    expect(new Set(rows.map((r) => r.user_id)).size).toBe(16);
  });

  it('ends with exactly 31 desktops when the node making them dies half-way', async () => {
    expect(a.app.work.isLeader).toBe(true);
    const onA = watch(a.app.hypervisor, MADE_BY_A);
    const onB = watch(b.app.hypervisor);
    const teacher = await login(a.app, 'teacher');
    const res = await injectWithToken(a.app, teacher, {
      method: 'POST',
      url: '/api/v3/deployments',
      payload: {
        name: 'Cluster maths',
        desktop_name: 'Cluster maths desktop',
        template_id: 'demo-template',
        allowed: { groups: ['default-class-a'] },
        visible: true,
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { id } = res.json<{ id: string }>();
    expect(await states(id)).toHaveLength(31);
    // Node A made its share and hangs on the next ones (four at a time): then it dies.
    await until(
      async () => onA.calls(),
      (n) => n >= MADE_BY_A + 4,
      20_000,
      10,
    );
    expect(onB.calls()).toBe(0);
    const died = Date.now();
    a.app.work.halt();

    const done = await until(
      () => states(id),
      (rows) => rows.every((r) => r.state !== 'creating'),
      30_000,
      25,
    );
    const tookMs = Date.now() - died;
    console.info(`node B finished the deployment ${tookMs} ms after node A died`);
    expect(tookMs).toBeGreaterThanOrEqual(LEASE_MS - 100);
    expect(done).toHaveLength(31);
    const ids = new Set(done.map((r) => r.id));
    expect(new Set(done.map((r) => r.user_id)).size).toBe(31);
    expect(done.every((r) => r.state === 'stopped')).toBe(true);
    // Each disk made once: A's twelve and B's nineteen, those A hung on among B's.
    const ours = (made: string[]) =>
      made.map((path) => basename(path, '.qcow2')).filter((d) => ids.has(d));
    expect(ours(onA.made)).toHaveLength(MADE_BY_A);
    expect(ours(onB.made)).toHaveLength(31 - MADE_BY_A);
    expect(new Set([...ours(onA.made), ...ours(onB.made)]).size).toBe(31);
    expect(done.every((r) => r.disk_path !== null && existsSync(r.disk_path))).toBe(true);
    await until(
      () => b.app.database.query('SELECT 1 FROM cluster_jobs'),
      (jobs) => jobs.length === 0,
      5_000,
      10,
    );

    // The dead node's hung calls fail at last: nothing changes (their conditional update finds the
    // desktops made).
    onA.fail();
    await new Promise((r) => setTimeout(r, 50));
    const after = await states(id);
    expect(after).toHaveLength(31);
    expect(after.every((r) => r.state === 'stopped')).toBe(true);
    const counts = await b.app.deployments.counts([id]);
    expect(counts.get(id)).toMatchObject({ creatingDesktops: 0 });
  });
});
