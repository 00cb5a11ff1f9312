/**
 * The generated details screen of a record: its show answer's fields through the cell renderers
 * (scalars as a description list, lists of objects as tables of their items' fields), the
 * record's actions, and the way back to the list. The id comes from the route (`:id`) or, for
 * routes without one, from `?id=`.
 */
import '@mantine/core/styles/Table.css';
import '@mantine/core/styles/Skeleton.css';
import { Alert, Anchor, Group, Skeleton, Stack, Table, Text, Title } from '@mantine/core';
import { useOne } from '@refinedev/core';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { fields, type FieldMeta } from '@/generated/fields';
import { resourceOf } from '@/generated/resources';
import { Icon } from '@/components/icon';
import { translateError } from '@/lib/error-display';
import { RecordActions, recordTitle } from '../actions/record-actions';
import { routeHref } from '../actions/available-actions';
import { operationOf } from '../actions/operation-inputs';
import { CellTextProvider, FieldValue, valueAt } from '../cells/cell-registry';

type Row = Readonly<Record<string, unknown>>;

const fieldsOfType = (type: string | null | undefined): readonly FieldMeta[] =>
  type ? ((fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? []) : [];

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
      <Table.ScrollContainer minWidth={480}>
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

export function ResourceShowPage({ resource }: { resource: string }) {
  const { t } = useTranslation();
  const def = resourceOf(resource);
  if (!def) throw new Error(`No resource ${resource}`);
  const params = useParams();
  const navigate = useNavigate();
  const [search] = useSearchParams();
  const id = params.id ?? search.get('id') ?? '';
  const { result, query } = useOne<Row & { id: string }>({
    resource,
    id,
    queryOptions: { enabled: !!id },
    errorNotification: false,
  });
  const record = result;
  const all = fieldsOfType(def.meta.types.show).filter((meta) => !meta.hidden);
  const scalars = all.filter((meta) => !meta.items);
  const lists = all.filter((meta) => meta.items);
  const listHref = routeHref(resource, 'list');
  const back = listHref ? (
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

  return (
    <CellTextProvider>
      <Stack gap="lg" data-testid="resource-details" data-resource={resource}>
        {back}
        <Group justify="space-between" align="center">
          <Title order={1} size="h2">
            {recordTitle(resource, record)}
          </Title>
          <RecordActions
            resource={resource}
            record={record}
            exclude={[def.meta.list?.details ?? 'show']}
            onDone={(operation) => {
              // A deleted record has no details any more: back to its list.
              if (operationOf(resource, operation).method === 'DELETE' && listHref)
                void navigate(listHref);
            }}
          />
        </Group>
        <dl
          style={{
            display: 'grid',
            gridTemplateColumns: 'max-content 1fr',
            gap: '6px 24px',
            margin: 0,
          }}
        >
          {scalars
            .filter((meta) => valueAt(record, meta.path) !== undefined)
            .map((meta) => (
              <div key={meta.path} style={{ display: 'contents' }}>
                <Text component="dt" size="sm" c="dimmed">
                  {t(`resources:${resource}.fields.${meta.path}`)}
                </Text>
                <dd style={{ margin: 0 }} data-field={meta.path}>
                  <FieldValue resource={resource} meta={meta} record={record} />
                </dd>
              </div>
            ))}
        </dl>
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
