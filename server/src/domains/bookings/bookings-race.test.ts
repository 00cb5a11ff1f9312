/**
 * Parallel bookings can never take one unit twice: 1,000 booking attempts fired at once for the
 * same window of a profile with one unit (20 users, one desktop each, 50 attempts per desktop)
 * make exactly one booking, and every other attempt is refused with booking_overlap (409).
 *
 * - On PGlite (the embedded default), one server.
 * - On PostgreSQL, two server nodes on one database, 500 attempts each: the nodes share nothing but
 *   the database, so only its locks keep the unit single.
 *
 * An attempt the server sheds for load (503 database_busy: its calls waited past the connection
 * wait, which a machine busy with the whole suite can make happen) is asked again after the
 * Retry-After it names, as a client does; the final answers are asserted, and how many attempts
 * were shed is printed with the time they took (no assertion on either).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { sleep } from '../../../test/support/wait.ts';
import { eq } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../app.ts';
import { bookings } from '../../platform/db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  testConfig,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser, loginTo } from '../../../test/support/fixtures.ts';
import { pgliteDataDir } from '../../../test/support/pglite-template.ts';
import {
  HOUR,
  addPlan,
  addReservable,
  book,
  gpuDesktop,
  outcome,
  step,
} from '../../../test/support/booking-fixtures.ts';

const USERS = 20;
const PER_USER = 50;

const closing: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const close of closing.reverse()) await close();
});

/** A one-unit profile planned for a day, and USERS users with a desktop naming it. */
async function arena(app: FastifyInstance, prefix: string) {
  const itemId = `${prefix}-item`;
  const profileId = `${prefix}-1U`;
  await addReservable(app, itemId, [{ id: profileId, units: 1 }]);
  await addPlan(app, {
    itemId,
    profileId,
    units: 1,
    start: new Date(Date.now() - HOUR),
    end: new Date(Date.now() + 24 * HOUR),
  });
  const bookers: { token: string; desktopId: string }[] = [];
  for (let i = 0; i < USERS; i++) {
    const row = await addUser(app, {
      username: `${prefix}-${i}`,
      role: 'user',
      categoryId: 'default',
      groupId: 'default-users',
    });
    bookers.push({
      token: await loginTo(app, row.username, 'default'),
      desktopId: await gpuDesktop(app, row, `Race ${i}`, profileId),
    });
  }
  return { profileId, bookers };
}

/** How many times one attempt is asked again after the server shed it for load. */
const SHED_RETRIES = 5;

/**
 * PER_USER attempts per booker, on the nodes in turn, all at once; answers their final outcomes
 * and how many answers were shed for load on the way.
 */
async function attempts(nodes: FastifyInstance[], bookers: { token: string; desktopId: string }[]) {
  const window = { start: step(4), end: step(6) };
  const started = performance.now();
  let shed = 0;
  const attempt = async (node: FastifyInstance, token: string, desktopId: string) => {
    for (let retry = 0; ; retry++) {
      const res = await book(node, token, { element_id: desktopId, ...window });
      const answer = outcome(res);
      if (answer.status !== 503 || answer.code !== 'database_busy' || retry === SHED_RETRIES)
        return answer;
      shed++;
      await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
    }
  };
  const outcomes = await Promise.all(
    bookers.flatMap(({ token, desktopId }, u) =>
      Array.from({ length: PER_USER }, (_, i) =>
        attempt(nodes[(u * PER_USER + i) % nodes.length] as FastifyInstance, token, desktopId),
      ),
    ),
  );
  const ms = Math.round(performance.now() - started);
  return { outcomes, shed, ms, window };
}

const summary = (outcomes: { status: number; code: string | null }[]) => {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = `${o.status} ${o.code ?? 'ok'}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return Object.fromEntries([...counts].sort());
};

/**
 * The attempts queue on one event loop (PGlite) or two: 20 s on a quiet machine, more than a minute
 * on a loaded one. What is asserted is the outcome, so the time limit leaves room for the load.
 */
const RACE_TIMEOUT = 240_000;

describe('1,000 parallel booking attempts for one unit', () => {
  it('make exactly one booking on PGlite', { timeout: RACE_TIMEOUT }, async () => {
    const t: TestApp = await buildTestApp(undefined, { dataDir: await pgliteDataDir() });
    closing.push(() => t.close());
    expect(t.app.database.kind).toBe('pglite');
    const { profileId, bookers } = await arena(t.app, 'lite');
    const { outcomes, shed, ms, window } = await attempts([t.app], bookers);
    console.log(
      `PGlite: ${outcomes.length} attempts in ${ms} ms (${shed} shed)`,
      summary(outcomes),
    );
    expect(outcomes).toHaveLength(USERS * PER_USER);
    expect(summary(outcomes)).toEqual({ '200 ok': 1, '409 booking_overlap': USERS * PER_USER - 1 });
    const rows = await t.app.db.select().from(bookings).where(eq(bookings.profileId, profileId));
    expect(rows).toHaveLength(1);
    // the scheduler wakes when that booking begins
    const now = new Date();
    expect(await t.app.bookingScheduler.nextDue(now)).toBe(window.start.getTime() - now.getTime());
  });

  it(
    'make exactly one booking on PostgreSQL with two server nodes',
    { timeout: RACE_TIMEOUT },
    async () => {
      const url = await createTestDatabase();
      const first: TestApp = await buildTestApp(url);
      closing.push(() => first.close());
      // The second node shares the database and the data directory (its signing key), nothing else.
      const second = await buildApp(
        testConfig({ databaseUrl: url, dataDir: first.config.dataDir }),
      );
      closing.push(() => second.close());
      expect(first.app.database.kind).toBe('postgres');
      const { profileId, bookers } = await arena(first.app, 'pg');
      const { outcomes, shed, ms, window } = await attempts([first.app, second], bookers);
      console.log(
        `PostgreSQL, 2 nodes: ${outcomes.length} attempts in ${ms} ms (${shed} shed)`,
        summary(outcomes),
      );
      expect(summary(outcomes)).toEqual({
        '200 ok': 1,
        '409 booking_overlap': USERS * PER_USER - 1,
      });
      const rows = await first.app.db
        .select()
        .from(bookings)
        .where(eq(bookings.profileId, profileId));
      expect(rows).toHaveLength(1);
      const now = new Date();
      expect(await second.bookingScheduler.nextDue(now)).toBe(
        window.start.getTime() - now.getTime(),
      );
    },
  );
});
