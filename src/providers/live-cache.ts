/**
 * The list caches the live provider writes: TanStack Query list answers (`{ data: [...] }`) patched
 * by id and version, a parent record's embedded list, and the desktops' start queue. Pure
 * functions of the cache and the event.
 */
/** The data provider whose queries the live lists are. */
export const DATA_PROVIDER_NAME = 'default';

export interface Identified {
  id?: string | number;
  version?: number;
  [key: string]: unknown;
}

export interface ListCache {
  data: Identified[];
  total?: number;
  [key: string]: unknown;
}

/**
 * A list answer merged into the cached list: a record the cache holds in a newer version (a
 * socket event that arrived while the request was in flight) is kept, so a refetch that started
 * before the event cannot turn a desktop back to its older state. Other records are the answer's.
 */
export function keepNewerRecords(previous: unknown, next: unknown): unknown {
  const before = (previous as ListCache | undefined)?.data;
  const after = (next as ListCache | undefined)?.data;
  if (!Array.isArray(before) || !Array.isArray(after) || before.length === 0 || before === after)
    return next;
  // A list read again mostly holds the same records in the same order: each is compared with the
  // cached one at its own index, and only a record found elsewhere is looked up by id (the map of
  // the cached list is built then, once). No new list is made unless a cached record is kept.
  let cached: Map<unknown, Identified> | undefined;
  let data: Identified[] | undefined;
  for (let i = 0; i < after.length; i++) {
    const record = after[i] as Identified;
    let current = before[i];
    if (current?.id !== record.id) {
      if (!cached) {
        cached = new Map();
        for (const known of before) if (known.id !== undefined) cached.set(known.id, known);
      }
      current = cached.get(record.id);
    }
    if (
      current &&
      typeof current.version === 'number' &&
      typeof record.version === 'number' &&
      current.version > record.version
    ) {
      data ??= after.slice(0, i);
      data.push(current);
    } else data?.push(record);
  }
  return data ? { ...(next as ListCache), data } : next;
}

/** Query-key prefix of every list query of a resource (refine's `keys()` layout). */
export function listKeyPrefix(resource: string): unknown[] {
  return ['data', DATA_PROVIDER_NAME, resource, 'list'];
}

/** Query key of a list's first records, read apart while the whole list loads. */
export function previewKey(resource: string): unknown[] {
  return ['list-preview', resource];
}

/**
 * A list's first records (a plain array) with one record's event applied: a record it holds is
 * replaced or merged (unless the event is older), or removed. A record it does not hold is left
 * out: the first records stand in for the list only until the whole list, read since, comes.
 */
export function patchPreview(
  cache: unknown,
  payload: Identified,
  idField: string,
  options: { remove: boolean; whole: boolean },
): unknown {
  if (!Array.isArray(cache)) return cache;
  const records = cache as Identified[];
  const index = records.findIndex((item) => item[idField] === payload[idField]);
  const current = records[index];
  if (index === -1 || isStale(payload, current)) return cache;
  if (options.remove) return records.filter((_, i) => i !== index);
  const data = records.slice();
  data[index] = options.whole ? payload : { ...current, ...payload };
  return data;
}

/** Query-key prefix of every query of a resource. */
export function resourceKeyPrefix(resource: string): unknown[] {
  return ['data', DATA_PROVIDER_NAME, resource];
}

/** Whether `payload` is an older version of the record `current` (both versioned). */
function isStale(payload: Identified, current: Identified | undefined): boolean {
  return (
    typeof current?.version === 'number' &&
    typeof payload.version === 'number' &&
    payload.version < current.version
  );
}

function isListCache(value: unknown): value is ListCache {
  return !!value && typeof value === 'object' && Array.isArray((value as ListCache).data);
}

/**
 * Adds or replaces one record by id; returns the same cache when the payload is stale. A `whole`
 * payload replaces the cached record, another one is merged into it.
 */
export function upsertRecord(
  cache: unknown,
  payload: Identified,
  idField = 'id',
  whole = false,
): unknown {
  if (!isListCache(cache)) return cache;
  const id = payload[idField];
  const index = cache.data.findIndex((item) => item[idField] === id);
  if (index === -1) {
    return {
      ...cache,
      data: [...cache.data, payload],
      total: (cache.total ?? cache.data.length) + 1,
    };
  }
  const current = cache.data[index];
  if (isStale(payload, current)) return cache;
  const data = cache.data.slice();
  data[index] = whole ? payload : { ...current, ...payload };
  return { ...cache, data };
}

/**
 * An open record's cache (a show answer, `{ data: record }`) with a patched resource's update
 * merged in; the same cache when the update is older than the record.
 */
export function patchOpenRecord(cache: unknown, payload: Identified): unknown {
  if (!cache || typeof cache !== 'object') return cache;
  const current = (cache as { data?: Identified }).data;
  if (isStale(payload, current)) return cache;
  return { ...cache, data: { ...current, ...payload } };
}

/** Removes one record by id; a stale delete (older version) is ignored. */
export function removeRecord(cache: unknown, payload: Identified, idField = 'id'): unknown {
  if (!isListCache(cache)) return cache;
  const id = payload[idField];
  const index = cache.data.findIndex((item) => item[idField] === id);
  if (index === -1) return cache;
  const current = cache.data[index];
  if (isStale(payload, current)) return cache;
  const data = cache.data.filter((_, i) => i !== index);
  return { ...cache, data, total: Math.max(0, (cache.total ?? cache.data.length) - 1) };
}

/**
 * Applies a child record's event to its parent's cached show answer (`x-live.parent`): the list at
 * `path` gets the record added or replaced by id, or removed. Other caches are left as they are.
 */
export function patchParent(
  cache: unknown,
  path: string,
  record: Identified,
  idField: string,
  remove: boolean,
): unknown {
  if (!cache || typeof cache !== 'object') return cache;
  const data = (cache as { data?: Record<string, unknown> }).data;
  const list = data?.[path];
  if (!data || !Array.isArray(list)) return cache;
  const patched = (remove ? removeRecord : upsertRecord)(
    { data: list as Identified[] },
    record,
    idField,
  ) as ListCache;
  if (patched.data === list) return cache;
  return { ...cache, data: { ...data, [path]: patched.data } };
}

/** Applies a queue payload (`{ key: { desktop_id, position } }`) to the records' `queue`. */
export function applyQueue(
  cache: unknown,
  payload: Record<string, { desktop_id: string; position: number; event?: string } | undefined>,
): unknown {
  if (!isListCache(cache)) return cache;
  const byId = new Map<string, { position: number; event?: string }>();
  for (const entry of Object.values(payload)) if (entry) byId.set(entry.desktop_id, entry);
  if (!byId.size) return cache;
  let changed = false;
  const data = cache.data.map((item) => {
    const entry = byId.get(String(item.id));
    if (!entry) return item;
    changed = true;
    return {
      ...item,
      queue: { position: entry.position, ...(entry.event ? { event: entry.event } : {}) },
    };
  });
  return changed ? { ...cache, data } : cache;
}
