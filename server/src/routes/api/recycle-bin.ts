/**
 * Recycle bin (reference server-resources section 9) for desktops: list, detail, count, retention,
 * restore (the desktop comes back stopped with its disk) and permanent delete / empty (the disk
 * goes). Entries belong to their owner; admins and managers of the owner's category may act too.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { and, desc, eq } from 'drizzle-orm';
import { route } from '../../lib/route.ts';
import { ApiError } from '../../lib/api-error.ts';
import { authOf } from '../../plugins/app/auth.ts';
import { desktops, recycleBin, type DesktopRow } from '../../db/schema.ts';
import { checkDesktopCreate } from '../../engine/quotas.ts';
import type { RecycleBin, RecycleBinDetail } from '../../../../src/generated/types.ts';

type EntryRow = typeof recycleBin.$inferSelect;
interface EntryData {
  desktops?: (Omit<DesktopRow, 'accessed' | 'createdAt' | 'updatedAt'> & {
    accessed: string | Date;
  })[];
  storages?: { id: string; directory_path: string; status: string; actual_size?: number }[];
  agent_name?: string;
}

const DEFAULT_CUTOFF_HOURS = 48;

function listItem(row: EntryRow): RecycleBin {
  const data = row.data as EntryData;
  return {
    id: row.id,
    accessed: Math.floor(row.accessed.getTime() / 1000),
    item_type: row.itemType as RecycleBin['item_type'],
    item_name: row.itemName,
    agent_id: row.agentId,
    agent_name: data.agent_name ?? null,
    owner_id: row.ownerId,
    status: row.status as RecycleBin['status'],
    desktops: data.desktops?.length ?? 0,
    templates: 0,
    deployments: 0,
    storages: data.storages?.length ?? 0,
    size: row.size,
  };
}

export default async function recycleBinRoutes(app: FastifyInstance) {
  const { db } = app;

  const entryFor = async (request: FastifyRequest): Promise<EntryRow> => {
    const auth = authOf(request);
    const { id } = request.params as { id: string };
    const row = (await db.select().from(recycleBin).where(eq(recycleBin.id, id)).limit(1))[0];
    if (!row) throw new ApiError('not_found', 'Recycle bin entry not found', 'not_found');
    if (auth.role === 'admin' || row.ownerId === auth.userId) return row;
    if (auth.role === 'manager') {
      const owner = await app.users.byId(row.ownerId);
      if (owner?.categoryId === auth.categoryId) return row;
    }
    throw new ApiError('forbidden', 'Not enough rights on this entry', 'forbidden');
  };

  const setStatus = async (row: EntryRow, status: 'restored' | 'deleting' | 'deleted') => {
    await db.update(recycleBin).set({ status }).where(eq(recycleBin.id, row.id));
    app.events.publish({
      name: 'recycle-bins.updated',
      payload: { id: row.id, status },
      ownerId: row.ownerId,
    });
  };

  const purge = async (row: EntryRow) => {
    await setStatus(row, 'deleting');
    for (const s of (row.data as EntryData).storages ?? [])
      await app.engine.deleteDisk(s.directory_path);
    await setStatus(row, 'deleted');
  };

  route(app, 'recycle-bins.list', async (request) => {
    const rows = await db
      .select()
      .from(recycleBin)
      .where(and(eq(recycleBin.ownerId, authOf(request).userId), eq(recycleBin.status, 'recycled')))
      .orderBy(desc(recycleBin.accessed));
    return rows.map(listItem);
  });

  route(app, 'recycle-bins.count', async (request) => {
    const rows = await db
      .select({ id: recycleBin.id })
      .from(recycleBin)
      .where(
        and(eq(recycleBin.ownerId, authOf(request).userId), eq(recycleBin.status, 'recycled')),
      );
    return rows.length;
  });

  route(app, 'recycle-bins.cutoffTime', async () => {
    const settings = (await app.settings.all()) as { recycle_bin_cutoff_time?: number | null };
    return {
      recycle_bin_cuttoff_time:
        settings.recycle_bin_cutoff_time === undefined
          ? DEFAULT_CUTOFF_HOURS
          : settings.recycle_bin_cutoff_time,
    };
  });

  route(app, 'recycle-bins.defaultDelete', async () => {
    const settings = (await app.settings.all()) as { recycle_bin_default_delete?: boolean };
    return settings.recycle_bin_default_delete === true;
  });

  route(app, 'recycle-bins.show', async (request) => {
    const row = await entryFor(request);
    const data = row.data as EntryData;
    const owner = await app.users.withNames(row.ownerId);
    const named = (id: string | null | undefined, name: string | undefined) => ({
      id: id ?? '',
      name: name ?? '[Deleted]',
    });
    const detail: RecycleBinDetail = {
      ...listItem(row),
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
    return detail;
  });

  route(app, 'recycle-bins.restore', async (request) => {
    const auth = authOf(request);
    const row = await entryFor(request);
    if (row.status !== 'recycled')
      throw new ApiError(
        'precondition_required',
        `The entry is ${row.status}`,
        'recycle_bin_not_recycled',
        { status: row.status },
      );
    const data = row.data as EntryData;
    const owner = await app.users.byId(row.ownerId);
    if (!owner)
      throw new ApiError(
        'not_found',
        'The owner of these items no longer exists',
        'unable_to_restore_user',
        { user: row.ownerId },
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
      const clash = await db
        .select({ id: desktops.id })
        .from(desktops)
        .where(and(eq(desktops.userId, owner.id), eq(desktops.name, d.name)))
        .limit(1);
      await app.desktops.create({
        ...d,
        name: clash.length ? `${d.name} (restored)`.slice(0, 50) : d.name,
        state: 'stopped',
        runtime: {},
        queue: null,
        accessed: new Date(d.accessed),
      });
    }
    await setStatus(row, 'restored');
    request.log.info({ entry: row.id, agent: auth.userId }, 'recycle bin entry restored');
    return { recycle_bin_ids: [row.id] };
  });

  route(app, 'recycle-bins.delete', async (request) => {
    const row = await entryFor(request);
    if (row.status !== 'recycled')
      throw new ApiError(
        'precondition_required',
        `The entry is ${row.status}`,
        'recycle_bin_not_recycled',
        { status: row.status },
      );
    await purge(row);
    return {};
  });

  route(app, 'recycle-bins.empty', async (request) => {
    const auth = authOf(request);
    const rows = await db
      .select()
      .from(recycleBin)
      .where(
        and(
          eq(recycleBin.ownerId, auth.userId),
          eq(recycleBin.agentId, auth.userId),
          eq(recycleBin.status, 'recycled'),
        ),
      );
    for (const row of rows) await purge(row);
    return {};
  });
}
