/**
 * Tiny versioned migrator: server/migrations/NNNN_name.sql applied in order, each in its own
 * transaction together with its schema_migrations row. An advisory lock serialises concurrent
 * boots of several nodes against one PostgreSQL.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from './client.ts';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
const LOCK_KEY = 7_406_321_001;

export interface Migration {
  version: string;
  name: string;
  sql: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_-]+\.sql$/.test(f))
    .sort()
    .map((file) => {
      const [version = '', ...rest] = file.replace(/\.sql$/, '').split('_');
      return { version, name: rest.join('_'), sql: readFileSync(`${dir}/${file}`, 'utf8') };
    });
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
  for (const m of migrations) {
    const done = await database.transaction(async (exec, query) => {
      await query('SELECT pg_advisory_xact_lock($1)', [LOCK_KEY]);
      const rows = await query('SELECT 1 FROM schema_migrations WHERE version = $1', [m.version]);
      if (rows.length > 0) return false;
      await exec(m.sql);
      await query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [
        m.version,
        m.name,
      ]);
      return true;
    });
    if (done) applied.push(m.version);
  }
  return applied;
}
