/**
 * Pure helpers over the generated field metadata (`src/generated/fields.ts`): which fields a form
 * shows, in which section and order, and the dotted-path helpers the form engine shares.
 */
import { fields, type FieldMeta } from '@/generated/fields';
import type { FieldOverrides } from './types';

export type FieldsType = keyof typeof fields;
export const GENERAL_SECTION = 'general';

/** The generated fields of a type with the page's overrides applied. */
export function fieldsOf(type: FieldsType, overrides: FieldOverrides = {}): FieldMeta[] {
  return (fields[type] as readonly FieldMeta[]).map((meta) => ({
    ...meta,
    ...(overrides[meta.path] ?? {}),
  }));
}

/** Visible fields (not hidden, not excluded), in x-ui order (ties keep the generated order). */
export function visibleFields(
  list: readonly FieldMeta[],
  exclude: readonly string[] = [],
): FieldMeta[] {
  return list
    .map((meta, index) => ({ meta, index }))
    .filter(({ meta }) => !meta.hidden && !exclude.includes(meta.path))
    .sort((a, b) => a.meta.order - b.meta.order || a.index - b.index)
    .map(({ meta }) => meta);
}

export interface FieldSection {
  id: string;
  fields: FieldMeta[];
}

/**
 * Groups fields by `section` (none = `general`). Sections listed in `order` come first in that
 * order; the others follow in order of their first field.
 */
export function groupBySection(
  list: readonly FieldMeta[],
  order: readonly string[] = [],
): FieldSection[] {
  const map = new Map<string, FieldMeta[]>();
  for (const meta of list) {
    const id = meta.section ?? GENERAL_SECTION;
    map.set(id, [...(map.get(id) ?? []), meta]);
  }
  const ids = [...map.keys()].sort((a, b) => rank(order, a) - rank(order, b));
  return ids.map((id) => ({ id, fields: map.get(id) ?? [] }));
}

function rank(order: readonly string[], id: string): number {
  const index = order.indexOf(id);
  return index === -1 ? order.length : index;
}

/** i18n key of a field label. */
export function fieldLabelKey(resource: string, path: string): string {
  return `resources:${resource}.fields.${path}`;
}

/** JSON pointer (`/hardware/memory`) -> dotted path (`hardware.memory`). */
export function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

/** The longest known field path that is `path` or one of its ancestors, else `path` itself. */
export function nearestField(path: string, known: readonly string[]): string {
  let candidate = path;
  while (candidate) {
    if (known.includes(candidate)) return candidate;
    const cut = candidate.lastIndexOf('.');
    if (cut === -1) break;
    candidate = candidate.slice(0, cut);
  }
  return path;
}

/** Reads a dotted path. */
export function getIn(source: unknown, path: string): unknown {
  let node = source;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** Writes a dotted path into a plain object (creating parents). */
export function setIn(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (!next || typeof next !== 'object') node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1] as string] = value;
}

/** DOM id of a field's input (labels, focus after errors). */
export function fieldDomId(resource: string, path: string): string {
  return `${resource}-${path.replace(/\./g, '-')}`;
}

/** Dotted paths of the leaves of a nested react-hook-form error object (those with a message). */
export function errorPaths(errors: unknown, prefix = ''): string[] {
  if (!errors || typeof errors !== 'object') return [];
  const node = errors as Record<string, unknown>;
  if (typeof node.message === 'string' && typeof node.type === 'string') return [prefix];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'ref' ? [] : errorPaths(value, prefix ? `${prefix}.${key}` : key),
  );
}
