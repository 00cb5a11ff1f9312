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
import { basename, dirname, isAbsolute, relative } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { and, eq, inArray, ne } from 'drizzle-orm';
import { ApiError } from '../../platform/http/api-error.ts';
import { managesOwner } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import {
  groups,
  recycleBin,
  recycleBinToDetail,
  recycleBinToWire,
  templates,
  users,
  type DeploymentRow,
  type DesktopRow,
  type RecycleBinRow,
  type TemplateRow,
  type UserRow,
} from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import {
  checkDesktopCreate,
  checkTemplateCreate,
  lockQuotaScopesOf,
  type QuotaSubject,
} from '../quotas/index.ts';
import { fields } from '../../../../src/generated/fields.ts';
import type { RecycleBin, RecycleBinDetail } from '../../../../src/generated/types.ts';

interface EntryData {
  /** The rows as they were, through JSON: timestamps are text, and the row times are not restored. */
  desktops?: (Omit<DesktopRow, 'accessed' | 'createdAt' | 'updatedAt'> & {
    accessed: string | Date;
    createdAt?: unknown;
    updatedAt?: unknown;
    ownerRole?: unknown;
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

const dateOrNull = (value: string | null) => (value === null ? null : new Date(value));

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
    templates: data.templates?.length ?? 0,
    deployments: data.deployments?.length ?? 0,
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

  /** True when the owner has a template by this (trimmed) name. */
  const templateNameTaken = async (ownerId: string, name: string, on: Executor) =>
    (
      await app.templates.list({
        where: eq(templates.userId, ownerId),
        on,
      })
    ).some((t) => t.name.trim() === name.trim());

  /**
   * The name a restored desktop or template comes back under: its own, or with a " (restored)"
   * suffix (then " (restored 2)", ...) when the owner has another one by that name meanwhile.
   */
  const restoredName = async (
    kind: 'desktop' | 'template',
    ownerId: string,
    name: string,
    on: Executor,
  ): Promise<string> => {
    for (let n = 0; n <= MAX_RESTORED_NAMES; n++) {
      const suffix = n === 0 ? '' : n === 1 ? ' (restored)' : ` (restored ${n})`;
      const candidate = `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`;
      const taken =
        kind === 'desktop'
          ? await app.desktops.nameTaken(ownerId, candidate, undefined, on)
          : await templateNameTaken(ownerId, candidate, on);
      if (!taken) return candidate;
    }
    throw new ApiError(
      'conflict',
      `The owner already has ${kind}s by this name`,
      kind === 'desktop' ? 'new_desktop_name_exists' : 'new_template_name_exists',
      { name },
    );
  };

  /**
   * Recreates a deleted account as it was (same id, password and keys), in its group: 404
   * group_not_found when the group is gone, 409 user_exists when the user name was taken again in
   * that category. Links sent by mail before the delete no longer work; the VPN address is given
   * up when somebody else has it now.
   */
  const recreateUser = async (account: NonNullable<EntryData['user']>, tx: Executor) => {
    const [group] = await tx
      .select({ id: groups.id })
      .from(groups)
      .where(eq(groups.id, account.groupId))
      .limit(1);
    if (!group)
      throw new ApiError('not_found', 'The group of this user is gone', 'group_not_found', {
        group: account.groupId,
      });
    const addressTaken =
      account.wgAddress !== null &&
      (
        await tx
          .select({ id: users.id })
          .from(users)
          .where(and(eq(users.wgAddress, account.wgAddress), ne(users.id, account.id)))
          .limit(1)
      ).length > 0;
    const inserted = await tx
      .insert(users)
      .values({
        ...account,
        passwordLastUpdated: dateOrNull(account.passwordLastUpdated),
        accessed: dateOrNull(account.accessed),
        apiKeyExpires: dateOrNull(account.apiKeyExpires),
        createdAt: new Date(account.createdAt),
        emailVerificationJti: null,
        passwordResetJti: null,
        ...(addressTaken ? { wgAddress: null, wgPrivateKey: null, wgPublicKey: null } : {}),
      })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (inserted.length === 0)
      throw new ApiError(
        'conflict',
        `The user ${account.username} exists already in that category`,
        'user_exists',
        { username: account.username },
      );
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
      const row = await entryFor(auth, id);
      const data = row.data as EntryData;
      const items = [
        ...(data.desktops ?? []),
        ...(data.templates ?? []),
        ...(data.deployments ?? []),
      ];
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
            status: s.status,
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
    },

    /**
     * Puts the entry's templates (usable again, with their disks) and desktops (stopped, with
     * theirs) back, each inside its owner's quota and limits.
     */
    async restore(auth: AuthContext, id: string): Promise<{ recycle_bin_ids: string[] }> {
      const row = await entryFor(auth, id);
      assertRecycled(row);
      const data = row.data as EntryData;
      const account = data.user;
      const ownerIds = [
        ...new Set([
          row.ownerId,
          ...(data.templates ?? []).map((t) => t.userId),
          ...(data.desktops ?? []).map((d) => d.userId),
        ]),
      ].filter((ownerId) => ownerId !== account?.id);
      const subjects = new Map<string, QuotaSubject>();
      // a user entry brings its owner back first: the items count against the recreated account
      if (account)
        subjects.set(account.id, {
          userId: account.id,
          groupId: account.groupId,
          categoryId: account.categoryId,
          role: account.role,
        });
      for (const ownerId of ownerIds) {
        const owner = await app.users.byId(ownerId);
        if (!owner)
          throw new ApiError(
            'not_found',
            'The owner of these items no longer exists',
            'unable_to_restore_user',
            { user: ownerId },
          );
        subjects.set(owner.id, {
          userId: owner.id,
          groupId: owner.groupId,
          categoryId: owner.categoryId,
          role: owner.role,
        });
      }
      const subjectOf = (ownerId: string): QuotaSubject => {
        const subject = subjects.get(ownerId);
        if (!subject) throw new Error(`no quota subject for ${ownerId}`);
        return subject;
      };
      // One transaction: the entry is claimed first (recycled -> restored, a row lock), so among
      // restores sent at the same time exactly one brings the items back; each item counts
      // against its owner's quota and limits like a create, under the same locks.
      const restored = await app.db.transaction(async (tx) => {
        const claimed = await app.recycleBin.update(
          row.id,
          { status: 'restored' },
          { condition: eq(recycleBin.status, 'recycled'), on: tx },
        );
        if (!claimed) return undefined;
        if (account) await recreateUser(account, tx);
        const query = queryOn(tx);
        await lockQuotaScopesOf(query, [...subjects.values()]);
        // Every item needs the template whose disk it is made on: in this entry, or still there.
        const inEntry = new Set((data.templates ?? []).map((t) => t.id));
        const needed = [
          ...(data.desktops ?? []).map((d) => d.templateId),
          ...(data.templates ?? []).map((t) => t.duplicateOf),
        ].filter((t): t is string => t !== null && !inEntry.has(t));
        const present = new Set(
          needed.length === 0
            ? []
            : (await app.templates.list({ where: inArray(templates.id, needed), on: tx })).map(
                (t) => t.id,
              ),
        );
        const missing = needed.find((t) => !present.has(t));
        if (missing !== undefined)
          throw new ApiError(
            'precondition_required',
            'The template these items were made from is gone',
            'parent_template_not_found',
            { id: missing },
          );
        const templateIds: string[] = [];
        for (const recycled of data.templates ?? []) {
          const { createdAt: _created, updatedAt: _updated, ...t } = recycled;
          await checkTemplateCreate(query, subjectOf(t.userId));
          await app.templates.create(
            {
              ...t,
              name: await restoredName('template', t.userId, t.name, tx),
              // a copy the deletion interrupted can not be taken up again: its disk is incomplete
              status: t.status === 'creating' ? 'failed' : t.status,
              progress: null,
            },
            tx,
          );
          templateIds.push(t.id);
        }
        const deploymentIds: string[] = [];
        for (const recycled of data.deployments ?? []) {
          const { createdAt: _created, updatedAt: _updated, ...p } = recycled;
          await app.deployments.create(p, tx);
          deploymentIds.push(p.id);
        }
        const desktopIds: string[] = [];
        for (const recycled of data.desktops ?? []) {
          const { createdAt: _created, updatedAt: _updated, ownerRole: _role, ...d } = recycled;
          await checkDesktopCreate(
            query,
            subjectOf(d.userId),
            d.type === 'nonpersistent' ? 'volatile' : 'desktops',
          );
          await app.desktops.table.create(
            {
              ...d,
              name: await restoredName('desktop', d.userId, d.name, tx),
              state: 'stopped',
              runtime: {},
              queue: null,
              accessed: new Date(d.accessed),
            },
            tx,
          );
          desktopIds.push(d.id);
        }
        return { templateIds, desktopIds, deploymentIds };
      });
      if (!restored) {
        const now = await app.recycleBin.get(row.id);
        if (now) assertRecycled(now);
        throw new ApiError('not_found', 'Recycle bin entry not found', 'not_found');
      }
      for (const templateId of restored.templateIds)
        await app.templateService.publish(templateId, 'templates.created');
      for (const desktopId of restored.desktopIds) {
        const row = await app.desktops.table.get(desktopId);
        // a desktop of an invisible deployment stays out of its user's list
        if (row && (!row.tag || (row.visible && (await app.deploymentService.isVisible(row)))))
          await app.desktops.publishCurrent(desktopId, 'desktops.created');
      }
      await app.deploymentService.restored(restored.deploymentIds);
      publishStatus(row, 'restored');
      app.log.info({ entry: row.id, agent: auth.userId }, 'recycle bin entry restored');
      return { recycle_bin_ids: [row.id] };
    },

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
