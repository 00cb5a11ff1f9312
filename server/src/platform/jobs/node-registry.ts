/**
 * This node in the `portal_nodes` table, which the admins' list of live nodes reads (adminNodes):
 * at every beat of its background work, while it holds its node lease, the node writes its row
 * (when its process started, the version it runs, the address it listens on, its last beat, and
 * the process that holds its leases, from which the list computes whether it leads and which jobs
 * and leases it holds); it removes the row when it closes. Whether a node is live is its node
 * lease's alone: a row whose lease expired (a node killed) is not listed (`liveNode`), and the
 * leader deletes it at its next beat. The registry tells its listeners when this node's row is
 * inserted and when a row is deleted (this node's at close, a dead node's by the leader): each
 * deletion is told once, by the process that made it.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../db/client.ts';
import { NODE_LEASE_PREFIX, type Work, type WorkLog } from './work.ts';

export interface NodeFacts {
  /** when this node's process started */
  startedAt: Date;
  /** the portal version it runs */
  version: string;
  /** the host and port it listens on (read at each beat: known once it listens) */
  address(): string;
  log: Pick<WorkLog, 'warn'>;
}

/** A row inserted (this node's, `joined`) or deleted (`left`), by the node's name. */
export interface NodeChange {
  kind: 'joined' | 'left';
  name: string;
}

export interface NodeRegistry {
  /** Removes this node's row (it closes). */
  remove(): Promise<void>;
  /** Called after each change, in order; a failing listener is logged. */
  onChange(listener: (change: NodeChange) => Promise<void>): void;
}

/** The rows of `portal_nodes` whose node still holds its node lease. */
export const liveNode: SQL = sql.raw(
  `EXISTS (SELECT 1 FROM cluster_leases l WHERE l.name = '${NODE_LEASE_PREFIX}' || "portal_nodes"."name" AND l.holder = "portal_nodes"."holder" AND l.expires_at >= now())`,
);

export function registerNode(query: Database['query'], work: Work, facts: NodeFacts): NodeRegistry {
  const lease = `${NODE_LEASE_PREFIX}${work.nodeName}`;
  const listeners: ((change: NodeChange) => Promise<void>)[] = [];
  const tell = async (change: NodeChange) => {
    for (const listener of listeners)
      await listener(change).catch((err: unknown) =>
        facts.log.warn({ err, node: change.name }, 'node change not told'),
      );
  };
  const beat = async (holder: string) => {
    // Written only while this process holds the node's lease: another process started with the
    // same NODE_NAME does not take the row over.
    const written = await query<{ inserted: boolean }>(
      `INSERT INTO portal_nodes (name, holder, started_at, version, address, beat_at)
       SELECT $1, $2, $3::timestamptz, $4, $5, now()
       WHERE EXISTS (SELECT 1 FROM cluster_leases
                     WHERE name = $6 AND holder = $2 AND expires_at >= now())
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder,
         started_at = EXCLUDED.started_at, version = EXCLUDED.version,
         address = EXCLUDED.address, beat_at = EXCLUDED.beat_at
       RETURNING (xmax = 0) AS inserted`,
      [work.nodeName, holder, facts.startedAt.toISOString(), facts.version, facts.address(), lease],
    );
    if (written[0]?.inserted) await tell({ kind: 'joined', name: work.nodeName });
    if (!work.isLeader) return;
    const dead = await query<{ name: string }>(
      `DELETE FROM portal_nodes WHERE NOT EXISTS (SELECT 1 FROM cluster_leases l
         WHERE l.name = $1 || portal_nodes.name AND l.holder = portal_nodes.holder
           AND l.expires_at >= now())
       RETURNING name`,
      [NODE_LEASE_PREFIX],
    );
    for (const { name } of dead) await tell({ kind: 'left', name });
  };
  // A row not written is logged: the beat goes on (its job claims do not wait for the list).
  work.onBeat((holder) =>
    beat(holder).catch((err: unknown) => facts.log.warn({ err }, 'node row not written')),
  );
  return {
    async remove() {
      const removed = await query(
        'DELETE FROM portal_nodes WHERE name = $1 AND holder = $2 RETURNING name',
        [work.nodeName, work.holder],
      );
      if (removed.length > 0) await tell({ kind: 'left', name: work.nodeName });
    },
    onChange(listener) {
      listeners.push(listener);
    },
  };
}
