/**
 * `queryOn` runs SQL text with `$n` parameters through drizzle on a database or a transaction: each
 * parameter is one value, as the driver's own query takes it, so an array is one array parameter
 * (`= ANY($1::text[])`) inside a transaction as outside one, on PGlite and on PostgreSQL.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteDataDir } from '../../../test/support/pglite-template.ts';
import { openDatabase, type Database, type Query } from './client.ts';
import { queryOn } from './query.ts';
import { createTestDatabase } from '../../../test/support/helper.ts';

const databases: Partial<Record<Database['kind'], Database>> = {};
let dir: string;

beforeAll(async () => {
  dir = await pgliteDataDir('vdi-query-on-');
  databases.pglite = await openDatabase({ dataDir: dir });
  databases.postgres = await openDatabase({
    dataDir: dir,
    databaseUrl: await createTestDatabase(),
  });
  for (const database of Object.values(databases))
    await database.query(
      'CREATE TABLE query_on_items (id text PRIMARY KEY, state text NOT NULL, data jsonb)',
    );
});

afterAll(async () => {
  for (const database of Object.values(databases)) await database.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The same statements, asked of one query function. */
async function answers(query: Query) {
  await query('DELETE FROM query_on_items');
  await query('INSERT INTO query_on_items (id, state, data) VALUES ($1, $2, $3), ($4, $5, $6)', [
    'a',
    'started',
    JSON.stringify({ tags: ['x'] }),
    'b',
    'stopped',
    null,
  ]);
  const started = await query<{ id: string }>(
    'SELECT id FROM query_on_items WHERE state = ANY($1::text[]) ORDER BY id',
    [['started', 'starting']],
  );
  const none = await query<{ n: string }>(
    'SELECT count(*) AS n FROM query_on_items WHERE state = ANY($1::text[])',
    [[]],
  );
  const both = await query<{ n: string }>(
    'SELECT count(*) AS n FROM query_on_items WHERE id = $2 OR state = ANY($1::text[])',
    [['stopped'], 'a'],
  );
  const array = await query<{ value: string[] }>('SELECT $1::text[] AS value', [['p', 'q']]);
  const json = await query<{ tags: unknown }>(
    "SELECT data->'tags' AS tags FROM query_on_items WHERE id = $1",
    ['a'],
  );
  return {
    started: started.map((r) => r.id),
    none: Number(none[0]?.n),
    both: Number(both[0]?.n),
    array: array[0]?.value,
    json: json[0]?.tags,
  };
}

const expected = { started: ['a'], none: 0, both: 2, array: ['p', 'q'], json: ['x'] };

describe.each(['pglite', 'postgres'] as const)('queryOn on %s', (kind) => {
  const database = () => {
    const found = databases[kind];
    if (!found) throw new Error(`no ${kind} database`);
    return found;
  };

  it("takes an array parameter as one array, like the driver's own query", async () => {
    expect(await answers(database().query)).toEqual(expected);
    expect(await answers(queryOn(database().db))).toEqual(expected);
  });

  it('takes an array parameter as one array inside a transaction', async () => {
    const seen = await database().db.transaction(async (tx) => answers(queryOn(tx)));
    expect(seen).toEqual(expected);
  });
});
