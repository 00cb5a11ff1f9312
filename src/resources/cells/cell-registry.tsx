/**
 * Cell renderers: how a field's value is shown in a table cell, a card line or a details page.
 * A field's renderer is its `x-ui.widget` (state, viewers, epochDate, bytes...) or, without one,
 * its type (text, number, boolean, enum, array). Features register more by name; a name nobody
 * registered throws, naming the field, instead of showing raw JSON.
 */
import { createElement } from 'react';
import type { FieldMeta } from '@/generated/fields';
import { AllowedListCell } from './allowed-list-cell';
import { ArrayCell } from './array-cell';
import { AvatarCell } from './avatar-cell';
import { BooleanCell } from './boolean-cell';
import { BytesCell } from './bytes-cell';
import { CodeListCell } from './code-list-cell';
import { CopyCell } from './copy-cell';
import { DomainListCell } from './domain-list-cell';
import { EnumCell } from './enum-cell';
import { EpochDateCell } from './epoch-date-cell';
import { HtmlTextCell } from './html-text-cell';
import { ImageCell } from './image-cell';
import { JsonCell } from './json-cell';
import { NamedCell } from './named-cell';
import { NumberCell } from './number-cell';
import { OperationCell } from './operation-cell';
import { ProgressCell } from './progress-cell';
import { QueueCell } from './queue-cell';
import { ScheduledShutdownCell } from './scheduled-shutdown-cell';
import { StateCell } from './state-cell';
import { TextCell } from './text-cell';
import { ViewersCell } from './viewers-cell';
import { VisibilityCell } from './visibility-cell';
import { WireDateCell } from './wire-date-cell';
import type { CellComponent, CellProps } from './cell-types';

export { CellTextProvider, useCellText, useEnumText, type CellText } from './cell-text';
export type { CellComponent, CellProps } from './cell-types';

const registry = new Map<string, CellComponent>([
  ['image', ImageCell],
  ['named', NamedCell],
  ['text', TextCell],
  ['textarea', TextCell],
  ['number', NumberCell],
  ['integer', NumberCell],
  ['boolean', BooleanCell],
  ['switch', BooleanCell],
  ['enum', EnumCell],
  ['select', EnumCell],
  ['itemType', EnumCell],
  ['state', StateCell],
  ['array', ArrayCell],
  ['multiSelect', ArrayCell],
  ['viewers', ViewersCell],
  ['epochDate', EpochDateCell],
  ['wireDate', WireDateCell],
  // A date-time text (ISO 8601) as the wire carries it.
  ['date', WireDateCell],
  ['bytes', BytesCell],
  ['progress', ProgressCell],
  ['queue', QueueCell],
  ['scheduledShutdown', ScheduledShutdownCell],
  ['domainList', DomainListCell],
  ['visibility', VisibilityCell],
  ['allowedUsers', AllowedListCell],
  ['allowedGroups', AllowedListCell],
  ['avatar', AvatarCell],
  ['copy', CopyCell],
  // Codes shown once (recovery codes), one per line, copied together.
  ['codeList', CodeListCell],
  ['json', JsonCell],
  // An operation key (`adminUsers.update`) in words.
  ['operation', OperationCell],
  // A text in HTML (a disclaimer's body): its words, never its tags.
  ['html', HtmlTextCell],
]);

/** Adds (or replaces) a named renderer. */
export function registerCell(name: string, component: CellComponent): void {
  registry.set(name, component);
}

/** True when a renderer has this name. */
export function hasCell(name: string): boolean {
  return registry.has(name);
}

/** The renderer name a field asks for: its widget, else its type. */
export function cellNameOf(meta: FieldMeta): string {
  return meta.widget && meta.widget !== 'text'
    ? meta.widget
    : meta.type === 'string'
      ? 'text'
      : meta.type;
}

/**
 * The renderer of a field.
 * @throws Error naming the field when its renderer is not registered
 */
export function resolveCell(meta: FieldMeta): CellComponent {
  const name = cellNameOf(meta);
  const cell = registry.get(name);
  if (!cell)
    throw new Error(
      `No cell renderer "${name}" registered for field "${meta.path}" (type ${meta.type})`,
    );
  return cell;
}

/** Reads a dotted path from a record. */
export function valueAt(record: Readonly<Record<string, unknown>>, path: string): unknown {
  let node: unknown = record;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** One field of a record through its renderer. */
export function FieldValue({ resource, meta, record }: Omit<CellProps, 'value'>) {
  return createElement(resolveCell(meta), {
    resource,
    meta,
    value: valueAt(record, meta.path),
    record,
  });
}
