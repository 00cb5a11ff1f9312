/**
 * The bookkeeping that keeps live events from being lost between a read and the cache: the events
 * that arrive while reads of their resource are in flight (applied to those reads' answers), and
 * the records added and deleted since the socket (re)connected (applied to a whole list's answer).
 * A list read settles its records; a show read settles its record and the records it embeds.
 */
import { resources } from '@/generated/resources';
import {
  patchOpenRecord,
  patchParent,
  removeRecord,
  upsertRecord,
  type Identified,
  type ListCache,
} from './live-cache';

/** A list read in flight: what it answers goes through `settle` before it reaches the cache. */
export interface ListRead {
  /** The answer's records with the events that arrived during the read applied. */
  settle: (records: readonly Identified[]) => Identified[];
  /** The read failed: nothing to apply. */
  cancel: () => void;
}

/** A show read: `settle` answers the record with the events kept for it applied. */
export interface OneRead {
  settle: (record: unknown) => unknown;
  cancel: () => void;
}

/** Where a live child resource's records sit in its parent's show answer. */
export interface LiveParent {
  resource: string;
  field: string;
  path: string;
}

/** An event kept for the reads in flight when it arrived. */
interface KeptEvent {
  seq: number;
  remove: boolean;
  record: Identified;
}

/** Creates the read bookkeeping of one live provider. */
export function createLiveReads() {
  /** Events of each resource that arrived while some of its reads were in flight. */
  let seq = 0;
  const kept = new Map<string, KeptEvent[]>();
  /** The reads in flight, by resource: each read's token and the sequence number it started at. */
  const reads = new Map<string, Map<number, number>>();
  let readTokens = 0;
  /** Records added or deleted since the socket (re)connected, by resource and id: the latest. */
  const sinceConnect = new Map<string, Map<unknown, KeptEvent>>();
  /** Remembers an add or a delete, and the later updates of a record added since the connect. */
  const remember = (
    resource: string,
    verb: 'add' | 'update' | 'remove',
    record: Identified,
    idField: string,
    whole: boolean,
  ): void => {
    const id = record[idField];
    if (id === undefined) return;
    const known = sinceConnect.get(resource) ?? new Map<unknown, KeptEvent>();
    const current = known.get(id);
    if (verb === 'update' && (!current || current.remove)) return;
    if (
      current &&
      typeof current.record.version === 'number' &&
      typeof record.version === 'number' &&
      record.version < current.record.version
    )
      return;
    // An update that is not the whole record completes the one remembered.
    const latest =
      verb === 'update' && !whole && current ? { ...current.record, ...record } : record;
    known.set(id, { seq: 0, remove: verb === 'remove', record: latest });
    sinceConnect.set(resource, known);
  };
  const keepForReads = (resource: string, remove: boolean, record: Identified): void => {
    if (!reads.get(resource)?.size) return;
    const list = kept.get(resource) ?? [];
    list.push({ seq: ++seq, remove, record });
    kept.set(resource, list);
  };
  /**
   * Registers a read of `resource` starting now; `finish` ends it and drops the kept events every
   * read still in flight already has. Each read has its own token: two reads that start at the same
   * sequence number (two queries of one page) stay two reads until each has ended.
   */
  const openRead = (resource: string): { start: number; finish: () => void } => {
    const start = seq;
    const token = ++readTokens;
    const open = reads.get(resource) ?? new Map<number, number>();
    open.set(token, start);
    reads.set(resource, open);
    let done = false;
    return {
      start,
      finish: () => {
        if (done) return;
        done = true;
        open.delete(token);
        if (!open.size) reads.delete(resource);
        // Events older than every read still in flight are in every answer still to come.
        const oldest = open.size ? Math.min(...open.values()) : seq;
        const rest = (kept.get(resource) ?? []).filter((event) => event.seq > oldest);
        if (rest.length) kept.set(resource, rest);
        else kept.delete(resource);
      },
    };
  };
  const beginListRead = (resource: string, wholeList = true): ListRead => {
    const { start, finish } = openRead(resource);
    return {
      settle: (records) => {
        const meta = resources.find((r) => r.name === resource)?.meta;
        const idField = meta?.idField ?? 'id';
        const whole = !!(meta?.live && 'whole' in meta.live && meta.live.whole);
        let cache: unknown = { data: [...records] };
        const apply = (event: KeptEvent): void => {
          cache = event.remove
            ? removeRecord(cache, event.record, idField)
            : upsertRecord(cache, event.record, idField, whole);
        };
        // What was added and deleted since the connect is the whole list's (a part's list, a
        // tab or a range, may not hold a record added).
        if (wholeList) for (const event of sinceConnect.get(resource)?.values() ?? []) apply(event);
        for (const event of kept.get(resource) ?? []) if (event.seq > start) apply(event);
        finish();
        return (cache as ListCache).data;
      },
      cancel: finish,
    };
  };
  /**
   * A show read of a record whose answer embeds the records of a live child resource (a
   * deployment's desktops): the child events that arrived while it was in flight are applied to
   * the embedded list of the answer, as for a list read. Without it an answer read before a
   * child's last write landed after that write's event and stayed (a desktop of the deployment
   * page left "Shutting down" while the server had stopped it).
   */
  const beginOneRead = (resource: string, id: unknown): OneRead => {
    const children = resources.flatMap((child) => {
      const parent = (child.meta?.live as { parent?: LiveParent } | undefined)?.parent;
      return parent?.resource === resource
        ? [{ name: child.name, idField: child.meta?.idField ?? 'id', parent }]
        : [];
    });
    const opened = children.map((child) => ({ child, read: openRead(child.name) }));
    // A patched resource's own updates merge into its open record (a whole list record is not
    // the show answer's shape: those invalidate the record instead, which reads it again).
    const meta = resources.find((r) => r.name === resource)?.meta;
    const live = meta?.live as { patch?: boolean; whole?: boolean } | null | undefined;
    const own = live?.patch && !live.whole ? openRead(resource) : undefined;
    const idField = meta?.idField ?? 'id';
    const finish = () => {
      for (const { read } of opened) read.finish();
      own?.finish();
    };
    return {
      settle: (answer) => {
        let cache: unknown = { data: answer };
        if (own)
          for (const event of kept.get(resource) ?? [])
            if (
              event.seq > own.start &&
              !event.remove &&
              String(event.record[idField]) === String(id)
            )
              cache = patchOpenRecord(cache, event.record);
        for (const { child, read } of opened)
          for (const event of kept.get(child.name) ?? [])
            if (event.seq > read.start && String(event.record[child.parent.field]) === String(id))
              cache = patchParent(
                cache,
                child.parent.path,
                event.record,
                child.idField,
                event.remove,
              );
        finish();
        return (cache as { data: unknown }).data;
      },
      cancel: finish,
    };
  };
  return {
    remember,
    keepForReads,
    beginListRead,
    beginOneRead,
    /** After a (re)connect the lists are read again: what happened before it is in them. */
    forgetSinceConnect: () => sinceConnect.clear(),
  };
}
