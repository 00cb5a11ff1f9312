/**
 * Live provider. Socket events arrive by wire name and are mapped through `src/generated/events.ts`
 * to `<resource>.<created|updated|deleted|verb>`. Resources whose generated `meta.live.patch` is
 * set (desktops) are written straight into the TanStack Query cache of their lists (and of the
 * first records a list draws while it loads, `x-ui.list.preview`): add/replace
 * by id, drop payloads older than the cached `version`, remove on delete. With `meta.live.whole`
 * an event carries the whole list record and replaces the cached one (a field it leaves out has no
 * value). Other resources get one throttled invalidation. refine subscribers (liveMode "manual")
 * are notified as well.
 *
 * Lists are never polled, so no event may be lost between a list read and the cache:
 * - an event that arrives while a list read is in flight is kept, and applied to the answer when
 *   it lands (the server read that answer before the event's write, and a list with no data yet
 *   has no cache for the event to patch); so is one that arrives while a show read is, for the
 *   record and the records its answer embeds (a deployment's desktops); the bookkeeping is
 *   ./live-reads.ts;
 * - the records added and deleted since the socket (re)connected are remembered (their latest
 *   version): a resource's whole list (its `list` operation, no parameters) never drops from an
 *   answer a record added since nor brings back one deleted since,
 *   even when the read began after the event (an answer can be older than an event already
 *   applied: a node's cached list that has not heard of another node's write yet); every removal
 *   from a list comes as an event, so a record added since the connect and absent from an
 *   answer is one the answer does not know yet;
 * - after every socket (re)connect the live lists are read again (`resync`);
 * - a patched record whose next event skips a version of a resource that is not `whole` (a
 *   missed event may have changed a field the later one does not carry) makes its lists read
 *   again, once for a burst of such gaps.
 */
import type { LiveEvent, LiveProvider } from '@refinedev/core';
import type { QueryClient } from '@tanstack/react-query';
import { events, type WireEvent } from '@/generated/events';
import { resources } from '@/generated/resources';
import { createLiveReads, type ListRead, type LiveParent, type OneRead } from './live-reads';
import {
  applyQueue,
  keepNewerRecords,
  listKeyPrefix,
  patchOpenRecord,
  patchParent,
  patchPreview,
  previewKey,
  removeRecord,
  resourceKeyPrefix,
  upsertRecord,
  type Identified,
  type ListCache,
} from './live-cache';

export { keepNewerRecords, listKeyPrefix, previewKey, resourceKeyPrefix };
export type { ListRead, OneRead };

interface Subscription {
  channel: string;
  types: string[];
  callback: (event: LiveEvent) => void;
}

export interface PortalLiveProvider extends LiveProvider {
  /** Handles one socket event by wire name. */
  dispatch: (wire: string, payload: unknown) => void;
  /** After a (re)connect: refetch the snapshots (each resource's lists and open records, once). */
  resync: () => void;
  /**
   * A list read of a resource starts (the data provider calls it before the request); `whole`:
   * the read lists every record of the resource the user reaches (not a tab's or a range's part).
   */
  beginListRead: (resource: string, whole?: boolean) => ListRead;
  /** A show read of the record `id` of a resource starts (the data provider calls it too). */
  beginOneRead: (resource: string, id: unknown) => OneRead;
}

type Updater = (cache: unknown) => unknown;

export interface LiveProviderOptions {
  /** Delay of the bundled invalidation for resources that are not patched. */
  invalidateDelayMs?: number;
  /**
   * `frame`: cache patches are queued and applied once per animation frame, one `setQueriesData`
   * per list (a burst of 100 events costs one render, not 100). `sync`: applied at once (tests).
   */
  batch?: 'frame' | 'sync';
}

/** Creates the live provider bound to the application's QueryClient. */
export function createLiveProvider(
  queryClient: QueryClient,
  options: LiveProviderOptions = {},
): PortalLiveProvider {
  const invalidateDelayMs = options.invalidateDelayMs ?? 250;
  const pending = new Map<string, { key: unknown[]; updaters: Updater[] }>();
  let frame: number | ReturnType<typeof setTimeout> | null = null;
  const flush = (): void => {
    frame = null;
    const batches = [...pending.values()];
    pending.clear();
    for (const { key, updaters } of batches) {
      queryClient.setQueriesData({ queryKey: key }, (cache: unknown) =>
        updaters.reduce((acc, update) => update(acc), cache),
      );
    }
  };
  /** Queues (or applies) one cache patch for every query under `key`. */
  const patchQueries = (key: unknown[], updater: Updater): void => {
    if (options.batch !== 'frame') {
      queryClient.setQueriesData({ queryKey: key }, updater);
      return;
    }
    const id = JSON.stringify(key);
    const entry = pending.get(id) ?? { key, updaters: [] };
    entry.updaters.push(updater);
    pending.set(id, entry);
    frame ??=
      typeof requestAnimationFrame === 'function'
        ? requestAnimationFrame(flush)
        : setTimeout(flush, 16);
  };
  const subscriptions = new Set<Subscription>();
  const { remember, keepForReads, beginListRead, beginOneRead, forgetSinceConnect } =
    createLiveReads();
  let invalidateTimer: ReturnType<typeof setTimeout> | null = null;

  const pendingKeys = new Map<string, unknown[]>();
  /** Invalidates `key` (default: every query of the resource) once for a burst of calls. */
  const scheduleInvalidate = (
    resource: string,
    key: unknown[] = resourceKeyPrefix(resource),
  ): void => {
    pendingKeys.set(JSON.stringify(key), key);
    invalidateTimer ??= setTimeout(() => {
      invalidateTimer = null;
      const keys = [...pendingKeys.values()];
      pendingKeys.clear();
      for (const queryKey of keys) void queryClient.invalidateQueries({ queryKey });
    }, invalidateDelayMs);
  };

  /**
   * A merged update that skips a version of the record the cache holds: the events between them
   * were missed, and what they changed may not be in this one. The resource's lists are read again
   * (one invalidation for a burst of gaps).
   */
  const checkGap = (
    resource: string,
    prefix: unknown[],
    record: Identified,
    idField: string,
  ): void => {
    if (typeof record.version !== 'number') return;
    const next = record.version;
    const gap = queryClient.getQueriesData<ListCache>({ queryKey: prefix }).some(([, cache]) => {
      const current = cache?.data?.find((item) => item[idField] === record[idField]);
      return typeof current?.version === 'number' && next > current.version + 1;
    });
    if (gap) scheduleInvalidate(resource, listKeyPrefix(resource));
  };

  const notify = (event: LiveEvent): void => {
    for (const sub of subscriptions) {
      if (sub.channel !== event.channel) continue;
      if (sub.types.includes('*') || sub.types.includes(event.type)) sub.callback(event);
    }
  };

  const dispatch = (wire: string, payload: unknown): void => {
    const spec = (events as Record<string, (typeof events)[WireEvent]>)[wire];
    if (!spec) return;
    const [resource = '', verb = ''] = spec.name.split('.');
    const meta = resources.find((r) => r.name === resource)?.meta;
    const idField = meta?.idField ?? 'id';
    const patch = !!(meta?.live && 'patch' in meta.live && meta.live.patch);
    const whole = !!(meta?.live && 'whole' in meta.live && meta.live.whole);
    const record = (payload ?? {}) as Identified;

    const live = (meta?.live ?? null) as {
      removeWhen?: { field: string; values: readonly unknown[] };
    } | null;
    const removeWhen = live?.removeWhen;
    const removes = !!removeWhen && removeWhen.values.includes(record[removeWhen.field]);

    const parent = (meta?.live as { parent?: LiveParent } | null | undefined)?.parent;
    if (parent && (verb === 'created' || verb === 'updated' || verb === 'deleted')) {
      const owner = record[parent.field];
      if (owner !== undefined)
        patchQueries([...resourceKeyPrefix(parent.resource), 'one', owner], (cache) =>
          patchParent(cache, parent.path, record, idField, verb === 'deleted' || removes),
        );
    }

    if (patch) {
      const prefix = listKeyPrefix(resource);
      // The first records drawn while the whole list loads show the change too.
      if (verb === 'created' || verb === 'updated' || verb === 'deleted')
        patchQueries(previewKey(resource), (cache) =>
          patchPreview(cache, record, idField, { remove: removes || verb === 'deleted', whole }),
        );
      if (verb === 'created' || verb === 'updated' || verb === 'deleted')
        remember(
          resource,
          removes || verb === 'deleted' ? 'remove' : verb === 'created' ? 'add' : 'update',
          record,
          idField,
          whole,
        );
      if ((verb === 'created' || verb === 'updated') && removes) {
        keepForReads(resource, true, record);
        patchQueries(prefix, (cache) => removeRecord(cache, record, idField));
      } else if (verb === 'created' || verb === 'updated') {
        keepForReads(resource, false, record);
        if (!whole && verb === 'updated') checkGap(resource, prefix, record, idField);
        patchQueries(prefix, (cache) => upsertRecord(cache, record, idField, whole));
        const one = [...resourceKeyPrefix(resource), 'one', record[idField]];
        // A whole list record is not the show answer's shape: the open record is read again.
        if (whole) {
          if (queryClient.getQueriesData({ queryKey: one }).length)
            void queryClient.invalidateQueries({ queryKey: one });
        } else patchQueries(one, (cache) => patchOpenRecord(cache, record));
      } else if (verb === 'deleted') {
        keepForReads(resource, true, record);
        patchQueries(prefix, (cache) => removeRecord(cache, record, idField));
      } else if (verb === 'queue') {
        patchQueries(prefix, (cache) => applyQueue(cache, record as never));
      } else {
        scheduleInvalidate(resource);
      }
    } else if (resource && resources.some((r) => r.name === resource)) {
      scheduleInvalidate(resource);
    }

    const id = record[idField];
    notify({
      channel: `resources/${resource}`,
      type: verb,
      payload: { ...record, ...(id !== undefined ? { ids: [id as string] } : {}) },
      date: new Date(),
    });
    notify({ channel: spec.name, type: verb, payload: record, date: new Date() });
  };

  return {
    dispatch,
    beginListRead,
    beginOneRead,
    resync: () => {
      // Events may have been missed while disconnected: the answers read now are the truth.
      forgetSinceConnect();
      for (const resource of resources) {
        if (!resource.meta.live) continue;
        void queryClient.invalidateQueries({ queryKey: listKeyPrefix(resource.name) });
        // The open records (a desktop's page) missed the same events as the lists.
        void queryClient.invalidateQueries({
          queryKey: [...resourceKeyPrefix(resource.name), 'one'],
        });
      }
    },
    subscribe: ({ channel, types, callback }) => {
      const sub: Subscription = { channel, types, callback };
      subscriptions.add(sub);
      return sub;
    },
    unsubscribe: (sub: Subscription) => {
      subscriptions.delete(sub);
    },
    publish: notify,
  };
}
