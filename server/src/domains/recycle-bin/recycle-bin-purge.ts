/**
 * Recycle-bin retention: an entry stays in the bin for the configured number of hours (the
 * `recycle_bin_cutoff_time` setting; 0 = deleted at once, null = kept forever). A timer deletes for
 * good, through the recycle bin's own permanent delete (disk files removed, `update_recycle_bin`
 * published to the owner, so counters stay live), every recycled entry older than that. The timer
 * runs on the leader node only (app.work), one run at a time; an entry restored or deleted
 * meanwhile is left to whoever got it first.
 */
import type { FastifyInstance } from 'fastify';
import { and, eq, lt } from 'drizzle-orm';
import { recycleBin } from '../../platform/db/schema.ts';

/** How often expired entries are looked for. */
export const PURGE_INTERVAL_MS = 5 * 60_000;

const HOUR_MS = 3_600_000;

/** Deletes for good the recycled entries older than the retention; answers their ids. */
export async function purgeExpired(app: FastifyInstance, now = new Date()): Promise<string[]> {
  const hours = await app.recycleBinService.cutoffHours();
  if (hours === null) return [];
  const expired = await app.recycleBin.list({
    where: and(
      eq(recycleBin.status, 'recycled'),
      lt(recycleBin.accessed, new Date(now.getTime() - hours * HOUR_MS)),
    ),
    orderBy: recycleBin.accessed,
  });
  const purged: string[] = [];
  for (const entry of expired) {
    try {
      // An entry restored or deleted by its owner since the list was read is left as it is.
      await app.recycleBinService.purgeById(entry.id);
      if ((await app.recycleBin.get(entry.id))?.status === 'deleted') purged.push(entry.id);
    } catch (err) {
      app.log.warn({ err, entry: entry.id }, 'recycle bin purge of an entry failed');
    }
  }
  if (purged.length > 0)
    app.log.info({ purged: purged.length, retentionHours: hours }, 'recycle bin entries purged');
  return purged;
}

export interface RecycleBinPurge {
  /**
   * (Re)starts the timer; every `intervalMs` (default PURGE_INTERVAL_MS) expired entries go, when
   * this node is the leader.
   */
  start(intervalMs?: number): void;
  stop(): void;
  /** One purge now (waits for a run in progress first); answers the purged ids. */
  runOnce(now?: Date): Promise<string[]>;
}

export function createRecycleBinPurge(app: FastifyInstance): RecycleBinPurge {
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<string[]> | undefined;

  const runOnce = async (now?: Date): Promise<string[]> => {
    while (current) await current.catch(() => undefined);
    const run = purgeExpired(app, now);
    current = run;
    try {
      return await run;
    } finally {
      current = undefined;
    }
  };

  return {
    start(intervalMs = PURGE_INTERVAL_MS) {
      if (timer) clearInterval(timer);
      timer = setInterval(() => {
        if (current || !app.work.isLeader) return;
        runOnce().catch((err: unknown) => app.log.warn({ err }, 'recycle bin purge failed'));
      }, intervalMs);
      timer.unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
    runOnce,
  };
}
