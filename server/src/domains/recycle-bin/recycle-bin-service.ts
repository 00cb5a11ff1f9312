/**
 * The recycle bin for desktops and templates: list, detail, count, retention, restore (desktops
 * come back stopped with their disks, templates usable again with theirs) and permanent delete /
 * empty (the disks go). Entries belong to their owner; admins, and the managers who manage the
 * owner (same category, owner not an admin), may act on them too.
 *
 * A template entry holds the template and everything made from it. Its desktops are overlays on
 * the template's disk and its duplicates share it: what is restored needs that disk, so an item
 * comes back only with the template it was made from (in the same entry, or still there; 428
 * otherwise), and deleting a template's disk for good also deletes the recycled entries of the
 * items made from it.
 *
 * A user entry holds a deleted account with everything it owned: a restore recreates the account
 * first (same id and password), then its items, in one transaction.
 */
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { managesOwner } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { recycleBin, type RecycleBinRow } from '../../platform/db/schema.ts';
import { hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';
import type { RecycleBin, RecycleBinDetail } from '../../../../src/generated/types.ts';
import { entryDetail, listItem, type EntryData } from './recycle-bin-entry.ts';
import { recycleBinRestore } from './recycle-bin-restore.ts';

/** Hours an entry stays in the bin when no retention is configured. */
const DEFAULT_CUTOFF_HOURS = 48;

/** What the restore shares with the rest of the service. */
export interface RecycleBinDeps {
  app: FastifyInstance;
  /** The entry when the caller may act on it (404/403 otherwise). */
  entryFor(auth: AuthContext, id: string): Promise<RecycleBinRow>;
  /** 428 unless the entry is still recycled. */
  assertRecycled(row: RecycleBinRow): void;
  publishStatus(row: RecycleBinRow, status: 'restored' | 'deleting' | 'deleted'): void;
}

export type RecycleBinService = ReturnType<typeof createRecycleBinService>;

export function createRecycleBinService(app: FastifyInstance) {
  const entryFor = async (auth: AuthContext, id: string): Promise<RecycleBinRow> => {
    const row = await app.recycleBin.get(id);
    if (!row) throw new ApiError('not_found', 'Recycle bin entry not found', 'not_found');
    if (hasRoleAtLeast(auth.role, role.admin) || row.ownerId === auth.userId) return row;
    if (auth.role === role.manager) {
      const owner = await app.users.byId(row.ownerId);
      if (owner && managesOwner(auth, owner)) return row;
    }
    throw new ApiError('forbidden', 'Not enough rights on this entry', 'forbidden');
  };

  const assertRecycled = (row: RecycleBinRow) => {
    if (row.status !== 'recycled')
      throw new ApiError(
        'precondition_required',
        `The entry is ${row.status}`,
        'recycle_bin_not_recycled',
        {
          status: row.status,
        },
      );
  };

  const publishStatus = (row: RecycleBinRow, status: 'restored' | 'deleting' | 'deleted') =>
    app.events.publish({
      name: 'recycle-bins.updated',
      payload: { id: row.id, status },
      ownerId: row.ownerId,
    });

  const setStatus = async (row: RecycleBinRow, status: 'restored' | 'deleting' | 'deleted') => {
    await app.recycleBin.update(row.id, { status });
    publishStatus(row, status);
  };

  /** Recycled entries holding items made from these templates (overlays on their disks, duplicates). */
  const dependingOn = async (templateIds: readonly string[]): Promise<RecycleBinRow[]> => {
    if (templateIds.length === 0) return [];
    const ids = new Set(templateIds);
    const recycled = await app.recycleBin.list({ where: eq(recycleBin.status, 'recycled') });
    return recycled.filter((entry) => {
      const data = entry.data as EntryData;
      return (
        (data.desktops ?? []).some((d) => d.templateId !== null && ids.has(d.templateId)) ||
        (data.templates ?? []).some((t) => t.duplicateOf !== null && ids.has(t.duplicateOf))
      );
    });
  };

  /**
   * Deletes an entry's disks for good. The disks of its templates were the base of whatever else
   * was made from them: the recycled entries of those items go too.
   */
  /**
   * Deletes a recycled entry for good with its disks. The entry is claimed first (recycled ->
   * deleting), so a restore that got it first keeps its disks: answers false then.
   */
  const purge = async (row: RecycleBinRow): Promise<boolean> => {
    const data = row.data as EntryData;
    const claimed = await app.recycleBin.update(
      row.id,
      { status: 'deleting' },
      { condition: eq(recycleBin.status, 'recycled') },
    );
    if (!claimed) return false;
    publishStatus(row, 'deleting');
    for (const s of data.storages ?? []) await app.engine.deleteDisk(s.directory_path);
    await setStatus(row, 'deleted');
    // The cards of the items gone for good, unless something else still shows them.
    await app.desktopService.releaseCards([
      ...(data.desktops ?? []).map((d) => d.image),
      ...(data.templates ?? []).map((t) => t.image),
      ...(data.deployments ?? []).map((d) => d.createDict.image),
    ]);
    const ownDisks = (data.templates ?? []).filter((t) => t.duplicateOf === null).map((t) => t.id);
    for (const dependent of await dependingOn(ownDisks)) await purge(dependent);
    return true;
  };

  return {
    async list(auth: AuthContext): Promise<RecycleBin[]> {
      return (await app.recycleBin.ownedBy(auth.userId, 'recycled')).map(listItem);
    },

    async count(auth: AuthContext): Promise<number> {
      return (await app.recycleBin.ownedBy(auth.userId, 'recycled')).length;
    },

    async cutoffHours(): Promise<number | null> {
      const settings = (await app.settings.all()) as { recycle_bin_cutoff_time?: number | null };
      return settings.recycle_bin_cutoff_time === undefined
        ? DEFAULT_CUTOFF_HOURS
        : settings.recycle_bin_cutoff_time;
    },

    async defaultDelete(): Promise<boolean> {
      const settings = (await app.settings.all()) as { recycle_bin_default_delete?: boolean };
      return settings.recycle_bin_default_delete === true;
    },

    async detail(auth: AuthContext, id: string): Promise<RecycleBinDetail> {
      return entryDetail(app, await entryFor(auth, id));
    },

    ...recycleBinRestore({ app, entryFor, assertRecycled, publishStatus }),

    async delete(auth: AuthContext, id: string): Promise<void> {
      const row = await entryFor(auth, id);
      assertRecycled(row);
      // Restored or deleted by another request meanwhile: answered as if it had been first.
      if (!(await purge(row))) assertRecycled((await app.recycleBin.get(row.id)) ?? row);
    },

    dependingOn,

    /** Deletes a recycled entry for good, for callers that have already checked the rights. */
    async purgeById(id: string): Promise<void> {
      const row = await app.recycleBin.get(id);
      if (row?.status === 'recycled') await purge(row);
    },

    /** Purges every entry the caller recycled of their own. */
    async empty(auth: AuthContext): Promise<void> {
      for (const row of await app.recycleBin.ownedBy(auth.userId, 'recycled', auth.userId))
        await purge(row);
    },
  };
}
