/**
 * The recycle bin for desktops: list, detail, count, retention, restore (the desktop comes back
 * stopped with its disk) and permanent delete / empty (the disk goes). Entries belong to their
 * owner; admins and managers of the owner's category may act on them too.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../lib/api-error.ts';
import type { AuthContext } from '../plugins/app/auth.ts';
import {
  recycleBinToDetail,
  recycleBinToWire,
  type DesktopRow,
  type RecycleBinRow,
} from '../db/schema.ts';
import { checkDesktopCreate } from './quotas.ts';
import type { RecycleBin, RecycleBinDetail } from '../../../src/generated/types.ts';

interface EntryData {
  desktops?: (Omit<DesktopRow, 'accessed' | 'createdAt' | 'updatedAt'> & {
    accessed: string | Date;
  })[];
  storages?: { id: string; directory_path: string; status: string; actual_size?: number }[];
  agent_name?: string;
}

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
      if (owner?.categoryId === auth.categoryId) return row;
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

  const setStatus = async (row: RecycleBinRow, status: 'restored' | 'deleting' | 'deleted') => {
    await app.recycleBin.update(row.id, { status });
    app.events.publish({
      name: 'recycle-bins.updated',
      payload: { id: row.id, status },
      ownerId: row.ownerId,
    });
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
          directory_path: s.directory_path,
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
      for (const d of data.desktops ?? []) {
        await checkDesktopCreate(
          app.database.query,
          {
            userId: owner.id,
            groupId: owner.groupId,
            categoryId: owner.categoryId,
            role: owner.role,
          },
          d.type === 'nonpersistent' ? 'volatile' : 'desktops',
        );
        const clash = await app.desktops.nameTaken(owner.id, d.name);
        await app.desktops.create({
          ...d,
          name: clash ? `${d.name} (restored)`.slice(0, 50) : d.name,
          state: 'stopped',
          runtime: {},
          queue: null,
          accessed: new Date(d.accessed),
        });
      }
      await setStatus(row, 'restored');
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
