/**
 * Which fields a generated list shows: the list type's fields marked `column` (table) or `card`
 * (card lines), in x-ui order, and the fields the filter text searches (`filter`). The field
 * metadata of a role excludes fields whose read roles leave it out and those the admin's role
 * visibility hides from it (src/lib/role-visibility.ts).
 */
import { fields, type FieldMeta } from '@/generated/fields';
import { resourceOf } from '@/generated/resources';
import type { Role } from '@/generated/types';
import { fieldHidden, roleVisibilityRevision } from '@/lib/role-visibility';

/** The generated fields of a resource's list type. */
export function listFields(resource: string): readonly FieldMeta[] {
  const type = resourceOf(resource)?.meta.types.list;
  return type ? ((fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? []) : [];
}

const readable = (resource: string, meta: FieldMeta, role: Role | null) =>
  (!meta.roles?.read || (role !== null && meta.roles.read.includes(role))) &&
  !fieldHidden(resource, meta.path, role);

const byOrder = (a: FieldMeta, b: FieldMeta) => a.order - b.order;

const cache = new Map<string, readonly FieldMeta[]>();
let cachedRevision = -1;

/** Computed once per resource, role, kind and visibility revision: every card and row asks. */
function cached(key: string, compute: () => readonly FieldMeta[]): readonly FieldMeta[] {
  const revision = roleVisibilityRevision();
  if (revision !== cachedRevision) {
    cache.clear();
    cachedRevision = revision;
  }
  let value = cache.get(key);
  if (!value) {
    value = compute();
    cache.set(key, value);
  }
  return value;
}

/** Table columns: `column` fields the role may read, in order. */
export function tableColumns(resource: string, role: Role | null): readonly FieldMeta[] {
  return cached(`column:${resource}:${role}`, () =>
    listFields(resource)
      .filter((meta) => meta.column && readable(resource, meta, role))
      .sort(byOrder),
  );
}

/**
 * The table columns a phone shows: those `x-ui.list.keyColumns` names, else the column naming
 * the record (`x-ui.list.title`, default `name`; the first column when that is not one) and the
 * first state column. Only columns the role reads, in table order.
 */
export function keyColumns(resource: string, role: Role | null): readonly FieldMeta[] {
  return cached(`key:${resource}:${role}`, () => {
    const columns = tableColumns(resource, role);
    const list = resourceOf(resource)?.meta.list;
    if (list?.keyColumns) return columns.filter((meta) => list.keyColumns?.includes(meta.path));
    const title = list?.title ?? 'name';
    const named = columns.find((meta) => meta.path === title) ?? columns[0];
    const state = columns.find((meta) => meta.widget === 'state');
    return columns.filter((meta) => meta === named || meta === state);
  });
}

/** Card lines: `card` fields the role may read, in order. */
export function cardFields(resource: string, role: Role | null): readonly FieldMeta[] {
  return cached(`card:${resource}:${role}`, () =>
    listFields(resource)
      .filter((meta) => meta.card && readable(resource, meta, role))
      .sort(byOrder),
  );
}

/** Paths the filter text searches. */
export function filterFields(resource: string): string[] {
  return listFields(resource)
    .filter((meta) => meta.filter)
    .map((meta) => meta.path);
}
