import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgliteDataDir } from '../../../test/support/pglite-template.ts';
import Fastify from 'fastify';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../db/client.ts';
import { loggingOptions } from './logger-options.ts';
import { isDatabaseUnavailable, safeError } from './db-errors.ts';

const CANARY = 'Guest-Password-Canary-7';

let dir: string;
let database: Database;

beforeAll(async () => {
  dir = await pgliteDataDir('db-errors-');
  database = await openDatabase({ dataDir: dir });
});
afterAll(async () => {
  await database.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A real failed statement whose parameter is the canary. */
async function failedStatement(cast: 'int' | 'missing'): Promise<unknown> {
  try {
    if (cast === 'int') await database.db.execute(sql`SELECT ${CANARY}::int`);
    else await database.db.execute(sql`SELECT * FROM no_such_table WHERE name = ${CANARY}`);
  } catch (err) {
    return err;
  }
  throw new Error('the statement did not fail');
}

describe('safeError', () => {
  it('keeps neither the parameters nor a data exception quoting them', async () => {
    for (const kind of ['int', 'missing'] as const) {
      const err = await failedStatement(kind);
      expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).toContain(CANARY);
      const safe = safeError(err);
      expect(JSON.stringify(safe), kind).not.toContain(CANARY);
      expect(safe.message, kind).toMatch(/Failed query/);
    }
    expect(safeError(await failedStatement('int')).cause?.code).toBe('22P02');
  });

  it('is what the logger writes for an error: the canary never reaches a log line', async () => {
    const written: string[] = [];
    const app = Fastify(
      loggingOptions({ logLevel: 'info', logFormat: 'json' }, { write: (c) => written.push(c) }),
    );
    app.log.error({ err: await failedStatement('missing') }, 'unexpected error');
    await app.close();
    expect(written.join('')).toContain('no_such_table');
    expect(written.join('')).not.toContain(CANARY);
  });
});

describe('isDatabaseUnavailable', () => {
  it('knows a refused connection, a terminated server and a pool timeout, through causes', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    const wrapped = new Error('Failed query: select 1', { cause: refused });
    const shutdown = Object.assign(new Error('terminating connection'), { code: '57P01' });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    expect(isDatabaseUnavailable(shutdown)).toBe(true);
    expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([refused]))).toBe(true);
  });

  it('does not take a constraint or a syntax error for an outage', async () => {
    expect(isDatabaseUnavailable(await failedStatement('missing'))).toBe(false);
    expect(
      isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })),
    ).toBe(false);
  });
});
