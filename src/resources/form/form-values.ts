/**
 * Form values from and to the wire: the edit form's starting values picked from a show answer,
 * and the top-level sections that changed (an edit sends only those).
 */
import type { FieldValues } from 'react-hook-form';
import type { FieldMeta } from '@/generated/fields';
import { pruneEmpty } from './resolver';

/**
 * The show answer's values of the form's fields (by their top-level key). A null the field cannot
 * hold (an answer's "no description" for a text the body types as a string) starts the field empty.
 */
export function pickFormValues(list: readonly FieldMeta[], show: object): FieldValues {
  const keys = new Set(
    list.filter((meta) => !meta.hidden).map((meta) => meta.path.split('.')[0] ?? meta.path),
  );
  const notNullable = new Set(list.filter((meta) => !meta.nullable).map((meta) => meta.path));
  const entries = Object.entries(show).filter(
    ([key, value]) =>
      keys.has(key) && value !== undefined && !(value === null && notNullable.has(key)),
  );
  return pruneEmpty(Object.fromEntries(entries));
}

/**
 * Deterministic JSON for comparisons: sorted keys, and empty values (undefined, '', empty objects
 * and arrays) left out, so a form that registers an untouched group (`credentials: {}`) compares
 * equal to the answer that had none.
 */
function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => !isEmpty(item))
      .sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stable(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (value && typeof value === 'object') return Object.values(value).every(isEmpty);
  return false;
}

/** The top-level sections (name, description, hardware...) that differ from the starting values. */
export function changedSections<T extends FieldValues>(initial: T, current: T): Partial<T> {
  const before = pruneEmpty(initial) as Record<string, unknown>;
  const after = pruneEmpty(current) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)]))
    if (stable(before[key] ?? null) !== stable(after[key] ?? null) && after[key] !== undefined)
      out[key] = after[key];
  return out as Partial<T>;
}
