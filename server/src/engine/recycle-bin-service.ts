/**
 * The recycle bin for desktops: list, detail, count, retention, restore (the desktop comes back
 * stopped with its disk) and permanent delete / empty (the disk goes). Entries belong to their
 * owner; admins, and the managers who manage the owner (same category, owner not an admin), may
 * act on them too.
 */
import { basename, dirname, isAbsolute, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { eq } from 'drizzle-orm';
import { ApiError } from '../lib/api-error.ts';
import { managesOwner } from '../lib/ownership.ts';
import type { AuthContext } from '../plugins/app/auth.ts';
import {
  recycleBin,
  recycleBinToDetail,
  recycleBinToWire,
  type DesktopRow,
  type RecycleBinRow,
} from '../db/schema.ts';
import { queryOn } from '../db/query.ts';
import type { Executor } from '../plugins/app/entity-repository.ts';
import { checkDesktopCreate, lockQuotaScopes } from './quotas.ts';
import { fields } from '../../../src/generated/fields.ts';
import type { RecycleBin, RecycleBinDetail } from '../../../src/generated/types.ts';

interface EntryData {
  /** The rows as they were, through JSON: timestamps are text, and the row times are not restored. */
  desktops?: (Omit<DesktopRow, 'accessed' | 'createdAt' | 'updatedAt'> & {
    accessed: string | Date;
    createdAt?: unknown;
    updatedAt?: unknown;
    ownerRole?: unknown;
  })[];
  storages?: { id: string; directory_path: string; status: string; actual_size?: number }[];
  agent_name?: string;
}

/**
 * Where a disk lives, as clients are told: its directory relative to the data directory (`disks`),
 * or only the directory's own name when it lives elsewhere. Server paths never leave the server.
 */
export function storageLocation(dataDir: string, diskPath: string): string {
  const dir = dirname(diskPath);
  const inside = relative(dataDir, dir);
  if (inside === '') return '.';
  return inside.startsWith('..') || isAbsolute(inside) ? basename(dir) : inside;
}

/** Longest desktop name (the edit form's limit). */
const MAX_NAME = Number(fields.DesktopUpdate.find((f) => f.path === 'name')?.maxLength);
/** How many " (restored n)" names a restore tries. */
const MAX_RESTORED_NAMES = 20;

/** Hours an entry stays in the bin when no retention is configured. */
const DEFAULT_CUTOFF_HOURS = 48;

function listItem(row: RecycleBinRow): RecycleBin {
  const data = row.data as EntryData;
  return {
    ...recycleBinToWire(row),
    agent_name: data.agent_name ?? null,
    desktops: data.desktops?.length ?? 0,
    templates: 0,
    deployments: 0,
    storages: data.storages?.length ?? 0,
  };
}

export type RecycleBinService = ReturnType<typeof createRecycleBinService>;

export function createRecycleBinService(app: FastifyInstance) {
  const entryFor = async (auth: AuthContext, id: string): Promise<RecycleBinRow> => {
    const row = await app.recycleBin.get(id);
    if (!row) throw new ApiError('not_found', 'Recycle bin entry not found', 'not_found');
    if (auth.role === 'admin' || row.ownerId === auth.userId) return row;
    if (auth.role === 'manager') {
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

  /**
   * The name a restored desktop comes back under: its own, or with a " (restored)" suffix (then
   * " (restored 2)", ...) when the owner has another desktop by that name meanwhile.
   */
  const restoredName = async (ownerId: string, name: string, on: Executor): Promise<string> => {
    for (let n = 0; n <= MAX_RESTORED_NAMES; n++) {
      const suffix = n === 0 ? '' : n === 1 ? ' (restored)' : ` (restored ${n})`;
      const candidate = `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
      if (!(await app.desktops.nameTaken(ownerId, candidate, undefined, on))) return candidate;
    }
    throw new ApiError(
      'conflict',
      'The owner already has desktops by this name',
      'new_desktop_name_exists',
      { name },
    );
  };

  const purge = async (row: RecycleBinRow) => {
    await setStatus(row, 'deleting');
    for (const s of (row.data as EntryData).storages ?? [])
      await app.engine.deleteDisk(s.directory_path);
    await setStatus(row, 'deleted');
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
      const row = await entryFor(auth, id);
      const data = row.data as EntryData;
      const owner = await app.users.withNames(row.ownerId);
      const named = (ref: string | null | undefined, name: string | undefined) => ({
        id: ref ?? '',
        name: name ?? '[Deleted]',
      });
      return {
        ...recycleBinToDetail(row),
        agent_name: data.agent_name ?? null,
        desktops: (data.desktops ?? []).map((d) => ({
          id: d.id,
          name: d.name,
          accessed: Math.floor(new Date(d.accessed).getTime() / 1000),
          category: named(d.categoryId, owner?.categoryName),
          group: named(d.groupId, owner?.groupName),
          username: owner?.username ?? null,
        })),
        templates: [],
        deployments: [],
        storages: (data.storages ?? []).map((s) => ({
          id: s.id,
          directory_path: storageLocation(app.config.dataDir, s.directory_path),
          status: s.status,
          type: 'qcow2',
          parent: null,
          user: owner?.username ?? null,
          domains: (data.desktops ?? []).map((d) => d.name),
          actual_size: s.actual_size ?? 0,
        })),
      };
    },

    /** Puts the entry's desktops back (stopped, with their disks), inside the owner's quota. */
    async restore(auth: AuthContext, id: string): Promise<{ recycle_bin_ids: string[] }> {
      const row = await entryFor(auth, id);
      assertRecycled(row);
      const data = row.data as EntryData;
      const owner = await app.users.byId(row.ownerId);
      if (!owner)
        throw new ApiError(
          'not_found',
          'The owner of these items no longer exists',
          'unable_to_restore_user',
          {
            user: row.ownerId,
          },
        );
      const subject = {
        userId: owner.id,
        groupId: owner.groupId,
        categoryId: owner.categoryId,
        role: owner.role,
      };
      // One transaction: the entry is claimed first (recycled -> restored, a row lock), so among
      // restores sent at the same time exactly one brings the desktops back; each desktop counts
      // against the owner's quota and limits like a create, under the same locks.
      const restored = await app.db.transaction(async (tx) => {
        const claimed = await app.recycleBin.update(
          row.id,
          { status: 'restored' },
          { condition: eq(recycleBin.status, 'recycled'), on: tx },
        );
        if (!claimed) return undefined;
        const query = queryOn(tx);
        await lockQuotaScopes(query, subject);
        const ids: string[] = [];
        for (const recycled of data.desktops ?? []) {
          const { createdAt: _created, updatedAt: _updated, ownerRole: _role, ...d } = recycled;
          await checkDesktopCreate(
            query,
            subject,
            d.type === 'nonpersistent' ? 'volatile' : 'desktops',
          );
          await app.desktops.table.create(
            {
              ...d,
              name: await restoredName(owner.id, d.name, tx),
              state: 'stopped',
              runtime: {},
              queue: null,
              accessed: new Date(d.accessed),
            },
            tx,
          );
          ids.push(d.id);
        }
        return ids;
      });
      if (!restored) {
        const now = await app.recycleBin.get(row.id);
        if (now) assertRecycled(now);
        throw new ApiError('not_found', 'Recycle bin entry not found', 'not_found');
      }
      for (const desktopId of restored)
        await app.desktops.publishCurrent(desktopId, 'desktops.created');
      publishStatus(row, 'restored');
      app.log.info({ entry: row.id, agent: auth.userId }, 'recycle bin entry restored');
      return { recycle_bin_ids: [row.id] };
    },

    async delete(auth: AuthContext, id: string): Promise<void> {
      const row = await entryFor(auth, id);
      assertRecycled(row);
      await purge(row);
    },

    /** Purges every entry the caller recycled of their own. */
    async empty(auth: AuthContext): Promise<void> {
      for (const row of await app.recycleBin.ownedBy(auth.userId, 'recycled', auth.userId))
        await purge(row);
    },
  };
}
