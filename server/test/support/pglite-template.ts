/**
 * Embedded databases for the server tests, copied from one template per run: a new PGlite data
 * directory runs PostgreSQL's initdb inside WebAssembly (some 2.6 CPU-seconds), a copy of one
 * already made opens in a tenth of that. The first caller of the run makes the template (initdb and
 * every migration) under a lock; the others wait for it and copy it. A test of the from-scratch
 * path (the app's first start on an empty directory) keeps opening an empty directory itself.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { openDatabase } from '../../src/platform/db/client.ts';
import { migrate } from '../../src/platform/db/migrate.ts';
import { until } from './wait.ts';

/** How long a caller waits for another worker to finish the template. */
const TEMPLATE_WAIT_MS = 120_000;

async function template(): Promise<string> {
  const dir = inject('pgliteTemplate');
  const ready = join(dir, 'ready');
  if (existsSync(ready)) return join(dir, 'db');
  let mine = true;
  try {
    mkdirSync(join(dir, 'lock'));
  } catch {
    mine = false;
  }
  if (mine) {
    const database = await openDatabase({ dataDir: dir });
    try {
      await migrate(database);
    } finally {
      await database.close();
    }
    writeFileSync(ready, '');
  } else {
    await until(async () => existsSync(ready), Boolean, TEMPLATE_WAIT_MS, 100);
  }
  return join(dir, 'db');
}

/**
 * A new data directory (under the system's temporary directory) whose `db` holds a migrated
 * embedded database of its own; the caller removes it.
 */
export async function pgliteDataDir(prefix = 'vdi-test-'): Promise<string> {
  const source = await template();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(source, join(dir, 'db'), { recursive: true });
  return dir;
}
