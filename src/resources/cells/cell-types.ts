import type { ComponentType } from 'react';
import type { FieldMeta } from '@/generated/fields';

export interface CellProps {
  /** The record's resource (labels and enum texts come from `resources:<resource>.`). */
  resource: string;
  /** The field's generated metadata. */
  meta: FieldMeta;
  /** The field's value. */
  value: unknown;
  /** The whole record (renderers that combine fields). */
  record: Readonly<Record<string, unknown>>;
}

export type CellComponent = ComponentType<CellProps>;
