/**
 * The record a create form has just made, for the list it returns to: that list focuses it and
 * says so (./focus-after-action.ts). The create answer names the new id when it has one; an answer
 * without an id (a media download) leaves the record's title and the ids the list held before, and
 * the new record is the one with that title that the list did not hold. Forgotten once the list
 * found it, and a minute after the create.
 */
import type { QueryClient } from '@tanstack/react-query';

export interface CreatedRecord {
  resource: string;
  /** The id the create answer names, else null. */
  id: string | null;
  /** The record's title as the form sent it (its `name`), to find it without an id. */
  title: string;
  /** The ids the resource's lists held before the create, null when no list was read yet. */
  before: ReadonlySet<string> | null;
}

const KEEP_MS = 60_000;

let created: (CreatedRecord & { at: number }) | null = null;

/** Remembers the record a create made (replacing an earlier one). */
export function rememberCreated(record: CreatedRecord): void {
  created = { ...record, at: Date.now() };
}

/** Forgets the record a create made. */
export function forgetCreated(): void {
  created = null;
}

/** The id named by a create answer (`{ id }`), else null. */
export function answeredId(answer: unknown): string | null {
  const id = (answer as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

/** The ids of the resource's records in the cached list answers (refine's `data` queries). */
export function listedIds(client: QueryClient, resource: string): ReadonlySet<string> | null {
  const queries = client
    .getQueryCache()
    .findAll({ queryKey: ['data'] })
    .filter(({ queryKey }) => queryKey.includes(resource) && queryKey.includes('list'));
  let ids: Set<string> | null = null;
  for (const query of queries) {
    const records = (query.state.data as { data?: unknown } | undefined)?.data;
    if (!Array.isArray(records)) continue;
    ids ??= new Set<string>();
    for (const record of records as { id?: unknown }[])
      if (record?.id !== undefined) ids.add(String(record.id));
  }
  return ids;
}

/**
 * The id of the record the last create of this resource made, when it is among these records
 * (null while it is not, or when no create of this resource is remembered).
 */
export function createdAmong(
  resource: string,
  records: readonly { id?: unknown }[],
  titleOf: (record: { id?: unknown }) => string,
): string | null {
  if (!created || created.resource !== resource) return null;
  if (Date.now() - created.at > KEEP_MS) return null;
  const { id, title, before } = created;
  const found =
    id !== null
      ? records.find((record) => String(record.id) === id)
      : records.findLast(
          (record) =>
            titleOf(record) === title && (before === null || !before.has(String(record.id))),
        );
  return found ? String(found.id) : null;
}
