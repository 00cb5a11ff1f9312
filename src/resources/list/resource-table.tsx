/**
 * The table view of a generated list: a real table (fixed layout, so every row shares the column
 * widths) with a sticky header of sortable columns, virtualised rows (only the visible ones exist,
 * between two spacer rows, whatever the number of records) and each row's record actions.
 *
 * The actions column is as wide as the widest row's actions (measured), and absent when no record
 * offers an action. On a phone (narrower than the `sm` breakpoint) the table shows only its key
 * columns (`keyColumns`), sharing the width, and each row's actions are one menu button.
 */
import '@mantine/core/styles/Table.css';
import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { Anchor, Box, Group, Text, UnstyledButton, useMantineTheme } from '@mantine/core';
import { useMediaQuery } from '@mantine/hooks';
import { useVirtualizer } from '@tanstack/react-virtual';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import type { FieldMeta } from '@/generated/fields';
import { Icon } from '@/components/icon';
import { useSessionRole } from '@/lib/session-state';
import { RecordActions, recordTitle } from '../actions/record-actions';
import { availableActions } from '../actions/available-actions';
import { cellNameOf, FieldValue } from '../cells/cell-registry';
import type { ListRecord, ListSort } from './list-filter';
import classes from './resource-table.module.css';

const ROW_HEIGHT = 52;
/** The actions column before its content is measured, and its padding around the content. */
const ACTIONS_ESTIMATE = 120;
const ACTIONS_PADDING = 2 * 12 + 2;
/** The actions column of a phone: one menu button. */
const MENU_WIDTH = 52;
const AUTO_MIN = 180;
/** The first column names the record: it is given more room than the other free columns. */
const FIRST_WIDTH = 240;

/** Column widths of the renderers whose content has a natural size; the others share the rest. */
const WIDTHS: Readonly<Record<string, number>> = {
  state: 150,
  epochDate: 150,
  wireDate: 150,
  bytes: 110,
  number: 100,
  integer: 100,
  boolean: 90,
  switch: 90,
  viewers: 200,
  progress: 160,
  enum: 130,
  select: 130,
  itemType: 130,
};

export interface ResourceTableProps {
  resource: string;
  records: readonly ListRecord[];
  columns: readonly FieldMeta[];
  /** The columns a phone shows (a subset of `columns`). */
  keyColumns: readonly FieldMeta[];
  /** Accessible name of the table. */
  label: string;
  sort: ListSort | null;
  onSort: (sort: ListSort) => void;
  /** Href of a record's details page (its title links there), or null. */
  detailsHref: ((record: ListRecord) => string | null) | null;
  /** Field naming a record (its cell links to the details). */
  titleField: string;
  /** The id of a record to scroll to (a record just created), or null. */
  revealId?: string | null;
}

const Row = memo(function Row({
  resource,
  record,
  columns,
  detailsHref,
  titleField,
  actions,
}: Pick<ResourceTableProps, 'resource' | 'columns' | 'detailsHref' | 'titleField'> & {
  record: ListRecord;
  /** How the row's actions are drawn: buttons, one menu, or no actions column. */
  actions: 'buttons' | 'menu' | 'none';
}) {
  const href = detailsHref?.(record) ?? null;
  return (
    <>
      {columns.map((meta) => (
        <td key={meta.path} className={classes.cell} data-field={meta.path}>
          {href && meta.path === titleField ? (
            <Anchor
              component={Link}
              to={href}
              size="sm"
              truncate="end"
              data-testid="record-details"
            >
              {recordTitle(resource, record)}
            </Anchor>
          ) : (
            <FieldValue resource={resource} meta={meta} record={record} />
          )}
        </td>
      ))}
      {actions !== 'none' && (
        <td className={`${classes.cell} ${classes.actions}`}>
          <div className={classes.actionsContent} data-actions-content>
            <RecordActions resource={resource} record={record} compact menu={actions === 'menu'} />
          </div>
        </td>
      )}
    </>
  );
});

export const ResourceTable = memo(function ResourceTable({
  resource,
  records,
  columns: allColumns,
  keyColumns,
  label,
  sort,
  onSort,
  detailsHref,
  titleField,
  revealId = null,
}: ResourceTableProps) {
  const { t } = useTranslation();
  const theme = useMantineTheme();
  const phone = useMediaQuery(`(max-width: ${theme.breakpoints.sm})`, false, {
    getInitialValueInEffect: false,
  });
  const columns = phone ? keyColumns : allColumns;
  const role = useSessionRole();
  const withActions = useMemo(
    () => records.some((record) => availableActions(resource, record, role).length > 0),
    [resource, records, role],
  );
  const actions = !withActions ? 'none' : phone ? 'menu' : 'buttons';
  // The widest actions drawn so far (it only grows, so scrolling never makes the columns jump).
  const [measured, setMeasured] = useState<number | null>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: records.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 6,
    initialRect: { width: 1024, height: 800 },
  });
  const items = virtualizer.getVirtualItems();
  const revealIndex =
    revealId === null ? -1 : records.findIndex((record) => String(record.id) === revealId);
  useEffect(() => {
    if (revealIndex >= 0) virtualizer.scrollToIndex(revealIndex, { align: 'auto' });
  }, [virtualizer, revealIndex]);
  useLayoutEffect(() => {
    if (actions !== 'buttons') return;
    const contents = scrollRef.current?.querySelectorAll<HTMLElement>('[data-actions-content]');
    let widest = 0;
    for (const content of contents ?? [])
      widest = Math.max(widest, content.getBoundingClientRect().width);
    const next = Math.ceil(widest) + ACTIONS_PADDING;
    if (widest > 0 && next > (measured ?? 0)) setMeasured(next);
  }, [actions, measured, items, records]);
  const actionsWidth =
    actions === 'none' ? 0 : actions === 'menu' ? MENU_WIDTH : (measured ?? ACTIONS_ESTIMATE);
  // Columns without a natural width get at least AUTO_MIN px: past that the table scrolls sideways.
  // A phone's key columns share its width.
  const widthOf = (meta: FieldMeta, i: number): number | undefined =>
    phone ? undefined : (WIDTHS[cellNameOf(meta)] ?? (i === 0 ? FIRST_WIDTH : undefined));
  const minWidth = phone
    ? undefined
    : columns.reduce((sum, meta, i) => sum + (widthOf(meta, i) ?? AUTO_MIN), 0) + actionsWidth;
  const cells = columns.length + (actions === 'none' ? 0 : 1);
  const top = items[0]?.start ?? 0;
  const bottom = virtualizer.getTotalSize() - (items[items.length - 1]?.end ?? 0);

  return (
    // A scrollable region is focusable so keyboard users can scroll it.
    <Box
      ref={scrollRef}
      className={classes.scroll}
      tabIndex={0}
      role="region"
      aria-label={label}
      data-testid="resource-collection"
      data-view="table"
      data-resource={resource}
    >
      <table className={classes.table} style={{ minWidth }} aria-rowcount={records.length + 1}>
        <colgroup>
          {columns.map((meta, i) => (
            <col key={meta.path} style={{ width: widthOf(meta, i) }} />
          ))}
          {actions !== 'none' && <col style={{ width: actionsWidth }} />}
        </colgroup>
        <thead className={classes.head}>
          <tr>
            {columns.map((meta) => {
              const active = sort?.field === meta.path;
              const next: ListSort = {
                field: meta.path,
                order: active && sort?.order === 'asc' ? 'desc' : 'asc',
              };
              return (
                <th
                  key={meta.path}
                  className={classes.header}
                  data-field={meta.path}
                  aria-sort={active ? (sort?.order === 'asc' ? 'ascending' : 'descending') : 'none'}
                  scope="col"
                >
                  <UnstyledButton
                    onClick={() => onSort(next)}
                    className={classes.sortButton}
                    data-testid={`sort-${meta.path}`}
                  >
                    <Group gap={4} wrap="nowrap">
                      {/* On a phone a long label wraps: its key columns share a narrow width. */}
                      <Text size="sm" fw={600} truncate={phone ? undefined : 'end'}>
                        {t(`resources:${resource}.fields.${meta.path}`)}
                      </Text>
                      {active && (
                        <Icon
                          name={sort?.order === 'asc' ? 'chevron-up' : 'chevron-down'}
                          size={14}
                        />
                      )}
                    </Group>
                  </UnstyledButton>
                </th>
              );
            })}
            {actions !== 'none' && (
              <th className={`${classes.header} ${classes.actions}`} scope="col">
                <span className={classes.visuallyHidden}>{t('common:actions.label')}</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {top > 0 && (
            <tr aria-hidden style={{ height: top }}>
              <td colSpan={cells} />
            </tr>
          )}
          {items.map((item) => {
            const record = records[item.index];
            if (!record) return null;
            return (
              <tr
                key={String(record.id ?? item.index)}
                aria-rowindex={item.index + 2}
                className={classes.row}
                style={{ height: ROW_HEIGHT }}
                data-testid="record"
                data-record-id={String(record.id ?? '')}
              >
                <Row
                  resource={resource}
                  record={record}
                  columns={columns}
                  detailsHref={detailsHref}
                  titleField={titleField}
                  actions={actions}
                />
              </tr>
            );
          })}
          {bottom > 0 && (
            <tr aria-hidden style={{ height: bottom }}>
              <td colSpan={cells} />
            </tr>
          )}
        </tbody>
      </table>
    </Box>
  );
});
