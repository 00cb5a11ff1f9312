/**
 * A desktop's bastion target leaves with its desktop and comes back with it. Removing a desktop
 * row deletes its target in the same transaction and carries the target's row on the removed
 * desktop row (`bastionTargets`): a recycle-bin entry keeps the removed rows, so it keeps the
 * target too. The removal's announcement tells the owner's sockets the target is gone
 * (`targets_delete`); a restore puts it back as it was (same id, custom domain, SSH keys and
 * ports; the custom domain is dropped when another target took it meanwhile) and announces it
 * (`targets_add`). Emptying the bin deletes only that copy, which no client shows.
 */
import type { FastifyInstance } from 'fastify';
import { eq, getTableColumns, inArray } from 'drizzle-orm';
import {
  bastionReadToWire,
  bastionTargets,
  bastionTargetsComputed,
  type BastionRow,
  type DesktopRow,
} from '../db/schema.ts';
import type { EntityRepository, Executor } from './entity-repository.ts';

/** A removed desktop row with the bastion targets that left with it. */
export type DesktopWithTargets = DesktopRow & { bastionTargets?: BastionRow[] };

/** The desktops table whose remove takes the desktop's bastion target along. */
export function removingBastionTargets(
  table: EntityRepository<'desktops'>,
  db: Executor,
): EntityRepository<'desktops'> {
  return {
    ...table,
    async remove(id, on = db) {
      const targets = await on
        .delete(bastionTargets)
        .where(eq(bastionTargets.desktopId, id))
        .returning();
      const row: DesktopWithTargets | undefined = await table.remove(id, on);
      if (row && targets.length > 0) row.bastionTargets = targets;
      return row;
    },
  };
}

/** Tells the owners' sockets the targets of a removed desktop row are gone. */
export function announceBastionTargetsRemoved(app: FastifyInstance, row: DesktopWithTargets): void {
  for (const target of row.bastionTargets ?? [])
    app.events.publish({
      name: 'bastion.deleted',
      payload: { id: target.id, version: target.version + 1 },
      ownerId: target.userId,
    });
}

/**
 * Puts back the targets a restored desktop row carried (inside the restore's transaction); the
 * ids put back, for announceBastionTargetsRestored once it has committed.
 */
export async function restoreBastionTargets(
  row: Pick<DesktopWithTargets, 'id' | 'bastionTargets'>,
  tx: Executor,
): Promise<string[]> {
  const ids: string[] = [];
  for (const target of row.bastionTargets ?? []) {
    const taken =
      target.domain !== null &&
      (await tx
        .select({ id: bastionTargets.id })
        .from(bastionTargets)
        .where(eq(bastionTargets.domain, target.domain))
        .limit(1)
        .then((found) => found.length > 0));
    await tx
      .insert(bastionTargets)
      .values({ ...target, desktopId: row.id, domain: taken ? null : target.domain });
    ids.push(target.id);
  }
  return ids;
}

/** Tells the owners' sockets the restored targets are back. */
export async function announceBastionTargetsRestored(
  app: FastifyInstance,
  ids: readonly string[],
): Promise<void> {
  if (ids.length === 0) return;
  const rows = await app.db
    .select({ ...getTableColumns(bastionTargets), ...bastionTargetsComputed })
    .from(bastionTargets)
    .where(inArray(bastionTargets.id, [...ids]));
  for (const row of rows)
    app.events.publish({
      name: 'bastion.created',
      payload: bastionReadToWire(row),
      ownerId: row.userId,
    });
}
