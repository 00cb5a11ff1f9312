/**
 * The generated list screen of a resource: title row with the primary action, filter text, the
 * tabs and toggles of `x-ui.list`, a switch between the views it allows, then the records as a
 * virtualised table or card grid, live through the live provider. Skeletons while loading, an
 * empty state with the primary action, an error with what to do next. Back from a create, the new
 * record has the focus and is announced (./use-created-focus.ts).
 */
import '@mantine/core/styles/FloatingIndicator.css';
import '@mantine/core/styles/SegmentedControl.css';
import '@mantine/core/styles/Switch.css';
import '@mantine/core/styles/Tabs.css';
import '@mantine/core/styles/Skeleton.css';
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/VisuallyHidden.css';
import { startTransition, useCallback, useEffect, useMemo, useState } from 'react';
import {
  Alert,
  Button,
  Group,
  SegmentedControl,
  Stack,
  Switch,
  Tabs,
  Text,
  TextInput,
  Title,
  VisuallyHidden,
} from '@mantine/core';
import { useList } from '@refinedev/core';
import i18next from 'i18next';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { resourceOf, type RecordFilter } from '@/generated/resources';
import type { UserConfig } from '@/generated/types';
import { Icon } from '@/components/icon';
import { formatDate, formatRelative } from '@/lib/dates';
import { translateError } from '@/lib/error-display';
import { whenIdle } from '@/lib/idle';
import { useSessionValue, type SessionState } from '@/lib/session-state';
import { routeHref, routeUsable } from '../actions/available-actions';
import { ListActions } from '../actions/record-actions';
import { CellTextProvider } from '../cells/cell-registry';
import { EmptyState } from './empty-state';
import { filterFields, keyColumns, tableColumns } from './list-columns';
import {
  collatorOf,
  filterRecords,
  sortRecords,
  warmFilter,
  type ListRecord,
  type ListSort,
} from './list-filter';
import { ListSkeleton, rememberListCount } from './list-skeleton';
import { ResourceCards } from './resource-cards';
import { ResourceTable } from './resource-table';
import { useCreatedFocus } from './use-created-focus';
import { useListPreview } from './use-list-preview';
import { useRoleVisibilityRevision } from '@/lib/role-visibility';

type View = 'cards' | 'table';

// The first list sorts with the language's collator and draws dates with its formatters: they are
// made while the page is idle (this module loads while the user types the login), not by the
// first render of the list.
whenIdle(() => {
  const language = i18next.language;
  if (!language) return;
  collatorOf(language);
  const now = Math.floor(Date.now() / 1000);
  formatRelative(now, language);
  formatDate(now);
});

const viewKey = (resource: string) => `view:${resource}`;

function readView(resource: string, allowed: readonly View[], fallback: View): View {
  try {
    const saved = localStorage.getItem(viewKey(resource));
    return allowed.includes(saved as View) ? (saved as View) : fallback;
  } catch {
    return fallback;
  }
}

const configOf = (s: SessionState) => s.config;
const userOf = (s: SessionState) => s.user;

const shown = (filter: RecordFilter, config: UserConfig | null) =>
  !filter.visibleIf || !!config?.[filter.visibleIf];

/**
 * The filter text input. A keystroke re-renders only the input; the list follows in a transition
 * (interrupted by the next keystroke), so typing never waits for the cards.
 */
function FilterInput({
  label,
  onText,
  onFocus,
}: {
  label: string;
  onText: (text: string) => void;
  /** Prepares the filter (the input is focused before the first keystroke). */
  onFocus: () => void;
}) {
  const [text, setText] = useState('');
  return (
    <TextInput
      onFocus={onFocus}
      aria-label={label}
      placeholder={label}
      leftSection={<Icon name="search" size={16} />}
      value={text}
      onChange={(event) => {
        const value = event.currentTarget.value;
        setText(value);
        startTransition(() => onText(value));
      }}
      data-testid="resource-filter"
    />
  );
}

export interface ResourceListPageProps {
  resource: string;
}

export function ResourceListPage({ resource }: ResourceListPageProps) {
  const { t, i18n } = useTranslation();
  const def = resourceOf(resource);
  if (!def) throw new Error(`No resource ${resource}`);
  const list = def.meta.list ?? {};
  const views: readonly View[] = list.views ?? [list.view ?? 'table'];
  const config = useSessionValue(configOf);
  const user = useSessionValue(userOf);
  const role = user?.role_id ?? null;
  const [view, setView] = useState<View>(() =>
    readView(resource, views, list.view ?? views[0] ?? 'table'),
  );
  // The filter text the list shows, following the input's in a transition (FilterInput).
  const [deferredText, setDeferredText] = useState('');
  const tabs = useMemo(
    () => (list.tabs ?? []).filter((tab) => shown(tab, config)),
    [list.tabs, config],
  );
  const [tabKey, setTabKey] = useState<string | null>(null);
  const tab = tabs.find((x) => x.key === tabKey) ?? tabs[0] ?? null;
  const toggles = useMemo(
    () => (list.toggles ?? []).filter((toggle) => shown(toggle, config)),
    [list.toggles, config],
  );
  const [onToggles, setOnToggles] = useState<readonly string[]>([]);
  const [sort, setSort] = useState<ListSort | null>(
    list.sort ? { field: list.sort.field, order: list.sort.order ?? 'asc' } : null,
  );

  // Before the list's own read, so that its first records are asked for first.
  const preview = useListPreview<ListRecord & { id: string }>(resource);
  const { result, query } = useList<ListRecord & { id: string }>({
    resource,
    // A tab may be listed by another operation (the shared templates or media).
    ...(tab?.operation
      ? { meta: { operation: tab.operation, ...(tab.params ? { params: tab.params } : {}) } }
      : {}),
    pagination: { mode: 'off' },
    liveMode: 'manual',
    // Never polled: the live provider keeps the list right (versioned events, a resync after a
    // reconnect or a gap in a record's versions).
    errorNotification: false,
  });
  const searchable = useMemo(() => filterFields(resource), [resource]);
  // Re-rendered when the admin's role visibility changes; the columns are cached per revision.
  useRoleVisibilityRevision();
  const columns = tableColumns(resource, role);
  const activeToggles = useMemo(
    () => toggles.filter((x) => onToggles.includes(x.key)),
    [toggles, onToggles],
  );
  // The first records stand for the list while it loads, as long as the user filters nothing
  // (a filter over some records would say "no matches" wrongly): then the skeleton until it is there.
  const partial =
    query.isLoading &&
    preview !== null &&
    !tab?.operation &&
    !deferredText.trim() &&
    activeToggles.length === 0;
  const all = partial ? preview : result.data;
  // Sorted once per data change (a no-op when already in order), then filtered per keystroke.
  const ordered = useMemo(() => sortRecords(all, sort, i18n.language), [all, sort, i18n.language]);
  const records = useMemo(
    () =>
      filterRecords(ordered, searchable, {
        text: deferredText,
        tab,
        toggles: activeToggles,
        userId: user?.id ?? null,
      }),
    [ordered, searchable, deferredText, tab, activeToggles, user?.id],
  );
  const { revealId, announcement } = useCreatedFocus(resource, records);
  const listQuery = [deferredText, tab?.key ?? '', ...activeToggles.map((x) => x.key)].join(
    '\u0000',
  );
  useEffect(() => {
    if (!query.isLoading && !query.isError) rememberListCount(resource, all.length);
  }, [resource, all.length, query.isLoading, query.isError]);
  // Prepare the filter texts while idle, and at the latest when the filter input gets the focus,
  // so the first keystroke does not pay for them.
  const warmNow = useCallback(() => warmFilter(all, searchable), [all, searchable]);
  useEffect(() => {
    if (typeof requestIdleCallback !== 'function') return;
    if (partial) return;
    const handle = requestIdleCallback(() => warmFilter(all, searchable));
    return () => cancelIdleCallback(handle);
  }, [all, searchable, partial]);

  const changeView = (next: string): void => {
    const value: View = next === 'cards' ? 'cards' : 'table';
    setView(value);
    try {
      localStorage.setItem(viewKey(resource), value);
    } catch {
      // the choice is not remembered
    }
  };
  const detailsKind =
    list.details && routeUsable(resource, list.details, role) ? list.details : null;
  const detailsHref = useCallback(
    (record: ListRecord) =>
      detailsKind ? routeHref(resource, detailsKind, String(record.id)) : null,
    [resource, detailsKind],
  );
  const createHref = routeUsable(resource, 'create', role) ? routeHref(resource, 'create') : null;
  const title = t(`resources:${resource}.title`);

  const body =
    query.isLoading && !(partial && records.length > 0) ? (
      <ListSkeleton view={view} resource={resource} />
    ) : all.length === 0 ? (
      <EmptyState
        resource={resource}
        icon={list.empty?.icon ?? def.meta.icon}
        actionHref={list.empty?.action === 'create' ? createHref : null}
      />
    ) : records.length === 0 && tab && !deferredText.trim() && activeToggles.length === 0 ? (
      // Only the tab leaves nothing: the tab is empty, no filter of the user's is at work.
      <Text c="dimmed" py="xl" ta="center" data-testid="tab-empty">
        {t('common:list.tabEmpty', { tab: t(`resources:${resource}.tabs.${tab.key}`) })}
      </Text>
    ) : records.length === 0 ? (
      <Text c="dimmed" py="xl" ta="center" data-testid="no-matches">
        {t('common:list.noMatches')}
      </Text>
    ) : view === 'cards' && list.card ? (
      <ResourceCards
        resource={resource}
        card={list.card}
        records={records}
        label={title}
        revealId={revealId}
        query={listQuery}
      />
    ) : (
      <ResourceTable
        resource={resource}
        records={records}
        columns={columns}
        keyColumns={keyColumns(resource, role)}
        label={title}
        sort={sort}
        onSort={setSort}
        detailsHref={detailsKind ? detailsHref : null}
        titleField={list.title ?? 'name'}
        revealId={revealId}
      />
    );

  return (
    <CellTextProvider>
      <Stack gap="sm">
        <Group justify="space-between" align="center">
          <Title order={1} size="h2">
            {title}
          </Title>
          <Group gap="sm">
            {list.actions && <ListActions resource={resource} names={list.actions} />}
            {createHref && (
              <Button
                component={Link}
                to={createHref}
                leftSection={<Icon name="plus" size={18} />}
                data-testid="resource-create"
              >
                {t(`resources:${resource}.actions.create`)}
              </Button>
            )}
          </Group>
        </Group>
        <Group gap="sm" align="center" wrap="wrap">
          {searchable.length > 0 && (
            <FilterInput
              label={t('common:list.filter')}
              onText={setDeferredText}
              onFocus={warmNow}
            />
          )}
          {toggles.map((toggle) => (
            <Switch
              key={toggle.key}
              label={t(`resources:${resource}.toggles.${toggle.key}`)}
              checked={onToggles.includes(toggle.key)}
              onChange={(event) => {
                const on = event.currentTarget.checked;
                setOnToggles((current) =>
                  on ? [...current, toggle.key] : current.filter((k) => k !== toggle.key),
                );
              }}
              data-testid={`toggle-${toggle.key}`}
            />
          ))}
          {views.length > 1 && (
            <SegmentedControl
              aria-label={t('common:list.view')}
              value={view}
              onChange={changeView}
              data={views.map((value) => ({ value, label: t(`common:list.views.${value}`) }))}
              data-testid="resource-view"
            />
          )}
        </Group>
        {query.isError && (
          <Alert color="red" role="alert" icon={<Icon name="alert-triangle" size={18} />}>
            {translateError(query.error as never)}
          </Alert>
        )}
        {tabs.length > 1 ? (
          <Tabs value={tab?.key ?? null} onChange={setTabKey} keepMounted={false}>
            <Tabs.List>
              {tabs.map((x) => (
                <Tabs.Tab key={x.key} value={x.key} data-testid={`tab-${x.key}`}>
                  {t(`resources:${resource}.tabs.${x.key}`)}
                </Tabs.Tab>
              ))}
            </Tabs.List>
            <Tabs.Panel value={tab?.key ?? ''} pt="sm">
              {body}
            </Tabs.Panel>
          </Tabs>
        ) : (
          body
        )}
        <VisuallyHidden role="status" data-testid="list-announcement">
          {announcement}
        </VisuallyHidden>
      </Stack>
    </CellTextProvider>
  );
}
