/**
 * Limited things counted across the nodes (open consoles, running media downloads): a slot is a
 * row of `cluster_slots`, taken under a transaction-scoped advisory lock of its kind (so two nodes
 * taking the last slot at once admit one), given back by deleting it. The process holding a slot
 * renews it at each beat of its work (work.ts); a slot of a process that died expires after a
 * lease and counts no more. Two nodes together hold the limits one node holds.
 */
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/client.ts';
import { later } from './leases.ts';
import type { Work } from './work.ts';

export interface SlotLimits {
  /** slots of one user */
  perUser?: number;
  /** slots of one item (a desktop's consoles) */
  perItem?: number;
  /** slots in all */
  total?: number;
}

export type SlotScope = 'user' | 'item' | 'server';

export interface HeldSlot {
  /**
   * Gives the slot back; resolves once no node counts it any more (a failed delete is logged, and
   * the row expires after a lease). Calling it again does nothing.
   */
  release(): Promise<void>;
}

export type SlotAnswer = { slot: HeldSlot } | { refused: SlotScope; limit: number };

export interface ClusterSlots {
  /** A slot of `kind` for the user (and item) unless a limit is reached. */
  take(
    kind: string,
    owner: { userId: string; itemId?: string },
    limits: SlotLimits,
  ): Promise<SlotAnswer>;
  /** Slots of `kind` held now on every node (of one user, or in all). */
  count(kind: string, userId?: string): Promise<number>;
}

interface Counts {
  mine: number;
  item: number;
  total: number;
}

export function createClusterSlots(
  database: Pick<Database, 'query' | 'transaction'>,
  work: Pick<Work, 'holder' | 'leaseMs' | 'onBeat'>,
  log: { warn(obj: object, msg?: string): void },
): ClusterSlots {
  const held = new Set<string>();
  work.onBeat(async (holder) => {
    if (held.size > 0)
      await database.query(
        `UPDATE cluster_slots SET expires_at = ${later(3)} WHERE holder = $1 AND id = ANY($2::text[])`,
        [holder, [...held], Math.round(work.leaseMs)],
      );
  });

  const release = async (id: string): Promise<void> => {
    if (!held.delete(id)) return;
    // Not deleted (the database is away): it expires after a lease, as it is no longer renewed.
    await database
      .query('DELETE FROM cluster_slots WHERE id = $1', [id])
      .catch((err: unknown) => log.warn({ err }, 'slot not given back'));
  };

  return {
    async take(kind, { userId, itemId }, limits) {
      const id = randomUUID();
      const answer = await database.transaction(async (_exec, query): Promise<SlotAnswer> => {
        await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`cluster_slots:${kind}`]);
        await query('DELETE FROM cluster_slots WHERE kind = $1 AND expires_at < now()', [kind]);
        const counts = (
          await query<Counts>(
            `SELECT count(*) FILTER (WHERE user_id = $2)::int AS mine,
                    count(*) FILTER (WHERE item_id = $3)::int AS item,
                    count(*)::int AS total
             FROM cluster_slots WHERE kind = $1`,
            [kind, userId, itemId ?? null],
          )
        )[0] ?? { mine: 0, item: 0, total: 0 };
        if (limits.perItem !== undefined && itemId !== undefined && counts.item >= limits.perItem)
          return { refused: 'item', limit: limits.perItem };
        if (limits.perUser !== undefined && counts.mine >= limits.perUser)
          return { refused: 'user', limit: limits.perUser };
        if (limits.total !== undefined && counts.total >= limits.total)
          return { refused: 'server', limit: limits.total };
        await query(
          `INSERT INTO cluster_slots (id, kind, user_id, item_id, holder, expires_at)
           VALUES ($1, $2, $3, $4, $5, ${later(6)})`,
          [id, kind, userId, itemId ?? null, work.holder, Math.round(work.leaseMs)],
        );
        return { slot: { release: () => release(id) } };
      });
      if ('slot' in answer) held.add(id);
      return answer;
    },
    async count(kind, userId) {
      const rows = await database.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM cluster_slots
         WHERE kind = $1 AND expires_at >= now() AND ($2::text IS NULL OR user_id = $2)`,
        [kind, userId ?? null],
      );
      return rows[0]?.n ?? 0;
    },
  };
}
