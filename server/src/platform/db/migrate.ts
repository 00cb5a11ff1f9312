/**
 * Applies the SQL migrations drizzle-kit writes into server/migrations from the tables codegen
 * emits (`npm run db:generate`): the journal (meta/_journal.json) orders them, each file's
 * statements are split on drizzle's breakpoint marker and run in one transaction together with
 * its schema_migrations row. An advisory lock serialises concurrent boots of several nodes
 * against one PostgreSQL.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from './client.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../../migrations/', import.meta.url));
const LOCK_KEY = 7_406_321_001;
const BREAKPOINT = '--> statement-breakpoint';
/**
 * Databases made before migrations were generated recorded versions 0001 and 0002 by hand; their
 * tables are the ones the first generated migration creates, so it counts as applied there.
 */
const LEGACY_LAST_VERSION = '0002';

export interface Migration {
  /** drizzle-kit's tag: NNNN_name */
  version: string;
  statements: string[];
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const journalPath = join(dir, 'meta', '_journal.json');
  if (!existsSync(journalPath)) throw new Error(`no migration journal at ${journalPath}`);
  const journal = JSON.parse(readFileSync(journalPath, 'utf8')) as Journal;
  return [...journal.entries]
    .sort((a, b) => a.idx - b.idx)
    .map(({ tag }) => ({
      version: tag,
      statements: readFileSync(join(dir, `${tag}.sql`), 'utf8')
        .split(BREAKPOINT)
        .map((s) => s.trim())
        .filter(Boolean),
    }));
}

/** Applies pending migrations; returns the versions applied now. */
export async function migrate(
  database: Database,
  migrations = loadMigrations(),
): Promise<string[]> {
  await database.query(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const applied: string[] = [];
  for (const [index, m] of migrations.entries()) {
    const done = await database.transaction(
      async (exec, query) => {
        await query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
        const rows = await query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
        if (rows.length > 0) return false;
        const legacy =
          index === 0 &&
          (await query('SELECT 1 FROM schema_migrations WHERE version = $1', [LEGACY_LAST_VERSION]))
            .length > 0;
        if (!legacy) for (const statement of m.statements) await exec(statement);
        await query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
          m.version,
          legacy ? 'adopted from the hand-written migrations' : m.version,
        ]);
        return !legacy;
      },
      { unlimited: true },
    );
    if (done) applied.push(m.version);
  }
  return applied;
}
