/**
 * What an action will affect, shown in its confirmation or form (`x-actions.actions.<name>.preview`
 * names a read operation of the resource, called for the record): the derivatives of a template
 * before it is deleted or converted, the desktops using a medium before it is deleted. The answer
 * is a list, or an object whose array properties are lists; each item shows its name, kind and
 * owner.
 */
import '@mantine/core/styles/Badge.css';
import { Alert, Badge, Group, List, Loader, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import type { ActionDefinition } from '@common/state-actions';
import { translateError } from '@/lib/error-display';
import { requestOperation } from '@/providers/http-client';
import { operationInputs } from './operation-inputs';

type Values = Readonly<Record<string, unknown>>;

export interface PreviewItem {
  key: string;
  name: string;
  kind: string | null;
  owner: string | null;
}

/** The items of a preview answer (items the caller may not see come as `{}` and are counted). */
export function previewItems(answer: unknown): { items: PreviewItem[]; hidden: number } {
  const lists = Array.isArray(answer)
    ? [answer]
    : answer && typeof answer === 'object'
      ? Object.values(answer).filter(Array.isArray)
      : [];
  const items: PreviewItem[] = [];
  let hidden = 0;
  for (const list of lists)
    for (const raw of list as unknown[]) {
      const item = (raw ?? {}) as Values;
      const name = typeof item.name === 'string' ? item.name : null;
      if (!name) {
        hidden += 1;
        continue;
      }
      const owner = item.user_name ?? item.user;
      items.push({
        key: `${String(item.id ?? name)}-${items.length}`,
        name,
        kind: typeof item.kind === 'string' ? item.kind : null,
        owner: typeof owner === 'string' ? owner : null,
      });
    }
  return { items, hidden };
}

/** One affected item of a preview: its name, its kind and its owner when known. */
export function PreviewItemLine({
  item,
}: {
  item: Pick<PreviewItem, 'name' | 'kind'> & { owner?: string | null };
}) {
  const { t } = useTranslation();
  return (
    <List.Item>
      <Group gap={6} wrap="nowrap">
        <Text span size="sm">
          {item.name}
        </Text>
        {item.kind && (
          <Badge size="xs" variant="light">
            {t(`common:preview.kinds.${item.kind}`, { defaultValue: item.kind })}
          </Badge>
        )}
        {item.owner && (
          <Text span size="xs" c="dimmed">
            {item.owner}
          </Text>
        )}
      </Group>
    </List.Item>
  );
}

export function ActionPreview({
  resource,
  record,
  def,
}: {
  resource: string;
  record: Values;
  def: ActionDefinition;
}) {
  const { t } = useTranslation();
  const operation = def.preview ?? '';
  const { params } = operationInputs(resource, operation, {}, record);
  const answer = useQuery({
    queryKey: [`${resource}.${operation}`, params],
    queryFn: () => requestOperation(`${resource}.${operation}`, { params }),
    staleTime: 0,
  });
  if (answer.isPending) return <Loader size="xs" aria-label={t('common:loading')} />;
  if (answer.isError)
    return (
      <Alert color="orange" role="alert">
        {translateError(answer.error as never)}
      </Alert>
    );
  const { items, hidden } = previewItems(answer.data);
  if (items.length === 0 && hidden === 0)
    return (
      <Text size="sm" c="dimmed" data-testid="action-preview" data-count={0}>
        {t('common:preview.none')}
      </Text>
    );
  return (
    <div data-testid="action-preview" data-count={items.length + hidden}>
      <Text size="sm" fw={500}>
        {t('common:preview.affects', { count: items.length + hidden })}
      </Text>
      <List size="sm" mt={4} spacing={2} mah={200} style={{ overflowY: 'auto' }}>
        {items.map((item) => (
          <PreviewItemLine key={item.key} item={item} />
        ))}
        {hidden > 0 && (
          <List.Item>
            <Text span size="sm" c="dimmed">
              {t('common:preview.hidden', { count: hidden })}
            </Text>
          </List.Item>
        )}
      </List>
    </div>
  );
}
