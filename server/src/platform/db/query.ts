/**
 * A parameterised text query (`$1`, `$2`...) run through drizzle on a database or a transaction, so
 * code written as SQL text (the quota counters) runs on the transaction's own connection: PGlite
 * has a single one, and a query outside the transaction would wait for it forever.
 *
 * Each `$n` is one parameter handed to the driver as it is, like the driver's own query takes it:
 * an array stays one array (`= ANY($1::text[])`), never a list of parameters, so the same text
 * answers the same inside a transaction as outside one.
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
      i % 2 === 0 ? sql.raw(chunk) : sql.param(params[Number(chunk) - 1]),
    );
    const result = (await on.execute(sql.join(parts, sql.raw('')))) as { rows: T[] };
    return result.rows;
  };
}
