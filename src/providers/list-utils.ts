/** Client-side filtering, sorting and paging for list endpoints that answer whole arrays. */
import type { CrudFilter, CrudSort, Pagination } from '@refinedev/core';

function valueAt(record: unknown, path: string): unknown {
  let current: unknown = record;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

function matches(record: unknown, filter: CrudFilter): boolean {
  if (!('field' in filter)) {
    const results = filter.value.map((inner) => matches(record, inner));
    return filter.operator === 'or' ? results.some(Boolean) : results.every(Boolean);
  }
  const actual = valueAt(record, filter.field);
  const expected: unknown = filter.value;
  if (expected === undefined || expected === null || expected === '') return true;
  const text = (v: unknown): string =>
    (v === undefined || v === null ? '' : String(v)).toLowerCase();
  switch (filter.operator) {
    case 'eq':
      return actual === expected || text(actual) === text(expected);
    case 'ne':
      return !(actual === expected || text(actual) === text(expected));
    case 'contains':
    case 'containss':
      return text(actual).includes(text(expected));
    case 'ncontains':
      return !text(actual).includes(text(expected));
    case 'in':
      return Array.isArray(expected) && expected.includes(actual);
    case 'nin':
      return Array.isArray(expected) && !expected.includes(actual);
    case 'gt':
      return Number(actual) > Number(expected);
    case 'gte':
      return Number(actual) >= Number(expected);
    case 'lt':
      return Number(actual) < Number(expected);
    case 'lte':
      return Number(actual) <= Number(expected);
    case 'null':
      return actual === null || actual === undefined;
    case 'nnull':
      return actual !== null && actual !== undefined;
    case 'startswith':
      return text(actual).startsWith(text(expected));
    case 'endswith':
      return text(actual).endsWith(text(expected));
    default:
      return true;
  }
}

/** Keeps the records matching every filter. */
export function applyFilters<T>(records: T[], filters: CrudFilter[] = []): T[] {
  if (!filters.length) return records;
  return records.filter((record) => filters.every((filter) => matches(record, filter)));
}

/** Sorts by the given sorters (stable, nulls last). */
export function applySorters<T>(records: T[], sorters: CrudSort[] = []): T[] {
  if (!sorters.length) return records;
  return [...records].sort((a, b) => {
    for (const sorter of sorters) {
      const x = valueAt(a, sorter.field);
      const y = valueAt(b, sorter.field);
      if (x === y) continue;
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      const order =
        typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      if (order !== 0) return sorter.order === 'desc' ? -order : order;
    }
    return 0;
  });
}

/** Cuts one page out (mode `off` or no pagination returns everything). */
export function applyPagination<T>(records: T[], pagination?: Pagination): T[] {
  if (!pagination || pagination.mode === 'off') return records;
  const size = pagination.pageSize ?? 10;
  const page = pagination.currentPage ?? 1;
  return records.slice((page - 1) * size, page * size);
}
