/**
 * The cached desktop list (GET /user/desktops): a write through the repository or a desktop event
 * on the event bus makes the next read fresh at once, in every encoding, and one user's cached
 * bytes never answer another user. The clock is held still, so the list's time bound never
 * refreshes an entry here: what refreshes it is the write or the event.
 */
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { desktops } from '../../platform/db/schema.ts';
import { toWire } from './desktops-repository.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, userRow } from '../../../test/support/fixtures.ts';

interface Card {
  id: string;
  name: string;
}

let t: TestApp;
let userToken: string;
let advancedToken: string;
let userIds: Set<string>;
let advancedIds: Set<string>;

const list = async (token: string, acceptEncoding?: string): Promise<Card[]> => {
  const res = await injectWithToken(t.app, token, {
    method: 'GET',
    url: '/api/v3/user/desktops',
    headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
  });
  expect(res.statusCode).toBe(200);
  const encoding = res.headers['content-encoding'];
  const text =
    encoding === 'br'
      ? brotliDecompressSync(res.rawPayload).toString('utf8')
      : encoding === 'gzip'
        ? gunzipSync(res.rawPayload).toString('utf8')
        : res.body;
  return JSON.parse(text) as Card[];
};
const names = (cards: Card[]) => cards.map((c) => c.name).sort();

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  const advanced = await userRow(t.app, 'advanced');
  // enough desktops for the answer to be compressed (over 1 KiB)
  for (let i = 0; i < 6; i++) await addDesktop(t.app, advanced, `advanced desktop ${i}`);
  userToken = await login(t.app, 'user');
  advancedToken = await login(t.app, 'advanced');
  const user = await userRow(t.app, 'user');
  const ids = async (userId: string) =>
    new Set(
      (
        await t.app.db.select({ id: desktops.id }).from(desktops).where(eq(desktops.userId, userId))
      ).map((r) => r.id),
    );
  userIds = await ids(user.id);
  advancedIds = await ids(advanced.id);
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(async () => t.close());

describe('the cached desktop list', () => {
  it('answers each user with their own desktops only, in every encoding', async () => {
    for (const encoding of [undefined, 'br', 'gzip']) {
      const mine = await list(userToken, encoding);
      const theirs = await list(advancedToken, encoding);
      expect(mine.length).toBe(userIds.size);
      expect(theirs.length).toBe(advancedIds.size);
      expect(mine.every((c) => userIds.has(c.id))).toBe(true);
      expect(theirs.every((c) => advancedIds.has(c.id))).toBe(true);
    }
  });

  it('is fresh after a write through the repository, in every encoding', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const [first] = await list(userToken);
    if (!first) throw new Error('user has no desktop');
    await list(userToken, 'br');
    await list(userToken, 'gzip');
    await t.app.desktops.update(first.id, { name: 'renamed by a write' });
    for (const encoding of [undefined, 'br', 'gzip'])
      expect(names(await list(userToken, encoding))).toContain('renamed by a write');
    // the other user's cached list is not the one that was dropped, and stays theirs
    expect((await list(advancedToken)).every((c) => advancedIds.has(c.id))).toBe(true);
  });

  it('is fresh after a desktop event for a write this repository did not make', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const advanced = await userRow(t.app, 'advanced');
    const before = await list(advancedToken, 'br');
    // a write that bypasses the repository (as another node's would): the cache does not know yet
    const id = await addDesktop(t.app, advanced, 'made elsewhere');
    expect(names(await list(advancedToken, 'br'))).toEqual(names(before));
    const row = await t.app.desktops.table.get(id);
    if (!row) throw new Error('desktop not inserted');
    t.app.events.publish({
      name: 'desktops.created',
      payload: toWire(row),
      ownerId: advanced.id,
    });
    expect(names(await list(advancedToken, 'br'))).toContain('made elsewhere');
    expect(names(await list(advancedToken))).toContain('made elsewhere');
    // the event was the advanced user's: user's list never shows that desktop
    expect(names(await list(userToken))).not.toContain('made elsewhere');
  });
});

describe('the first desktops of the list (?limit)', () => {
  const read = (token: string, query: string) =>
    injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/user/desktops?${query}` });

  it("answers the caller's first desktops in the whole list's order, and no one else's", async () => {
    const whole = await list(advancedToken);
    expect(whole.length).toBeGreaterThan(3);
    const res = await read(advancedToken, 'limit=3');
    expect(res.statusCode).toBe(200);
    const first = JSON.parse(res.body) as Card[];
    expect(first.map((c) => c.id)).toEqual(whole.slice(0, 3).map((c) => c.id));
    // the same records as the whole list has them (every wire field)
    expect(first).toEqual(whole.slice(0, 3));
    const mine = JSON.parse((await read(userToken, 'limit=100')).body) as Card[];
    expect(mine.length).toBe(userIds.size);
    expect(mine.every((c) => userIds.has(c.id))).toBe(true);
  });

  it('refuses a limit out of its range or not a number with a 400 naming it', async () => {
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'limit=-2']) {
      const res = await read(userToken, query);
      expect(res.statusCode, query).toBe(400);
      expect(res.body, query).toContain('limit');
    }
  });
});

describe('the cached desktop list with a field hidden from a role', () => {
  let hiding: TestApp;
  beforeAll(async () => {
    hiding = await buildTestApp(
      await createTestDatabase(),
      {},
      { portalConfig: { fields: { desktops: { description: ['admin', 'manager', 'user'] } } } },
    );
    const owner = await userRow(hiding.app, 'advanced');
    for (let i = 0; i < 6; i++)
      await addDesktop(hiding.app, owner, `described ${i}`, { description: 'a description' });
    const user = await userRow(hiding.app, 'user');
    await addDesktop(hiding.app, user, 'described', { description: 'a description' });
  });
  afterAll(async () => hiding.close());

  it('leaves the field out for that role in every encoding, and keeps it for the others', async () => {
    const read = async (username: string, acceptEncoding?: string) => {
      const res = await injectWithToken(hiding.app, await login(hiding.app, username), {
        method: 'GET',
        url: '/api/v3/user/desktops',
        headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {},
      });
      expect(res.statusCode).toBe(200);
      const encoding = res.headers['content-encoding'];
      const text =
        encoding === 'br'
          ? brotliDecompressSync(res.rawPayload).toString('utf8')
          : encoding === 'gzip'
            ? gunzipSync(res.rawPayload).toString('utf8')
            : res.body;
      return JSON.parse(text) as (Card & { description?: string })[];
    };
    for (const encoding of [undefined, 'br', 'gzip']) {
      const advanced = await read('advanced', encoding);
      expect(advanced.length).toBeGreaterThan(0);
      expect(advanced.some((d) => 'description' in d)).toBe(false);
      expect((await read('user', encoding)).some((d) => d.description === 'a description')).toBe(
        true,
      );
    }
  });
});
