/**
 * One PostgreSQL dialect, two drivers: embedded PGlite under DATA_DIR/db by default, node-postgres
 * when DATABASE_URL is set. Everything above this file sees a drizzle PgDatabase plus a tiny raw
 * interface (exec for multi-statement SQL, a transaction for the migrator, close).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

export type Db = PgDatabase<PgQueryResultHKT>;

/** Multi-statement SQL runner bound to one connection (inside a transaction for migrations). */
export type Exec = (sqlText: string) => Promise<void>;
/** Parameterised single-statement query, rows as objects. */
export type Query = <T = Record<string, unknown>>(
  sqlText: string,
  params?: unknown[],
) => Promise<T[]>;

export interface Database {
  kind: 'pglite' | 'postgres';
  db: Db;
  query: Query;
  /** Runs fn inside BEGIN/COMMIT on one connection; rolls back on throw. */
  transaction<T>(fn: (exec: Exec, query: Query) => Promise<T>): Promise<T>;
  /** Resolves when the database answers (health checks). */
  ping(): Promise<void>;
  /** Calls `listener` when an idle connection is lost (the server went away); PGlite never does. */
  onConnectionLost(listener: (err: Error) => void): void;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  poolSize?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openPglite(join(options.dataDir, 'db'));
}

async function openPostgres(url: string, max: number): Promise<Database> {
  const { default: pg } = await import('pg');
  const { drizzle } = await import('drizzle-orm/node-postgres');
  // A database that does not answer within 3 s fails the request fast (503) instead of piling
  // requests up behind the pool.
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 3_000,
    keepAlive: true,
  });
  // An idle client error (server restart) must not crash the process; the next query reconnects.
  const lost: ((err: Error) => void)[] = [];
  pool.on('error', (err) => {
    for (const listener of lost) listener(err);
  });
  const query: Query = async (text, params) => (await pool.query(text, params as unknown[])).rows;
  return {
    kind: 'postgres',
    db: drizzle(pool) as unknown as Db,
    query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(
          async (text) => void (await client.query(text)),
          async (text, params) => (await client.query(text, params as unknown[])).rows,
        );
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
    ping: async () => void (await query('SELECT 1')),
    onConnectionLost: (listener) => void lost.push(listener),
    close: () => pool.end(),
  };
}

/**
 * The embedded database serves one process: PostgreSQL's default 128 MB of shared buffers would
 * be most of the portal's memory (the WebAssembly heap never shrinks), 16 MB hold the working set
 * of a school's portal.
 */
const EMBEDDED_POSTGRESQL_CONF = 'shared_buffers = 16MB';

async function openPglite(dir: string): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const client = await PGlite.create(dir, { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
  const query: Query = async <T>(text: string, params?: unknown[]) =>
    (await client.query<T>(text, params)).rows;
  return {
    kind: 'pglite',
    db: drizzle(client) as unknown as Db,
    query,
    transaction: (fn) =>
      client.transaction((tx) =>
        fn(
          async (text) => void (await tx.exec(text)),
          async <T>(text: string, params?: unknown[]) => (await tx.query<T>(text, params)).rows,
        ),
      ),
    ping: async () => void (await query('SELECT 1')),
    onConnectionLost: () => undefined,
    close: () => client.close(),
  };
}
