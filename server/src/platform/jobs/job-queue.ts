/**
 * The statements of the job queue (the `cluster_jobs` table). A job is one row, unique by its key:
 * a process claims it with `FOR UPDATE SKIP LOCKED` (two processes never claim one job) and a
 * lease it renews while the job runs; a job whose lease expired (its process died or hangs) is
 * claimed again by any process. A finished job is deleted by the process that holds it, never by
 * one whose lease was taken over.
 */
import type { Database } from '../db/client.ts';
import { later } from './leases.ts';

type Query = Database['query'];

export interface JobRow {
  id: string;
  kind: string;
  key: string;
  payload: Record<string, unknown>;
  /** how many times the job was claimed, this claim included */
  attempts: number;
}

const RETURNING = 'RETURNING id::text AS id, kind, key, payload, attempts';
const FREE = '(lease_until IS NULL OR lease_until < now()) AND run_after <= now()';

export function jobStatements(query: Query, holder: string) {
  return {
    /** Adds a job unless one with this key is waiting or running; answers its id when added. */
    async add(kind: string, key: string, payload: Record<string, unknown>) {
      const rows = await query<{ id: string }>(
        `INSERT INTO cluster_jobs (kind, key, payload) VALUES ($1, $2, $3::jsonb)
         ON CONFLICT (key) DO NOTHING RETURNING id::text AS id`,
        [kind, key, JSON.stringify(payload)],
      );
      return rows[0]?.id;
    },

    /** Claims up to `limit` free jobs of a kind, oldest first. */
    claim(kind: string, limit: number, leaseMs: number): Promise<JobRow[]> {
      return query<JobRow>(
        `UPDATE cluster_jobs SET holder = $1, lease_until = ${later(2)}, attempts = attempts + 1
         WHERE id IN (SELECT id FROM cluster_jobs WHERE kind = $3 AND ${FREE}
                      ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
         ${RETURNING}`,
        [holder, Math.round(leaseMs), kind, limit],
      );
    },

    /** Claims one job by id when it is free. */
    async claimId(id: string, leaseMs: number): Promise<JobRow | undefined> {
      const rows = await query<JobRow>(
        `UPDATE cluster_jobs SET holder = $1, lease_until = ${later(2)}, attempts = attempts + 1
         WHERE id = (SELECT id FROM cluster_jobs WHERE id = $3::bigint AND ${FREE}
                     FOR UPDATE SKIP LOCKED)
         ${RETURNING}`,
        [holder, Math.round(leaseMs), id],
      );
      return rows[0];
    },

    /** Renews the leases of the jobs this process holds; answers the ids it still holds. */
    async renew(ids: readonly string[], leaseMs: number): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await query<{ id: string }>(
        `UPDATE cluster_jobs SET lease_until = ${later(2)}
         WHERE holder = $1 AND id = ANY($3::bigint[]) RETURNING id::text AS id`,
        [holder, Math.round(leaseMs), [...ids]],
      );
      return new Set(rows.map((r) => r.id));
    },

    /** The job is done: deleted (when this process still holds it). */
    async done(id: string): Promise<void> {
      await query('DELETE FROM cluster_jobs WHERE id = $1::bigint AND holder = $2', [id, holder]);
    },

    /** Gives the job back, to be claimed again after `delayMs` (by any process). */
    async giveBack(id: string, delayMs: number): Promise<void> {
      await query(
        `UPDATE cluster_jobs SET holder = NULL, lease_until = NULL, run_after = ${later(3)}
         WHERE id = $1::bigint AND holder = $2`,
        [id, holder, Math.round(delayMs)],
      );
    },
  };
}

export type JobStatements = ReturnType<typeof jobStatements>;
