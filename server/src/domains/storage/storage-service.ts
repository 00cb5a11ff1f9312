/**
 * The caller's disks and the operations on them: the list of ready disks with their real sizes,
 * growing a disk, and cancelling an operation that has not started yet.
 *
 * A disk belongs to a desktop and has the desktop's id (the same id the recycle bin gives the disk
 * of a recycled desktop); its file is the desktop's disk path. Sizes come from `qemu-img info`
 * through the driver, remembered per file (disk-sizes.ts).
 *
 * Growing a disk: the desktop row is locked while the request checks it, so the increases of one
 * disk are decided one after the other: the new size (the size the disk will have once the
 * operations already accepted are done, plus the increment) must stay within the owner's disk size
 * quota, and the desktop must be stopped; it then goes to `maintenance` (no start, edit or delete)
 * and the operation waits in a queue ordered by priority (admins choose it; everybody else's is
 * low). Only the user who asked for an operation may cancel it, and only while it waits: a running
 * `qemu-img resize` is never interrupted, the cancel answers once it has ended. Either way the
 * desktop goes back to `stopped` and `update_storage` tells the owner the disk's status and size.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, asc, eq, isNull, notInArray, or } from 'drizzle-orm';
import { constraints } from '../../../../src/generated/constants.ts';
import type {
  DesktopState,
  Storage,
  StorageIncrease,
  StorageTaskResponse,
} from '../../../../src/generated/types.ts';
import { desktops, type DesktopRow } from '../../platform/db/schema.ts';
import { queryOn } from '../../platform/db/query.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import { assertDesktopAccess } from '../../platform/lib/ownership.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import { assertStateAllows } from '../desktops/index.ts';
import { createDiskSizeReader, type DiskSizeReader } from './disk-sizes.ts';
import { appliedQuota, hardwareLimits } from '../quotas/index.ts';
import { storageLocation } from '../recycle-bin/index.ts';
import { desktopStates, hasRoleAtLeast, role } from '../../../../src/generated/policy.ts';

/** Disk operations running at once (the others wait in the queue). */
export const STORAGE_CONCURRENCY = 2;

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** The action a desktop under a disk increase shows. */
const RESIZE_ACTION = 'resize';

const QUOTA_RULE = constraints.storage.increaseWithinQuota;

type Priority = StorageIncrease['priority'];
const PRIORITY_RANK: Record<Priority, number> = { high: 0, medium: 1, low: 2 };

interface Task {
  id: string;
  diskId: string;
  ownerId: string;
  path: string;
  initiator: string;
  priority: Priority;
  serial: number;
  /** Virtual size the disk has before and will have after the operation (bytes). */
  fromBytes: number;
  toBytes: number;
  state: 'queued' | 'running' | 'cancelled';
  done: Promise<void>;
  settle: () => void;
}

/** A promise and the function that resolves it (the executor runs at once). */
function whenSettled(): { done: Promise<void>; settle: () => void } {
  let resolveDone: (() => void) | undefined;
  const done = new Promise<void>((resolve) => {
    resolveDone = resolve;
  });
  return { done, settle: () => resolveDone?.() };
}

/** The file of a desktop's disk. */
export function diskPathOf(app: FastifyInstance, desktop: Pick<DesktopRow, 'id' | 'diskPath'>) {
  return desktop.diskPath ?? app.engine.diskPath(desktop.id);
}

export interface StorageService {
  /** The caller's ready disks with their real sizes, by desktop name. */
  list(auth: AuthContext): Promise<Storage[]>;
  /** Grows a disk by `increment` GB (queued); answers the operation's id. */
  increase(auth: AuthContext, params: StorageIncrease): Promise<StorageTaskResponse>;
  /** Cancels the waiting operation of a disk (its initiator only). */
  abort(auth: AuthContext, id: string): Promise<void>;
  /** The remembered `qemu-img info` readings, for other callers that need a disk's sizes. */
  sizes: DiskSizeReader;
  /** Stops taking operations, puts the waiting ones back and lets the running ones end (≤ 10 s). */
  close(): Promise<void>;
}

export function createStorageService(app: FastifyInstance): StorageService {
  const sizes = createDiskSizeReader(() => app.hypervisor);
  const queue: Task[] = [];
  /** The operation of each disk, from its acceptance until its desktop is stopped again. */
  const byDisk = new Map<string, Task>();
  const running = new Set<Promise<void>>();
  let serial = 0;
  let closed = false;

  const publish = (ownerId: string, id: string, status: string, size: number, version?: number) =>
    app.events.publish({
      name: 'storage.updated',
      payload: { id, status, size, ...(version === undefined ? {} : { version }) },
      ownerId,
    });

  /** Ends an operation: the desktop is stopped again and the owner hears the disk's size. */
  const finish = async (task: Task, size: number, detail: string | null) => {
    // Forgotten first: a stopped desktop never has an operation left whose size would be counted.
    byDisk.delete(task.diskId);
    try {
      const wire = await app.desktops.update(
        task.diskId,
        { state: 'stopped', currentAction: null, detail },
        ['maintenance'],
      );
      publish(task.ownerId, task.diskId, 'ready', size, wire?.version);
    } finally {
      task.settle();
    }
  };

  const run = async (task: Task) => {
    try {
      // Whole MiB, never above what was accepted (the new size is at least 1 GiB - 1 MiB bigger).
      const info = await app.hypervisor.resizeDisk(
        task.path,
        Math.floor(task.toBytes / MIB) / 1024,
      );
      sizes.forget(task.path);
      app.log.info(
        { disk: task.diskId, agent: task.initiator, size: info.virtualSize },
        'disk increased',
      );
      await finish(task, info.virtualSize, null);
    } catch (err) {
      app.log.warn({ err, disk: task.diskId }, 'disk increase failed');
      sizes.forget(task.path);
      const now = await sizes.read(task.path);
      await finish(
        task,
        now?.virtualSize ?? task.fromBytes,
        `The disk could not be increased: ${(err as Error).message}`,
      );
    }
  };

  const pump = () => {
    while (!closed && running.size < STORAGE_CONCURRENCY && queue.length > 0) {
      queue.sort(
        (a, b) => PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || a.serial - b.serial,
      );
      const task = queue.shift();
      if (!task) break;
      task.state = 'running';
      const work: Promise<void> = run(task)
        .catch((err: unknown) => app.log.error({ err, disk: task.diskId }, 'disk operation failed'))
        .finally(() => {
          running.delete(work);
          pump();
        });
      running.add(work);
    }
  };

  const desktopFor = async (auth: AuthContext, id: string) =>
    assertDesktopAccess(auth, await app.desktops.byId(id));

  return {
    sizes,

    async list(auth) {
      const rows = await app.desktops.table.list({
        where: and(
          eq(desktops.userId, auth.userId),
          or(isNull(desktops.tag), eq(desktops.visible, true)),
          notInArray(desktops.state, [...desktopStates.diskNotReady]),
        ),
        orderBy: asc(desktops.name),
      });
      const items = await Promise.all(
        rows.map(async (row): Promise<Storage | undefined> => {
          const path = diskPathOf(app, row);
          const disk = await sizes.read(path);
          if (!disk) return undefined;
          return {
            id: row.id,
            domains: [{ id: row.id, name: row.name }],
            actual_size: disk.actualSize,
            virtual_size: disk.virtualSize,
            usage: {
              percentage:
                disk.virtualSize > 0
                  ? Math.round((disk.actualSize / disk.virtualSize) * 10_000) / 100
                  : 0,
            },
            last: Math.floor(disk.modifiedAt.getTime() / 1000),
            user_id: row.userId,
            user_name: auth.name,
            directory_path: storageLocation(app.config.dataDir, path),
            status: 'ready',
            type: 'qcow2',
            parent: disk.backingFile ? row.templateId : null,
            category: row.categoryId,
            version: row.version,
          };
        }),
      );
      return items.filter((item): item is Storage => item !== undefined);
    },

    async increase(auth, { id, priority, increment }) {
      if (closed)
        throw new ApiError('service_unavailable', 'The server is stopping', 'service_unavailable');
      const desktop = await desktopFor(auth, id);
      const path = diskPathOf(app, desktop);
      const owner = {
        userId: desktop.userId,
        groupId: desktop.groupId,
        categoryId: desktop.categoryId,
        role: desktop.ownerRole,
      };
      let created: Task | undefined;
      const task = await app.db
        .transaction(async (tx): Promise<Task> => {
          const query = queryOn(tx);
          // The row lock: increases of one disk are decided one after the other.
          const [row] = await query<{ state: DesktopState }>(
            'SELECT state FROM desktops WHERE id = $1 FOR UPDATE',
            [id],
          );
          if (!row) throw new ApiError('not_found', 'Desktop not found', 'not_found');
          const pending = byDisk.get(id);
          const current = pending?.toBytes ?? (await sizes.read(path))?.virtualSize;
          if (current === undefined)
            throw new ApiError(
              'precondition_required',
              'The disk of this desktop does not exist',
              'desktop_storage_not_ready',
            );
          const toBytes = current + increment * GIB;
          const limit = hardwareLimits(await appliedQuota(query, owner)).desktops_disk_size;
          if (toBytes > limit * GIB)
            throw new ApiError(
              'precondition_required',
              `The disk would be bigger than the disk size quota (${limit} GB)`,
              QUOTA_RULE.code,
              { limit, size: Math.round((toBytes / GIB) * 100) / 100 },
              { status: QUOTA_RULE.status },
            );
          assertStateAllows('increaseDisk', row.state);
          const claimed = await app.desktops.table.update(
            id,
            { state: 'maintenance', currentAction: RESIZE_ACTION, detail: null },
            { condition: eq(desktops.state, 'stopped'), on: tx },
          );
          if (!claimed) throw new ApiError('not_found', 'Desktop not found', 'not_found');
          created = {
            id: randomUUID(),
            diskId: id,
            ownerId: desktop.userId,
            path,
            initiator: auth.userId,
            priority: hasRoleAtLeast(auth.role, role.admin) ? priority : 'low',
            serial: ++serial,
            fromBytes: current,
            toBytes,
            state: 'queued',
            ...whenSettled(),
          };
          // Known before the claim commits: the next increase of this disk, waiting for the row
          // lock, counts its size, and a cancel finds it.
          byDisk.set(id, created);
          return created;
        })
        .catch((err: unknown) => {
          if (created && byDisk.get(id) === created) {
            byDisk.delete(id);
            created.settle();
          }
          throw err;
        });
      if (task.state === 'queued') queue.push(task);
      const wire = await app.desktops.publishCurrent(id, 'desktops.updated');
      publish(task.ownerId, id, 'maintenance', task.fromBytes, wire?.version);
      pump();
      return { task_id: task.id };
    },

    async abort(auth, id) {
      const desktop = await desktopFor(auth, id);
      const task = byDisk.get(id);
      if (!task) {
        if (desktop.state !== 'maintenance' || desktop.currentAction !== RESIZE_ACTION)
          throw new ApiError(
            'precondition_required',
            'No disk operation is running on this disk',
            'no_storage_operation',
          );
        // Left over by a server that stopped during the operation: nothing runs, the flag goes.
        await app.desktops.update(id, { state: 'stopped', currentAction: null }, ['maintenance']);
        return;
      }
      if (task.initiator !== auth.userId)
        throw new ApiError(
          'forbidden',
          'Only the user who started the operation can cancel it',
          'operation_not_owned',
        );
      if (task.state === 'queued') {
        task.state = 'cancelled';
        const waiting = queue.indexOf(task);
        if (waiting >= 0) queue.splice(waiting, 1);
        app.log.info({ disk: id, agent: auth.userId }, 'disk increase cancelled');
        await finish(task, task.fromBytes, null);
        return;
      }
      await task.done;
    },

    async close() {
      closed = true;
      for (const task of queue.splice(0))
        await finish(task, task.fromBytes, null).catch(() => undefined);
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
      await Promise.race([Promise.allSettled([...running]), deadline]);
    },
  };
}
