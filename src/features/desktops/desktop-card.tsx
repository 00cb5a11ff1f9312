/**
 * The desktop card (registered as `desktopCard`): a 16:9 picture (the live thumbnail while the
 * desktop has a screen, otherwise its card image, stock cards drawn as gradients) with the state
 * badge on its corner, the name and description, then every other `card` field of the schema
 * through the cell renderers, and the record actions at the bottom.
 */
import '@mantine/core/styles/AspectRatio.css';
import '@mantine/core/styles/Card.css';
import { memo, useMemo } from 'react';
import { AspectRatio, Box, Card, Group, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { FieldMeta } from '@/generated/fields';
import type { Desktop } from '@/generated/types';
import { ruleStates } from '@common/state-actions';
import { isDesktop } from '@/lib/records';
import { stockGradient } from '@/lib/stock-card';
import { useSessionState } from '@/lib/session-state';
import { RecordActions } from '@/resources/actions/record-actions';
import type { CardProps } from '@/resources/cards/card-registry';
import { FieldValue, cellNameOf, useCellText } from '@/resources/cells/cell-registry';
import { cardFields } from '@/resources/list/list-columns';
import { useDesktopThumbnail } from './use-desktop-thumbnail';

/** States in which the desktop has a screen to show. */
const SCREEN_STATES = ruleStates('desktops', 'viewer');

/** Card fields the card draws in its own places. */
const PLACED = new Set(['name', 'description', 'state', 'image']);

/** Renderers that say what they show themselves; other fields get their label beside them. */
const SELF_EXPLAINING = new Set(['viewers', 'queue', 'scheduledShutdown', 'progress']);

/** The live thumbnail of a desktop with a screen (refreshed only while on screen). */
function LivePicture({ desktop }: { desktop: Desktop }) {
  const { t } = useTranslation();
  const { ref, url } = useDesktopThumbnail(desktop.id, true);
  return (
    <AspectRatio ratio={16 / 9} ref={ref}>
      {url ? (
        <img
          src={url}
          alt={t('common:desktops.thumbnail', { name: desktop.name })}
          style={{ objectFit: 'contain', background: '#111' }}
          data-testid="desktop-thumbnail"
        />
      ) : (
        <StillPicture desktop={desktop} />
      )}
    </AspectRatio>
  );
}

/** The card image: an uploaded picture, or the stock card drawn as a gradient. */
function StillPicture({ desktop }: { desktop: Desktop }) {
  const image = desktop.image;
  return image?.url ? (
    <img src={image.url} alt="" loading="lazy" style={{ objectFit: 'cover' }} />
  ) : (
    <Box style={{ background: stockGradient(image?.id ?? '1') }} data-testid="desktop-stock-card" />
  );
}

function DesktopPicture({ desktop }: { desktop: Desktop }) {
  if (SCREEN_STATES.includes(desktop.state)) return <LivePicture desktop={desktop} />;
  return (
    <AspectRatio ratio={16 / 9}>
      <StillPicture desktop={desktop} />
    </AspectRatio>
  );
}

function CardLine({
  resource,
  meta,
  record,
}: {
  resource: string;
  meta: FieldMeta;
  record: CardProps['record'];
}) {
  const { t } = useCellText();
  const present = record[meta.path];
  if (present === undefined || present === null || present === '' || present === false) return null;
  const value = <FieldValue resource={resource} meta={meta} record={record} />;
  if (SELF_EXPLAINING.has(cellNameOf(meta))) return value;
  return (
    <Group gap={4} wrap="nowrap" data-field={meta.path}>
      <Text size="xs" c="dimmed" style={{ flexShrink: 0 }}>
        {t(`resources:${resource}.fields.${meta.path}`)}
      </Text>
      {value}
    </Group>
  );
}

export const DesktopCard = memo(function DesktopCard({ resource, record }: CardProps) {
  const role = useSessionState().user?.role_id ?? null;
  const lines = useMemo(
    () => cardFields(resource, role).filter((meta) => !PLACED.has(meta.path)),
    [resource, role],
  );
  const stateMeta = useMemo(
    () => cardFields(resource, role).find((meta) => meta.path === 'state'),
    [resource, role],
  );
  if (!isDesktop(record)) return null;
  const desktop = record;
  return (
    <Card
      withBorder
      padding="sm"
      w="100%"
      data-testid="record"
      data-record-id={desktop.id}
      data-state={desktop.state}
      style={{ display: 'flex', flexDirection: 'column' }}
    >
      <Card.Section pos="relative">
        <DesktopPicture desktop={desktop} />
        {stateMeta && (
          <Box pos="absolute" top={8} left={8}>
            <FieldValue resource={resource} meta={stateMeta} record={record} />
          </Box>
        )}
      </Card.Section>
      <Stack gap={6} mt="xs" style={{ flex: 1 }}>
        <Text fw={600} truncate="end" title={desktop.name} data-testid="record-title">
          {desktop.name}
        </Text>
        {desktop.description && (
          <Text size="xs" c="dimmed" lineClamp={2}>
            {desktop.description}
          </Text>
        )}
        {lines.map((meta) => (
          <CardLine key={meta.path} resource={resource} meta={meta} record={record} />
        ))}
        <Box mt="auto" pt={4}>
          <RecordActions resource={resource} record={record} />
        </Box>
      </Stack>
    </Card>
  );
});
