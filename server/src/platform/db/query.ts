/**
 * A parameterised text query (`$1`, `$2`...) run through drizzle on a database or a transaction, so
 * code written as SQL text (the quota counters) runs on the transaction's own connection: PGlite
 * has a single one, and a query outside the transaction would wait for it forever.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Query } from './client.ts';

interface Executes {
  execute(query: SQL): Promise<unknown>;
}

/** The query function of a drizzle database or transaction. */
export function queryOn(on: Executes): Query {
  return async <T>(text: string, params: unknown[] = []) => {
    const chunks = text.split(/\$(\d+)/);
    const parts = chunks.map((chunk, i) =>
      i % 2 === 0 ? sql.raw(chunk) : sql`${params[Number(chunk) - 1]}`,
    );
    const result = (await on.execute(sql.join(parts, sql.raw('')))) as { rows: T[] };
    return result.rows;
  };
}
