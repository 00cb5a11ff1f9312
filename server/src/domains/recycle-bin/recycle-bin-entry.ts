/**
 * A recycle-bin entry as stored (the rows it holds, through JSON) and as clients see it: the list
 * item with its counts, and the detail naming its items, their owners and their disks (where a
 * disk lives never leaves the server as a full path).
 */
import { basename, dirname, isAbsolute, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import {
  recycleBinToDetail,
  recycleBinToWire,
  type BastionRow,
  type DeploymentRow,
  type DesktopRow,
  type RecycleBinRow,
  type TemplateRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import type { RecycleBin, RecycleBinDetail } from '../../../../src/generated/types.ts';

export interface EntryData {
  /** The rows as they were, through JSON: timestamps are text, and the row times are not restored. */
  desktops?: (Omit<DesktopRow, 'accessed' | 'createdAt' | 'updatedAt'> & {
    accessed: string | Date;
    createdAt?: unknown;
    updatedAt?: unknown;
    ownerRole?: unknown;
    /** The desktop's bastion targets, restored with it (`DesktopWithTargets`). */
    bastionTargets?: BastionRow[];
  })[];
  templates?: (Omit<TemplateRow, 'createdAt' | 'updatedAt'> & {
    createdAt?: unknown;
    updatedAt?: unknown;
  })[];
  storages?: { id: string; directory_path: string; status: string; actual_size?: number }[];
  /** A deployment entry: the deployment, restored before its desktops (they name it in `tag`). */
  deployments?: (Omit<DeploymentRow, 'createdAt' | 'updatedAt'> & {
    createdAt?: unknown;
    updatedAt?: unknown;
  })[];
  agent_name?: string;
  /** A user entry: the account as it was (through JSON: its times are text). */
  user?: Omit<UserRow, 'passwordLastUpdated' | 'accessed' | 'apiKeyExpires' | 'createdAt'> & {
    passwordLastUpdated: string | null;
    accessed: string | null;
    apiKeyExpires: string | null;
    createdAt: string;
  };
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

export function listItem(row: RecycleBinRow): RecycleBin {
  const data = row.data as EntryData;
  return {
    ...recycleBinToWire(row),
    agent_name: data.agent_name ?? null,
    desktops: data.desktops?.length ?? 0,
    templates: data.templates?.length ?? 0,
    deployments: data.deployments?.length ?? 0,
    storages: data.storages?.length ?? 0,
  };
}

/**
 * A disk's status follows its entry's: back in use (`ready`) once the entry is restored, gone
 * once it is deleted, else as it was recycled.
 */
function diskStatus(entry: RecycleBinRow['status'], recycled: string): string {
  if (entry === 'restored') return 'ready';
  if (entry === 'deleted') return 'deleted';
  return recycled;
}

/** The detail of an entry: its desktops, templates, deployments and disks, named. */
export async function entryDetail(
  app: FastifyInstance,
  row: RecycleBinRow,
): Promise<RecycleBinDetail> {
  const data = row.data as EntryData;
  const items = [...(data.desktops ?? []), ...(data.templates ?? []), ...(data.deployments ?? [])];
  const unique = (ids: string[]) => [...new Set(ids)];
  const [owners, categories, groups] = await Promise.all([
    app.directory.usersByIds(unique(items.map((i) => i.userId))),
    app.directory.categoriesByIds(unique(items.map((i) => i.categoryId))),
    app.directory.groupsByIds(unique(items.map((i) => i.groupId))),
  ]);
  const username = (userId: string) =>
    owners.find((u) => u.id === userId)?.username ??
    (data.user?.id === userId ? data.user.username : null);
  const named = (ref: string, rows: { id: string; name: string }[]) => ({
    id: ref,
    name: rows.find((r) => r.id === ref)?.name ?? '[Deleted]',
  });
  const domain = (d: (typeof items)[number], accessed: number) => ({
    id: d.id,
    name: d.name,
    accessed,
    category: named(d.categoryId, categories),
    group: named(d.groupId, groups),
    username: username(d.userId),
  });
  const entryTime = Math.floor(row.accessed.getTime() / 1000);
  return {
    ...recycleBinToDetail(row),
    agent_name: data.agent_name ?? null,
    desktops: (data.desktops ?? []).map((d) =>
      domain(d, Math.floor(new Date(d.accessed).getTime() / 1000)),
    ),
    templates: (data.templates ?? []).map((t) => domain(t, entryTime)),
    deployments: (data.deployments ?? []).map((p) => ({
      id: p.id,
      name: p.name,
      create_dict: { name: p.desktopName },
      category: named(p.categoryId, categories),
      group: named(p.groupId, groups),
      user: username(p.userId),
    })),
    storages: (data.storages ?? []).map((s) => {
      const desktop = data.desktops?.find((d) => d.id === s.id);
      const template = data.templates?.find((t) => t.id === s.id);
      const item = desktop ?? template;
      return {
        id: s.id,
        directory_path: storageLocation(app.config.dataDir, s.directory_path),
        status: diskStatus(row.status, s.status),
        type: 'qcow2',
        parent: desktop?.templateId ?? null,
        user: item ? username(item.userId) : null,
        domains: [
          ...(data.desktops ?? []).filter((d) => d.id === s.id).map((d) => d.name),
          ...(data.templates ?? [])
            .filter((t) => t.id === s.id || t.duplicateOf === s.id)
            .map((t) => t.name),
        ],
        actual_size: s.actual_size ?? 0,
      };
    }),
  };
}
