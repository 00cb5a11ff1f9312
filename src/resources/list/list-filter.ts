/**
 * What a generated list shows: the records matching the filter text (over the fields the schema
 * marks `filter`), the active tab and the switched-on toggles (`x-ui.list`), in the chosen order.
 * Pure and fast: the lower-cased text of a record is computed once per record object (the live
 * provider replaces a record only when it changes), so a keystroke over thousands reuses it.
 */
import i18next from 'i18next';
import type { RecordFilter } from '@/generated/resources';
import { DEFAULT_LANGUAGE, intlLocale } from '@/i18n/languages';

export type ListRecord = Readonly<Record<string, unknown>>;

export interface ListSort {
  field: string;
  order: 'asc' | 'desc';
}

export interface ListQuery {
  text: string;
  tab: RecordFilter | null;
  toggles: readonly RecordFilter[];
  /** The signed-in user's id (for `notMine` filters). */
  userId?: string | null;
}

const haystacks = new Map<string, WeakMap<object, string>>();

function haystackOf(record: ListRecord, fields: readonly string[]): string {
  const key = fields.join('\u0001');
  let cache = haystacks.get(key);
  if (!cache) {
    cache = new WeakMap();
    haystacks.set(key, cache);
  }
  let text = cache.get(record);
  if (text === undefined) {
    text = fields
      .map((path) => {
        const value = record[path];
        return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
      })
      .join('\u0000')
      .toLowerCase();
    cache.set(record, text);
  }
  return text;
}

/** Computes the filter texts ahead of the first keystroke (call when idle after the list loads). */
export function warmFilter(records: readonly ListRecord[], fields: readonly string[]): void {
  for (const record of records) haystackOf(record, fields);
}

const passes = (record: ListRecord, filter: RecordFilter, userId: string | null) =>
  (!filter.field ||
    !!filter.values?.includes(record[filter.field] as string | number | boolean | null)) &&
  (!filter.notMine || record[filter.notMine] !== userId);

/** The records the query keeps (the same array when nothing filters). */
export function filterRecords<T extends ListRecord>(
  records: readonly T[],
  fields: readonly string[],
  query: ListQuery,
): readonly T[] {
  const needle = query.text.trim().toLowerCase();
  if (!needle && !query.tab && query.toggles.length === 0) return records;
  return records.filter(
    (record) =>
      (!query.tab || passes(record, query.tab, query.userId ?? null)) &&
      query.toggles.every((toggle) => passes(record, toggle, query.userId ?? null)) &&
      (!needle || haystackOf(record, fields).includes(needle)),
  );
}

const collators = new Map<string, Intl.Collator>();

/** Text order of the interface language (not the browser's), numbers inside texts by value. */
export function collatorOf(language: string): Intl.Collator {
  let collator = collators.get(language);
  if (!collator) {
    collator = new Intl.Collator(intlLocale(language), { numeric: true, sensitivity: 'base' });
    collators.set(language, collator);
  }
  return collator;
}

function compare(a: unknown, b: unknown, collator: Intl.Collator): number {
  if (a === b) return 0;
  if (a === undefined || a === null) return 1;
  if (b === undefined || b === null) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return collator.compare(String(a), String(b));
}

/**
 * The records in the sort's order (stable; missing values last). Returns the same array when it
 * is already in order (the server's order, kept by live patches), so an update does not re-sort.
 */
export function sortRecords<T extends ListRecord>(
  records: readonly T[],
  sort: ListSort | null,
  language: string = i18next.language || DEFAULT_LANGUAGE,
): readonly T[] {
  if (!sort) return records;
  const collator = collatorOf(language);
  const sign = sort.order === 'desc' ? -1 : 1;
  const missing = (v: unknown) => v === undefined || v === null;
  const order = (a: T, b: T): number => {
    const x = a[sort.field];
    const y = b[sort.field];
    if (missing(x) || missing(y)) return compare(x, y, collator);
    return sign * compare(x, y, collator);
  };
  let inOrder = true;
  for (let i = 1; i < records.length && inOrder; i++)
    inOrder = order(records[i - 1] as T, records[i] as T) <= 0;
  return inOrder ? records : [...records].sort(order);
}
