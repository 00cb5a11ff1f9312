/**
 * The users table has one writer: user-writes.ts. No other hand-written server file (nor the
 * command line) inserts, changes or deletes accounts, in drizzle or in SQL text; they call the
 * users repository's named operations.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../..', import.meta.url));
const WRITER = 'server/src/domains/directory/user-writes.ts';

/** A write of the users table: drizzle's insert/update/delete of `users`, or SQL text. */
const WRITE =
  /\.(insert|update|delete)\(\s*users\s*\)|\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+users\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.test\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('the users table', () => {
  it('is written only by user-writes.ts', () => {
    const writers = [join(root, 'server/src'), join(root, 'scripts')]
      .flatMap(sourceFiles)
      .filter((file) => WRITE.test(readFileSync(file, 'utf8')))
      .map((file) => relative(root, file));
    expect(writers).toEqual([WRITER]);
  });

  it('is recognised when written in drizzle or in SQL text', () => {
    for (const code of [
      'await tx.insert(users).values(row)',
      'await db\n  .update(users)\n  .set({})',
      'await on.delete(users).where(x)',
      "await query('UPDATE users SET wg_address = $2 WHERE id = $1')",
      "query('DELETE FROM users WHERE id = $1')",
    ])
      expect(WRITE.test(code), code).toBe(true);
    expect(WRITE.test('await tx.select().from(users)')).toBe(false);
  });
});
