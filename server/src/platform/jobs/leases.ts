/**
 * Leases in PostgreSQL (the `cluster_leases` table): a name is held by one process until its
 * expiry, measured on the database's clock so the nodes' clocks do not matter. Taking a lease
 * succeeds when nobody holds it, when its holder let it expire, or when the caller already holds
 * it (which renews it); two processes asking at once get one answer each, one of them yes (the
 * row lock of `ON CONFLICT DO UPDATE`). The same statements run on the embedded PGlite, where the
 * one process takes every lease.
 */
import type { Database } from '../db/client.ts';

type Query = Database['query'];

/** `now() + ms` in SQL, the milliseconds as parameter `$n`. */
export const later = (n: number) => `now() + ($${n}::int * interval '1 millisecond')`;

export interface Leases {
  /** Takes or renews the lease `name` for `ttlMs`; answers whether this holder has it now. */
  take(name: string, ttlMs: number): Promise<boolean>;
  /** Renews the leases named that this holder still has; answers those it still has. */
  renew(names: readonly string[], ttlMs: number): Promise<Set<string>>;
  /** Gives a lease back (only when this holder has it). */
  release(name: string): Promise<void>;
  /** The unexpired leases whose name starts with `prefix`: name → holder. */
  live(prefix: string): Promise<Map<string, string>>;
}

export function createLeases(query: Query, holder: string): Leases {
  return {
    async take(name, ttlMs) {
      const rows = await query(
        `INSERT INTO cluster_leases (name, holder, expires_at) VALUES ($1, $2, ${later(3)})
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE cluster_leases.holder = EXCLUDED.holder OR cluster_leases.expires_at < now()
         RETURNING holder`,
        [name, holder, Math.round(ttlMs)],
      );
      return rows.length === 1;
    },
    async renew(names, ttlMs) {
      if (names.length === 0) return new Set();
      const rows = await query<{ name: string }>(
        `UPDATE cluster_leases SET expires_at = ${later(3)}
         WHERE holder = $1 AND name = ANY($2::text[]) RETURNING name`,
        [holder, [...names], Math.round(ttlMs)],
      );
      return new Set(rows.map((r) => r.name));
    },
    async release(name) {
      await query('DELETE FROM cluster_leases WHERE name = $1 AND holder = $2', [name, holder]);
    },
    async live(prefix) {
      const rows = await query<{ name: string; holder: string }>(
        `SELECT name, holder FROM cluster_leases WHERE starts_with(name, $1) AND expires_at >= now()`,
        [prefix],
      );
      return new Map(rows.map((r) => [r.name, r.holder]));
    },
  };
}
