/**
 * Cell renderers: how a field's value is shown in a table cell, a card line or a details page.
 * A field's renderer is its `x-ui.widget` (state, viewers, epochDate, bytes...) or, without one,
 * its type (text, number, boolean, enum, array). Features register more by name; a name nobody
 * registered throws, naming the field, instead of showing raw JSON.
 */
import '@mantine/core/styles/Avatar.css';
import '@mantine/core/styles/Badge.css';
import '@mantine/core/styles/Progress.css';
import '@mantine/core/styles/Code.css';
import '@mantine/core/styles/Tooltip.css';
import '@mantine/core/styles/ActionIcon.css';
import {
  ActionIcon,
  Avatar,
  Badge,
  Code,
  CopyButton,
  Group,
  Progress,
  Stack,
  Text,
  Tooltip,
} from '@mantine/core';
import { createElement, type ComponentType, type ReactNode } from 'react';
import { createContext, useContext, useMemo } from 'react';
import i18next, { type TFunction } from 'i18next';
import { I18nContext, useTranslation } from 'react-i18next';
import type { FieldMeta } from '@/generated/fields';
import { formatDate, formatRelative } from '@/lib/dates';
import { formatGigabytes } from '@/lib/sizes';
import { stockGradient } from '@/lib/stock-card';
import { Icon } from '@/components/icon';
import { machineOf, stateOf } from '@common/state-actions';
import { stateColor, stateIcon } from './state-style';

/**
 * The translator the cells of one screen share: a list provides it once (thousands of cells do not
 * each subscribe to i18next); outside a provider the cells read i18next directly.
 */
export interface CellText {
  t: TFunction;
  language: string;
}

const CellTextContext = createContext<CellText | null>(null);

/** Provides the screen's translator to its cells (re-rendering them when the language changes). */
export function CellTextProvider({ children }: { children: ReactNode }) {
  const { t, i18n } = useTranslation();
  const value = useMemo(() => ({ t, language: i18n.language }), [t, i18n.language]);
  return <CellTextContext.Provider value={value}>{children}</CellTextContext.Provider>;
}

/** The translator of the screen's cells (a list's, else i18next's). */
export function useCellText(): CellText {
  const shared = useContext(CellTextContext);
  // Outside a list: the app's i18next instance, read without subscribing to its events.
  const i18n = useContext(I18nContext)?.i18n ?? i18next;
  return shared ?? { t: i18n.t, language: i18n.language };
}

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

const empty = (
  <Text span c="dimmed" aria-hidden>
    —
  </Text>
);

function TextCell({ value }: CellProps) {
  if (value === undefined || value === null || value === '') return empty;
  const text = String(value);
  return (
    <Text span size="sm" truncate="end" title={text}>
      {text}
    </Text>
  );
}

function NumberCell({ value, meta }: CellProps) {
  const { language } = useCellText();
  if (typeof value !== 'number') return empty;
  const text = new Intl.NumberFormat(language.replace('_', '-')).format(value);
  return (
    <Text span size="sm">
      {meta.unit ? `${text} ${meta.unit}` : text}
    </Text>
  );
}

function BooleanCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'boolean') return empty;
  return (
    <Group gap={4} wrap="nowrap">
      <Icon name={value ? 'check' : 'x'} size={16} />
      <Text span size="sm">
        {t(value ? 'common:yes' : 'common:no')}
      </Text>
    </Group>
  );
}

/** Translated enum value: `resources:<resource>.enum.<path>.<value>`. */
export function useEnumText(resource: string, path: string): (value: unknown) => string {
  const { t } = useCellText();
  return (value) =>
    t(`resources:${resource}.enum.${path}.${String(value)}`, { defaultValue: String(value) });
}

function EnumCell({ resource, meta, value }: CellProps) {
  const text = useEnumText(resource, meta.path);
  if (value === undefined || value === null || value === '') return empty;
  return (
    <Text span size="sm" truncate="end">
      {text(value)}
    </Text>
  );
}

function StateCell({ resource, meta, value, record }: CellProps) {
  const text = useEnumText(resource, meta.path);
  if (value === undefined || value === null) return empty;
  // The state machine's own field reads through its value map (`active: true` -> `active`).
  const state =
    machineOf(resource)?.field === meta.path ? stateOf(resource, record) : String(value);
  return (
    <Badge
      color={stateColor(state)}
      variant="light"
      leftSection={<Icon name={stateIcon(state)} size={12} />}
      data-testid="record-state"
      data-value={state}
    >
      {text(state)}
    </Badge>
  );
}

/** One line of a list item: its name, else (an object without one) its values joined. */
function itemText(item: unknown): string {
  if (!item || typeof item !== 'object') return String(item);
  const { name } = item as { name?: unknown };
  if (typeof name === 'string') return name;
  return Object.values(item)
    .filter((part) => part !== null && part !== undefined && part !== '')
    .map((part) => (typeof part === 'object' ? JSON.stringify(part) : String(part)))
    .join(' · ');
}

function ArrayCell({ value }: CellProps) {
  if (!Array.isArray(value) || value.length === 0) return empty;
  // Objects without a name (rows of a report) read one per line.
  if (value.some((item) => item && typeof item === 'object' && !('name' in item)))
    return (
      <Stack gap={2} data-testid="array-items">
        {value.map((item, index) => (
          <Text key={index} span size="sm">
            {itemText(item)}
          </Text>
        ))}
      </Stack>
    );
  const text = value.map(itemText).join(', ');
  return (
    <Text span size="sm" truncate="end" title={text}>
      {text}
    </Text>
  );
}

function ViewersCell({ value }: CellProps) {
  const { t } = useCellText();
  if (!Array.isArray(value) || value.length === 0) return empty;
  return (
    <Group gap={4} wrap="wrap">
      {(value as string[]).map((viewer) => (
        <Badge key={viewer} size="xs" variant="default">
          {t(`common:viewers.${viewer}`)}
        </Badge>
      ))}
    </Group>
  );
}

/** Epoch seconds as relative text ("5 minutes ago"), the absolute time on hover. */
function EpochDateCell({ value }: CellProps) {
  const { language } = useCellText();
  const absolute = formatDate(value as number | null);
  if (!absolute) return empty;
  return (
    <Text span size="sm" c="dimmed" title={absolute}>
      <time dateTime={new Date((value as number) * 1000).toISOString()}>
        {formatRelative(value as number, language)}
      </time>
    </Text>
  );
}

function WireDateCell({ value }: CellProps) {
  const text = formatDate(value as string | null);
  if (!text) return empty;
  return (
    <Text span size="sm">
      {text}
    </Text>
  );
}

function BytesCell({ value }: CellProps) {
  const { language } = useCellText();
  const text = formatGigabytes(value as number | null, language);
  if (!text) return empty;
  return (
    <Text span size="sm">
      {text}
    </Text>
  );
}

/** A progress answer: `percentage` (desktops, templates, disks) or a download's `received_percent`. */
interface ProgressValue {
  percentage?: number;
  received_percent?: number;
  time_left?: string;
}

function ProgressCell({ value }: CellProps) {
  const { t } = useCellText();
  const progress = value as ProgressValue | null;
  const percentage = progress?.percentage ?? progress?.received_percent;
  if (typeof percentage !== 'number') return empty;
  return (
    <Group gap="xs" wrap="nowrap" data-testid="record-progress" data-value={Math.round(percentage)}>
      <Progress
        value={percentage}
        w={80}
        aria-label={t('common:progress', { value: Math.round(percentage) })}
      />
      <Text span size="xs">{`${Math.round(percentage)} %`}</Text>
      {progress?.time_left && (
        <Text span size="xs" c="dimmed">
          {progress.time_left}
        </Text>
      )}
    </Group>
  );
}

function QueueCell({ value }: CellProps) {
  const { t } = useCellText();
  const position = (value as { position?: number } | null)?.position;
  if (typeof position !== 'number') return null;
  return (
    <Text span size="xs" c="orange.9" data-testid="record-queue">
      {t('common:desktops.queuePosition', { position })}
    </Text>
  );
}

function ScheduledShutdownCell({ value }: CellProps) {
  const { t } = useCellText();
  const text = formatDate((value as { shutdown?: string | false } | null)?.shutdown);
  if (!text) return null;
  return (
    <Text span size="xs" c="orange.9">
      {t('common:desktops.scheduledShutdown', { date: text })}
    </Text>
  );
}

function DomainListCell({ value }: CellProps) {
  if (!Array.isArray(value) || value.length === 0) return empty;
  const text = value
    .map((d) => (typeof d === 'string' ? d : ((d as { name?: string }).name ?? '')))
    .join(', ');
  return (
    <Text span size="sm" truncate="end" title={text}>
      {text}
    </Text>
  );
}

/** An object naming something (`{ id, name }`): its name. */
function NamedCell({ value }: CellProps) {
  const name = (value as { name?: unknown } | null | undefined)?.name;
  if (typeof name !== 'string' || !name) return empty;
  return (
    <Text span size="sm" truncate="end" title={name}>
      {name}
    </Text>
  );
}

/** A card image: the uploaded picture, or the stock card drawn as a gradient. */
function ImageCell({ value }: CellProps) {
  const image = value as { id?: string; url?: string } | null | undefined;
  if (!image) return empty;
  return image.url ? (
    <img
      src={image.url}
      alt=""
      width={48}
      height={27}
      style={{ objectFit: 'cover', borderRadius: 4 }}
    />
  ) : (
    <span
      aria-hidden
      style={{
        display: 'inline-block',
        width: 48,
        height: 27,
        borderRadius: 4,
        background: stockGradient(image.id ?? '1'),
      }}
    />
  );
}

/** A user's photo; their initial when there is none (the name sits next to it). */
function AvatarCell({ value, record }: CellProps) {
  const owner = record.user_name ?? record.name;
  const name = typeof owner === 'string' ? owner : '';
  const src = typeof value === 'string' && value ? value : null;
  return (
    <Avatar src={src} size="sm" radius="xl" alt="" aria-hidden>
      {name.slice(0, 1).toUpperCase()}
    </Avatar>
  );
}

/** A sharing list: off, everyone of the scope (an empty list), or how many are chosen. */
function AllowedListCell({ value }: CellProps) {
  const { t } = useCellText();
  if (!Array.isArray(value)) return empty;
  return (
    <Text span size="sm">
      {value.length === 0
        ? t('common:allowed.everyone')
        : t('common:allowed.chosen', { count: value.length })}
    </Text>
  );
}

/** A visibility flag (a deployment's): an eye and the word, so it is not told by colour alone. */
function VisibilityCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'boolean') return empty;
  return (
    <Badge
      variant="light"
      color={value ? 'green' : 'gray'}
      leftSection={<Icon name={value ? 'eye' : 'eye-off'} size={12} />}
      data-testid="record-visibility"
      data-value={String(value)}
    >
      {t(value ? 'common:visibility.visible' : 'common:visibility.invisible')}
    </Badge>
  );
}

/** A value to copy (a secret shown once, a code): in full, monospaced, with a copy button. */
function CopyCell({ value }: CellProps) {
  const { t } = useCellText();
  if (typeof value !== 'string' || !value) return empty;
  return (
    <Group gap="xs" wrap="nowrap" align="flex-start">
      <Code
        block
        style={{ flex: 1, minWidth: 0, wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
        data-testid="copy-value"
      >
        {value}
      </Code>
      <CopyButton value={value}>
        {({ copied, copy }) => (
          <Tooltip label={t(copied ? 'common:copy.copied' : 'common:copy.copy')} withArrow>
            <ActionIcon
              variant={copied ? 'filled' : 'default'}
              color={copied ? 'teal' : undefined}
              size="lg"
              onClick={copy}
              aria-label={t(copied ? 'common:copy.copied' : 'common:copy.copy')}
              data-testid="copy-button"
            >
              <Icon name={copied ? 'check' : 'copy'} size={16} />
            </ActionIcon>
          </Tooltip>
        )}
      </CopyButton>
    </Group>
  );
}

/** A key of a JSON value, and the value as text (nested values as indented JSON). */
function jsonEntries(value: object): [string, string, boolean][] {
  const entries = Array.isArray(value)
    ? value.map((item, index) => [String(index), item] as const)
    : Object.entries(value);
  return entries.map(([key, item]) =>
    item !== null && typeof item === 'object'
      ? [key, JSON.stringify(item, null, 2), true]
      : [key, item === undefined ? '' : JSON.stringify(item), false],
  );
}

/**
 * A JSON value (a record before and after a change): its keys and values one per line, nested
 * values as indented JSON; folded under a summary ("12 fields") that opens it, open at first when
 * it is short.
 */
function JsonCell({ value }: CellProps) {
  const { t } = useCellText();
  if (value === undefined || value === null) return empty;
  if (typeof value !== 'object')
    return <Code data-testid="json-value">{JSON.stringify(value)}</Code>;
  const entries = jsonEntries(value);
  return (
    <details open={entries.length <= 12} data-testid="json-value">
      <summary style={{ cursor: 'pointer' }}>
        <Text span size="sm" c="dimmed">
          {t('common:json.fields', { count: entries.length })}
        </Text>
      </summary>
      <dl
        style={{
          display: 'grid',
          gridTemplateColumns: 'max-content minmax(0, 1fr)',
          gap: '2px 12px',
          margin: '4px 0 0',
        }}
      >
        {entries.map(([key, text, nested]) => (
          <div key={key} style={{ display: 'contents' }} data-json-key={key}>
            <dt>
              <Code>{key}</Code>
            </dt>
            <dd style={{ margin: 0, minWidth: 0 }}>
              {nested ? (
                <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}>
                  {text}
                </Code>
              ) : (
                <Text span size="sm" style={{ wordBreak: 'break-word' }}>
                  {text}
                </Text>
              )}
            </dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

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
  ['json', JsonCell],
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
