import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteDataDir } from '../../../test/support/pglite-template.ts';
import { MAX_WAITING, openDatabase, type Database } from './client.ts';
import { isDatabaseSlow } from '../lib/db-errors.ts';

let dir: string;
let database: Database;

beforeAll(async () => {
  dir = await pgliteDataDir('vdi-db-');
  database = await openDatabase({ dataDir: dir });
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the embedded database guard', () => {
  it('refuses statements past MAX_WAITING queued ones at once as busy, and runs the rest', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: MAX_WAITING + 10 }, (_, i) =>
        database.query<{ n: number }>('SELECT $1::int AS n', [i]),
      ),
    );
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(isDatabaseSlow(r.reason)).toBe(true);
    expect(results.filter((r) => r.status === 'fulfilled').length).toBeGreaterThan(MAX_WAITING);
    // Once the queue drains the database answers again.
    expect(await database.query<{ n: number }>('SELECT 1 AS n')).toEqual([{ n: 1 }]);
  });
});
