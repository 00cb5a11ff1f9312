/**
 * The generated details screen of a record: its show answer's fields through the cell renderers
 * (scalars as a description list, lists of objects as tables of their items' fields), the
 * record's actions, and the way back to the list. The id comes from the route (`:id`) or, for
 * routes without one, from `?id=`; a singleton (the profile) is read without one.
 *
 * Fields with an x-ui `section` are grouped in titled panels, in the schema's order, each with the
 * actions drawn in it (`x-actions.actions.<name>.section`); the other actions sit in the title
 * row. On the `action` route (`/profile/:action`) the named action's dialog opens over the page,
 * and closing it comes back to the details route.
 */
import '@mantine/core/styles/Table.css';
import '@mantine/core/styles/Skeleton.css';
import '@mantine/core/styles/Paper.css';
import { useEffect, useMemo, useRef } from 'react';
import { Alert, Anchor, Group, Paper, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import { useOne } from '@refinedev/core';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { fields, type FieldMeta } from '@/generated/fields';
import { resourceOf } from '@/generated/resources';
import { actionOf, machineOf } from '@common/state-actions';
import { Icon } from '@/components/icon';
import { translateError } from '@/lib/error-display';
import { hiddenFields, pathHidden, useRoleVisibilityRevision } from '@/lib/role-visibility';
import { useSessionState } from '@/lib/session-state';
import { openRecordActionDialog, RecordActions, recordTitle } from '../actions/record-actions';
import { availableActions, routeHref } from '../actions/available-actions';
import { operationOf } from '../actions/operation-inputs';
import { CellTextProvider, FieldValue, valueAt } from '../cells/cell-registry';
import { visibleFields } from '../form/field-meta';
import detailsClasses from './details-list.module.css';

type Row = Readonly<Record<string, unknown>>;

const fieldsOfType = (type: string | null | undefined): readonly FieldMeta[] =>
  type ? ((fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? []) : [];

export interface ShowSection {
  id: string;
  fields: FieldMeta[];
  /** Names of the actions drawn in the section. */
  actions: string[];
}

/**
 * The panels of a details page: the fields' sections in x-ui order, then the sections only
 * actions name (in their declaration order). Fields without a section are not in any.
 */
export function showSections(resource: string, list: readonly FieldMeta[]): ShowSection[] {
  const sections = new Map<string, ShowSection>();
  const sectionOf = (id: string): ShowSection => {
    const found = sections.get(id) ?? { id, fields: [], actions: [] };
    sections.set(id, found);
    return found;
  };
  for (const meta of visibleFields(list))
    if (meta.section) sectionOf(meta.section).fields.push(meta);
  for (const [name, def] of Object.entries(machineOf(resource)?.actions ?? {}))
    if (def.section) sectionOf(def.section).actions.push(name);
  return [...sections.values()];
}

function ItemsTable({
  resource,
  meta,
  items,
}: {
  resource: string;
  meta: FieldMeta;
  items: readonly Row[];
}) {
  const { t } = useTranslation();
  const columns = fieldsOfType(meta.items).filter((c) => !c.hidden);
  if (items.length === 0) return null;
  return (
    <Stack gap="xs" component="section" aria-labelledby={`section-${meta.path}`}>
      <Title order={2} size="h4" id={`section-${meta.path}`}>
        {t(`resources:${resource}.fields.${meta.path}`)}
      </Title>
      {/* A table wider than a phone scrolls on its own, and the keyboard can reach it to scroll. */}
      <Table.ScrollContainer minWidth={480} type="native" tabIndex={0}>
        <Table striped withTableBorder data-testid={`items-${meta.path}`}>
          <Table.Thead>
            <Table.Tr>
              {columns.map((c) => (
                <Table.Th key={c.path}>{t(`resources:${resource}.fields.${c.path}`)}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {items.map((item, i) => (
              <Table.Tr key={String(item.id ?? i)}>
                {columns.map((c) => (
                  <Table.Td key={c.path}>
                    <FieldValue resource={resource} meta={c} record={item} />
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}

/** Label and value of each field the record has, as a description list. */
function DetailsList({
  resource,
  list,
  record,
}: {
  resource: string;
  list: readonly FieldMeta[];
  record: Row;
}) {
  const { t } = useTranslation();
  const present = list.filter((meta) => valueAt(record, meta.path) !== undefined);
  if (present.length === 0) return null;
  return (
    <dl className={detailsClasses.list}>
      {present.map((meta) => (
        <div key={meta.path} style={{ display: 'contents' }}>
          <Text component="dt" size="sm" c="dimmed">
            {t(`resources:${resource}.fields.${meta.path}`)}
          </Text>
          <dd className={detailsClasses.value} data-field={meta.path}>
            <FieldValue resource={resource} meta={meta} record={record} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

/** Opens the dialog of the action named in the URL once, then comes back to `back` on close. */
function useActionDeepLink(resource: string, record: Row | undefined, back: string | null): void {
  const { action } = useParams();
  const navigate = useNavigate();
  const role = useSessionState().user?.role_id ?? null;
  const opened = useRef<string | null>(null);
  useEffect(() => {
    if (!action || !record || opened.current === action) return;
    opened.current = action;
    const leave = () => {
      if (back) void navigate(back, { replace: true });
    };
    const found = actionOf(resource, action)
      ? availableActions(resource, record, role).find((a) => a.name === action)
      : undefined;
    // An action the record does not offer (or that has no dialog) leaves the URL.
    if (!found || !openRecordActionDialog({ resource, record, action: found, onClosed: leave }))
      leave();
  }, [action, record, resource, role, back, navigate]);
}

/** Whether the record names itself (its title field or name); a settings page does not. */
function hasOwnTitle(resource: string, record: Record<string, unknown>): boolean {
  const field = resourceOf(resource)?.meta.list?.title ?? 'name';
  return typeof record[field] === 'string' || typeof record.name === 'string';
}

export function ResourceShowPage({ resource }: { resource: string }) {
  const { t } = useTranslation();
  const def = resourceOf(resource);
  if (!def) throw new Error(`No resource ${resource}`);
  const singleton = def.meta.singleton;
  const params = useParams();
  const navigate = useNavigate();
  const [search] = useSearchParams();
  const { user } = useSessionState();
  // A singleton is read without an id; the user's id keys its cache (live events patch it).
  const id = singleton ? (user?.id ?? '') : (params.id ?? search.get('id') ?? '');
  const { result, query } = useOne<Row & { id: string }>({
    resource,
    id,
    queryOptions: { enabled: !!id },
    errorNotification: false,
  });
  const record = result;
  const showType = def.meta.types.show;
  const role = user?.role_id ?? null;
  useRoleVisibilityRevision();
  const hidden = hiddenFields(resource, role);
  const { scalars, lists } = useMemo(() => {
    // Fields a role may not read (x-roles.read), or the admin's role visibility hides from it,
    // are not shown to it.
    const all = fieldsOfType(showType).filter(
      (meta) =>
        !meta.hidden &&
        (!meta.roles?.read || (!!role && meta.roles.read.includes(role))) &&
        !pathHidden(hidden, meta.path),
    );
    return { scalars: all.filter((meta) => !meta.items), lists: all.filter((meta) => meta.items) };
  }, [showType, role, hidden]);
  const sections = useMemo(() => showSections(resource, scalars), [resource, scalars]);
  const sectioned = useMemo(() => sections.flatMap((s) => s.actions), [sections]);
  const titleExclude = useMemo(
    () => [def.meta.list?.details ?? 'show', ...sectioned],
    [def.meta.list?.details, sectioned],
  );
  const offered = useMemo(
    () => new Set(record ? availableActions(resource, record, role).map((a) => a.name) : []),
    [record, resource, role],
  );
  const listHref = routeHref(resource, 'list');
  const showHref = routeHref(resource, 'show', singleton ? undefined : id);
  useActionDeepLink(resource, record, showHref);
  const back =
    listHref && !singleton ? (
      <Anchor component={Link} to={listHref} size="sm">
        <Group gap={4} component="span">
          <Icon name="arrow-left" size={16} />
          {t(`resources:${resource}.title`)}
        </Group>
      </Anchor>
    ) : null;

  if (query.isError)
    return (
      <Stack gap="md">
        {back}
        <Alert color="red" role="alert">
          {translateError(query.error as never)}
        </Alert>
      </Stack>
    );
  if (!record)
    return (
      <Stack gap="md" role="status" aria-label={t('common:loading')}>
        {back}
        <Skeleton height={32} width="40%" />
        <Skeleton height={160} />
      </Stack>
    );

  const onDone = (operation: string): void => {
    // A deleted record has no details any more: back to its list.
    if (operationOf(resource, operation).method === 'DELETE' && listHref) void navigate(listHref);
  };
  return (
    <CellTextProvider>
      <Stack gap="lg" data-testid="resource-details" data-resource={resource}>
        {back}
        <Group justify="space-between" align="center">
          <Title order={1} size="h2">
            {singleton && !hasOwnTitle(resource, record)
              ? t(`resources:${resource}.title`)
              : recordTitle(resource, record)}
          </Title>
          <RecordActions
            resource={resource}
            record={record}
            exclude={titleExclude}
            onDone={onDone}
          />
        </Group>
        <DetailsList
          resource={resource}
          list={scalars.filter((meta) => !meta.section)}
          record={record}
        />
        {sections
          .filter(
            (section) =>
              section.actions.some((name) => offered.has(name)) ||
              section.fields.some((meta) => valueAt(record, meta.path) !== undefined),
          )
          .map((section) => {
            const headingId = `${resource}-section-${section.id}`;
            return (
              <Paper
                key={section.id}
                component="section"
                withBorder
                radius="md"
                p="md"
                aria-labelledby={headingId}
                data-section={section.id}
              >
                <Group justify="space-between" align="center" mb="sm" gap="xs">
                  <Title order={2} size="h4" id={headingId}>
                    {t(`resources:${resource}.sections.${section.id}`, {
                      defaultValue: t(`common:form.sections.${section.id}`),
                    })}
                  </Title>
                  <RecordActions
                    resource={resource}
                    record={record}
                    include={section.actions}
                    onDone={onDone}
                  />
                </Group>
                <DetailsList resource={resource} list={section.fields} record={record} />
              </Paper>
            );
          })}
        {lists.map((meta) => {
          const items = valueAt(record, meta.path);
          return Array.isArray(items) ? (
            <ItemsTable key={meta.path} resource={resource} meta={meta} items={items as Row[]} />
          ) : null;
        })}
      </Stack>
    </CellTextProvider>
  );
}
