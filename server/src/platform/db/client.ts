/**
 * One PostgreSQL dialect, two drivers: embedded PGlite under DATA_DIR/db by default, node-postgres
 * when DATABASE_URL is set. Everything above this file sees a drizzle PgDatabase plus a tiny raw
 * interface (exec for multi-statement SQL, a transaction for the migrator, close).
 *
 * A slow database fails a request fast instead of holding it: every statement has
 * STATEMENT_TIMEOUT_MS (PostgreSQL's `statement_timeout` on each pooled connection; for PGlite,
 * which runs in this process and cannot cancel, the caller stops waiting), and a bulkhead refuses
 * a statement at once (DatabaseBusyError) when MAX_WAITING calls already wait for a connection,
 * so waiting calls never pile up; a call that waits CONNECTION_WAIT_MS while every connection is
 * in use gives up as busy too. The bulkhead is wide (1,000 simultaneous bookings on one unit must
 * all get their answer); the connection wait ends a pile-up first. All answer 503 with
 * Retry-After (platform/http/errors.ts).
 * The migrator's transaction lifts the statement limit: a migration may take its time.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { DatabaseBusyError, StatementTimeoutError } from '../lib/db-errors.ts';

/** The longest one statement may run before it is cancelled. */
export const STATEMENT_TIMEOUT_MS = 3_000;
/**
 * The longest a call waits for a pooled connection (a new one to connect, or a busy one to come
 * free): with the statement limit, no call holds a request longer than about 5 s.
 */
export const CONNECTION_WAIT_MS = 2_000;
/** How many calls may wait for a pooled connection (PGlite: run or wait) before more are refused. */
export const MAX_WAITING = 1_000;

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
  /**
   * Runs fn inside BEGIN/COMMIT on one connection; rolls back on throw. `unlimited` lifts the
   * statement timeout inside it (migrations).
   */
  transaction<T>(
    fn: (exec: Exec, query: Query) => Promise<T>,
    options?: { unlimited?: boolean },
  ): Promise<T>;
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
  /** STATEMENT_TIMEOUT_MS unless set (tests shorten it). */
  statementTimeoutMs?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const timeout = options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  if (options.databaseUrl)
    return openPostgres(options.databaseUrl, options.poolSize ?? 10, timeout);
  return openPglite(join(options.dataDir, 'db'), timeout);
}

async function openPostgres(url: string, max: number, timeoutMs: number): Promise<Database> {
  const { default: pg } = await import('pg');
  const { drizzle } = await import('drizzle-orm/node-postgres');
  // A database that does not answer fails the request fast (503) instead of piling requests up
  // behind the pool.
  const pool = new pg.Pool({
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    keepAlive: true,
    statement_timeout: timeoutMs,
  });
  // The bulkhead: past MAX_WAITING callers waiting for a connection, the next one is refused now.
  const rawQuery = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const rawConnect = pool.connect.bind(pool) as (...args: unknown[]) => unknown;
  const full = () => pool.waitingCount >= MAX_WAITING;
  // A wait for a connection that ends while every connection is in use is the database being
  // slow (busy), not unreachable.
  const busyWhenSaturated = (err: unknown) => {
    if (pool.totalCount >= max && /timeout exceeded when trying to connect/i.test(String(err)))
      throw new DatabaseBusyError();
    throw err;
  };
  // Called with a callback, pg answers through it and returns nothing: passed through as it is.
  const guard =
    (raw: (...args: unknown[]) => unknown) =>
    (...args: unknown[]): unknown => {
      if (full()) {
        const callback = args.find((a) => typeof a === 'function') as
          ((err: Error) => void) | undefined;
        if (!callback) return Promise.reject(new DatabaseBusyError());
        callback(new DatabaseBusyError());
        return undefined;
      }
      const result = raw(...args);
      return result instanceof Promise ? result.catch(busyWhenSaturated) : result;
    };
  Object.assign(pool, { query: guard(rawQuery), connect: guard(rawConnect) });
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
    async transaction(fn, options = {}) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        if (options.unlimited) await client.query('SET LOCAL statement_timeout = 0');
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

async function openPglite(dir: string, timeoutMs: number): Promise<Database> {
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const { drizzle } = await import('drizzle-orm/pglite');
  const client = await PGlite.create(dir, { postgresqlconf: EMBEDDED_POSTGRESQL_CONF });
  // PGlite runs one statement at a time in this process and cannot cancel one: the guard stops
  // waiting after the timeout, and refuses new statements while MAX_WAITING are queued.
  let pending = 0;
  const guarded = <T>(run: () => Promise<T>): Promise<T> => {
    if (pending > MAX_WAITING) return Promise.reject(new DatabaseBusyError());
    pending++;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new StatementTimeoutError(timeoutMs)), timeoutMs);
    });
    const done = run();
    void done.catch(() => undefined);
    return Promise.race([done, late]).finally(() => {
      clearTimeout(timer);
      void done.finally(() => pending--).catch(() => undefined);
    });
  };
  const rawQuery = client.query.bind(client);
  Object.assign(client, {
    query: (...args: Parameters<typeof rawQuery>) => guarded(() => rawQuery(...args)),
  });
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
