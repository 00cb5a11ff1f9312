/**
 * Leases and jobs of several processes on one PostgreSQL database (each a `createWork` on a pool
 * of its own, as on separate nodes). Leases are short here (LEASE_MS): a takeover waits for one
 * expiry. The embedded PGlite runs the same code in the app (smoke-pglite.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../db/client.ts';
import { createTestDatabase } from '../../../test/support/helper.ts';
import { until } from '../../../test/support/wait.ts';
import { createWork, type Job, type Work } from './work.ts';
import { createClusterSlots } from './cluster-slots.ts';

const LEASE_MS = 600;
const quiet = { warn: () => undefined, error: () => undefined };
const databases: Database[] = [];
const works: Work[] = [];
let url: string;

const open = async () => {
  const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 4 });
  databases.push(database);
  return database;
};

const node = async (name: string, database?: Database, leaseMs = LEASE_MS) => {
  const work = createWork((database ?? (await open())).query, {
    nodeName: name,
    leaseMs,
    log: quiet,
  });
  works.push(work);
  return work;
};

beforeAll(async () => {
  url = await createTestDatabase();
});
afterAll(async () => {
  for (const w of works) await w.stop();
  for (const d of databases) await d.close();
});

describe('background work across processes on one PostgreSQL', () => {
  it('has one leader; when it dies another takes over within a lease and a beat', async () => {
    const a = await node('lead-a');
    const b = await node('lead-b');
    await a.start();
    await b.start();
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    expect(await b.liveNodes()).toEqual(new Set(['lead-a', 'lead-b']));
    const died = Date.now();
    a.halt();
    await until(
      async () => b.isLeader,
      (yes) => yes,
      LEASE_MS * 4,
      20,
    );
    expect(Date.now() - died).toBeLessThan(LEASE_MS * 3);
    expect(await b.liveNodes()).toEqual(new Set(['lead-b']));
    await b.stop();
  });

  it('runs each of 61 jobs once over three processes', async () => {
    // Leases far longer than the run: no job may change hands here, so a process that a loaded
    // machine starves of CPU for longer than LEASE_MS must not lose its jobs to another.
    const long = 30_000;
    const nodes = [
      await node('jobs-a', undefined, long),
      await node('jobs-b', undefined, long),
      await node('jobs-c', undefined, long),
    ];
    const runs = new Map<string, string[]>();
    for (const w of nodes)
      w.handle(
        'count',
        async (job) => {
          const list = runs.get(job.key) ?? [];
          list.push(w.nodeName);
          runs.set(job.key, list);
          await new Promise((r) => setTimeout(r, 5));
        },
        { concurrency: 3 },
      );
    // A key waiting or running is not added twice (this process runs no job of the kind).
    const z = await node('jobs-z');
    await z.enqueue('count', 'count:60');
    await z.enqueue('count', 'count:60');
    await Promise.all(nodes.map((w) => w.start()));
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (nodes[i % 3] as Work).enqueue('count', `count:${i}`, { i }),
      ),
    );
    await until(
      async () => {
        await Promise.all(nodes.map((w) => w.beat()));
        return (await (databases[0] as Database).query('SELECT 1 FROM cluster_jobs')).length;
      },
      (left) => left === 0,
      10_000,
      20,
    );
    await Promise.all(nodes.map((w) => w.idle()));
    expect(runs.size).toBe(61);
    expect([...runs.values()].every((by) => by.length === 1)).toBe(true);
    for (const w of nodes) await w.stop();
  });

  it('records a job done that it took while its beat was renewing the others', async () => {
    const database = await open();
    // The beat's job renewal answers only once a job was taken meanwhile.
    let holdRenewal: Promise<void> | undefined;
    let releaseRenewal: () => void = () => undefined;
    let renewalAsked: () => void = () => undefined;
    const renewalStarted = new Promise<void>((resolve) => (renewalAsked = resolve));
    const query: typeof database.query = async (text, params) => {
      if (holdRenewal && /UPDATE cluster_jobs SET lease_until/.test(text)) {
        renewalAsked();
        await holdRenewal;
      }
      return database.query(text, params);
    };
    const w = createWork(query, { nodeName: 'renew-race', leaseMs: 30_000, log: quiet });
    works.push(w);
    const ran: string[] = [];
    let finish: () => void = () => undefined;
    const finishing = new Promise<void>((resolve) => (finish = resolve));
    // Still running when the renewal answers; it ends after.
    w.handle('quick', async (job) => {
      ran.push(job.key);
      await finishing;
    });
    w.handle('slow', async (job) => {
      await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
    });
    await w.start();
    // A job running here, so that the beat has one to renew.
    await w.enqueue('slow', 'slow:1');
    holdRenewal = new Promise<void>((resolve) => (releaseRenewal = resolve));
    const beat = w.beat();
    await renewalStarted;
    const { finished } = await w.enqueue('quick', 'quick:1');
    holdRenewal = undefined;
    releaseRenewal();
    await beat;
    finish();
    await finished;
    expect(ran).toEqual(['quick:1']);
    const left = await database.query<{ key: string }>('SELECT key FROM cluster_jobs ORDER BY key');
    expect(left.map((row) => row.key)).toEqual(['slow:1']);
    await w.stop();
    // The slow job, given back at the stop, is not the next tests' business.
    await database.query("DELETE FROM cluster_jobs WHERE key = 'slow:1'");
  });

  it('says so when a job it runs is lost (another process holds it) and leaves it to that holder', async () => {
    const database = await open();
    const warnings: { message: string; job?: unknown }[] = [];
    const w = createWork(database.query, {
      nodeName: 'lose-a',
      leaseMs: 30_000,
      log: {
        warn: (fields: object, message: string) => warnings.push({ message, ...fields }),
        error: () => undefined,
      },
    });
    works.push(w);
    let aborted: unknown;
    w.handle('long', async (job) => {
      await new Promise<void>((resolve) =>
        job.signal.addEventListener('abort', () => {
          aborted = job.signal.reason;
          resolve();
        }),
      );
    });
    await w.start();
    const { finished } = await w.enqueue('long', 'long:1');
    // Another process took the row (its lease had run out while this one was starved of CPU).
    await database.query("UPDATE cluster_jobs SET holder = 'lose-b' WHERE key = 'long:1'");
    await w.beat();
    await finished;
    expect(aborted).toBe('lost');
    expect(warnings).toContainEqual(
      expect.objectContaining({ message: 'job lease lost; left to its next claim', job: 'long:1' }),
    );
    const left = await database.query<{ holder: string }>(
      "SELECT holder FROM cluster_jobs WHERE key = 'long:1'",
    );
    expect(left).toEqual([{ holder: 'lose-b' }]);
    await w.stop();
    await database.query("DELETE FROM cluster_jobs WHERE key = 'long:1'");
  });

  it('gives a killed process its job to another within a lease, and a closed one at once', async () => {
    const a = await node('take-a');
    const b = await node('take-b');
    const seen: { node: string; attempts: number; step: unknown }[] = [];
    let release: () => void = () => undefined;
    const stuck = new Promise<void>((resolve) => {
      release = resolve;
    });
    a.handle('long', async (job: Job) => {
      seen.push({ node: 'a', attempts: job.attempts, step: job.payload.step });
      await stuck;
    });
    b.handle('long', async (job: Job) => {
      seen.push({ node: 'b', attempts: job.attempts, step: job.payload.step });
    });
    await a.start();
    await b.start();
    await a.enqueue('long', 'long:1', { step: 1 });
    expect(seen).toEqual([{ node: 'a', attempts: 1, step: 1 }]);
    const died = Date.now();
    a.halt();
    await until(
      async () => {
        await b.beat();
        return seen.length;
      },
      (n) => n === 2,
      LEASE_MS * 4,
      20,
    );
    expect(Date.now() - died).toBeGreaterThanOrEqual(LEASE_MS - 50);
    expect(seen[1]).toEqual({ node: 'b', attempts: 2, step: 1 });
    await b.idle();
    release();
    // The killed process writes nothing more: the job b finished stays done.
    expect(await (databases[0] as Database).query('SELECT 1 FROM cluster_jobs')).toHaveLength(0);

    // A closing process gives its running job back: another takes it without waiting.
    const c = await node('take-c');
    const d = await node('take-d');
    const ran: string[] = [];
    c.handle('polite', async (job) => {
      ran.push('c');
      await new Promise<void>((resolve) => job.signal.addEventListener('abort', () => resolve()));
    });
    d.handle('polite', async () => {
      ran.push('d');
    });
    await c.start();
    await d.start();
    await c.enqueue('polite', 'polite:1');
    const closed = Date.now();
    await c.stop();
    await until(
      async () => {
        await d.beat();
        return ran;
      },
      (r) => r.length === 2,
      LEASE_MS,
      20,
    );
    expect(ran).toEqual(['c', 'd']);
    expect(Date.now() - closed).toBeLessThan(LEASE_MS);
    await b.stop();
    await d.stop();
  });

  it('runs exclusive work in one process at a time, and again once its holder is gone', async () => {
    const a = await node('ex-a');
    const b = await node('ex-b');
    await a.start();
    await b.start();
    let release: () => void = () => undefined;
    let entered: () => void = () => undefined;
    const inside = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const holding = a.exclusive(
      'disk:1',
      () =>
        new Promise<string>((resolve) => {
          entered();
          release = () => resolve('a');
        }),
    );
    await inside;
    expect(await b.exclusive('disk:1', async () => 'b')).toEqual({ ran: false });
    // The holder's own second call waits its turn too.
    expect(await a.exclusive('disk:1', async () => 'a2')).toEqual({ ran: false });
    expect(await b.exclusive('disk:2', async () => 'b')).toEqual({ ran: true, value: 'b' });
    a.halt();
    await until(
      async () => b.exclusive('disk:1', async () => 'b'),
      (r) => r.ran,
      LEASE_MS * 4,
      20,
    );
    release();
    expect(await holding).toEqual({ ran: true, value: 'a' });
    await b.stop();
  });

  it("counts slots over the processes, and frees a dead process's slots after a lease", async () => {
    const [da, db] = [await open(), await open()];
    const [a, b] = [await node('slot-a', da), await node('slot-b', db)];
    const [sa, sb] = [createClusterSlots(da, a, quiet), createClusterSlots(db, b, quiet)];
    await a.start();
    await b.start();
    const limits = { perUser: 2, perItem: 3, total: 4 };
    const take = (s: typeof sa, userId: string, itemId?: string) =>
      s.take('test', itemId ? { userId, itemId } : { userId }, limits);
    // Many at once from both processes: exactly the limit is admitted.
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => take(i % 2 ? sa : sb, 'u1')),
    );
    expect(answers.filter((x) => 'slot' in x)).toHaveLength(2);
    expect(answers.find((x) => 'refused' in x)).toEqual({ refused: 'user', limit: 2 });
    expect('slot' in (await take(sa, 'u2', 'd1'))).toBe(true);
    expect(await take(sb, 'u3', 'd1')).toMatchObject({ slot: expect.anything() as unknown });
    expect(await take(sb, 'u4', 'd1')).toEqual({ refused: 'server', limit: 4 });
    expect(await sb.count('test')).toBe(4);
    // Still held after several leases: their process renews them.
    await new Promise((r) => setTimeout(r, LEASE_MS * 2));
    expect(await sb.count('test')).toBe(4);
    // The slots b took: its share of the first ten (the odd ones were a's) and u3's.
    const ofB = answers.filter((x, i) => i % 2 === 0 && 'slot' in x).length + 1;
    a.halt();
    await until(
      () => sb.count('test'),
      (n) => n === ofB,
      LEASE_MS * 4,
      20,
    );
    expect('slot' in (await take(sb, 'u4', 'd2'))).toBe(true);
    await b.stop();
  });
});
