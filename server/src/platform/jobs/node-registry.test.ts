/**
 * The admins' list of live nodes (GET /admin/nodes) with two nodes on one PostgreSQL: a portal
 * (node-a) and a second process's background work (node-b, a `createWork` on a pool of its own,
 * as on another machine). Both are listed with what they hold; a node killed leaves the list once
 * its lease expired, and a node that closes leaves it at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/client.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { until } from '../../../test/support/wait.ts';
import type { AdminNode } from '../../../../src/generated/types.ts';
import { portalVersion } from '../lib/version.ts';
import { createWork, type Work } from './work.ts';
import { registerNode } from './node-registry.ts';

/** The other nodes' leases; the portal's is long, so a starved CPU never drops it from the list. */
const LEASE_MS = 1500;
const quiet = { warn: () => undefined, error: () => undefined };

let t: TestApp;
let database: Database;
let adminToken: string;
const works: Work[] = [];

/** Another node's background work, listed as the portal lists itself. */
const otherNode = (name: string) => {
  const work = createWork(database.query, { nodeName: name, leaseMs: LEASE_MS, log: quiet });
  works.push(work);
  const node = registerNode(database.query, work, {
    startedAt: new Date(),
    version: 'other-version',
    address: () => `${name}.example:8080`,
  });
  return { work, node };
};

const list = async (token = adminToken) =>
  injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/admin/nodes' });
const names = async () => ((await list()).json() as AdminNode[]).map((n) => n.id);

beforeAll(async () => {
  const url = await createTestDatabase();
  t = await buildTestApp(url, { nodeName: 'node-a', workLeaseMs: 60_000 });
  await t.app.ready();
  database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 2 });
  adminToken = await login(t.app, 'admin');
});
afterAll(async () => {
  for (const w of works) await w.stop();
  await database.close();
  await t.close();
});

describe('the live nodes', () => {
  it('lists both nodes with what they hold, only to admins', async () => {
    const { work: b } = otherNode('node-b');
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    b.handle('probe', () => released);
    await b.start();
    const lease = await b.hold('probe:lease');
    await b.enqueue('probe', 'probe:job');
    const nodes = await until(
      async () => (await list()).json() as AdminNode[],
      (listed) => listed.length === 2,
    );
    const [a, other] = nodes;
    expect(a).toMatchObject({ id: 'node-a', version: portalVersion, leader: true, jobs: [] });
    expect(a?.address).toMatch(/:\d+$/);
    expect(other).toMatchObject({
      id: 'node-b',
      version: 'other-version',
      address: 'node-b.example:8080',
      leader: false,
      jobs: ['probe:job'],
      leases: ['probe:lease'],
    });
    const now = Date.now() / 1000;
    for (const n of nodes) {
      expect(n.started_at).toBeLessThanOrEqual(n.beat_at + 1);
      expect(Math.abs(now - n.beat_at)).toBeLessThan(10);
    }
    expect((await list(await login(t.app, 'manager'))).statusCode).toBe(403);
    release();
    await lease?.release();
  });

  it('drops a killed node once its lease expired, and a closing node at once', async () => {
    const { work: c, node } = otherNode('node-c');
    await c.start();
    expect(await names()).toEqual(['node-a', 'node-b', 'node-c']);
    await c.stop();
    await node.remove();
    expect(await names()).toEqual(['node-a', 'node-b']);

    const killed = Date.now();
    works[0]?.halt();
    await until(names, (listed) => listed.length === 1, LEASE_MS * 4, 20);
    expect(Date.now() - killed).toBeLessThan(LEASE_MS * 2);
    expect(await names()).toEqual(['node-a']);
  });
});
