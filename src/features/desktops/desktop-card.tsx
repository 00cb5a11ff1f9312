/**
 * The desktop card (registered as `desktopCard`): a 16:9 picture (the live thumbnail while the
 * desktop has a screen, otherwise its card image, stock cards drawn as gradients) with the state
 * badge on its corner, the name and description, then every other `card` field of the schema
 * through the cell renderers, its next booking (kept live by the desktop socket events that carry
 * it), and the record actions at the bottom. A desktop that needs a booking and has none in force
 * offers Start now (book from now, then start) in place of Start and Open; a start refused for
 * the GPU plan or for the lack of a booking opens its modal here.
 */
import '@mantine/core/styles/AspectRatio.css';
import '@mantine/core/styles/Card.css';
import { memo, useMemo } from 'react';
import { AspectRatio, Box, Card, Group, Stack, Text } from '@mantine/core';
import { IconCalendarEvent } from '@tabler/icons-react';
import type { FieldMeta } from '@/generated/fields';
import type { Desktop } from '@/generated/types';
import { offeredActions, ruleStates } from '@common/state-actions';
import { formatDate } from '@/lib/dates';
import { isDesktop } from '@/lib/records';
import { stockGradient } from '@/lib/stock-card';
import { useRoleVisibilityRevision } from '@/lib/role-visibility';
import { useSessionRole } from '@/lib/session-state';
import { RecordActions } from '@/resources/actions/record-actions';
import type { CardProps } from '@/resources/cards/card-registry';
import { cardImageSource } from '@/resources/cells/card-image';
import { FieldValue, cellNameOf, useCellText } from '@/resources/cells/cell-registry';
import { cardFields } from '@/resources/list/list-columns';
import { needsBookingNow } from './booking-start';
import { BookingStartHost, StartNowActions } from './booking-start-parts';
import { ShutdownHint } from './shutdown-hint';
import { useDesktopThumbnail } from './use-desktop-thumbnail';

/** States in which the desktop has a screen to show. */
const SCREEN_STATES = ruleStates('desktops', 'viewer');

/** Card fields the card draws in its own places. */
const PLACED = new Set(['name', 'description', 'state', 'image', 'next_booking_start']);

/** Actions a desktop without the booking it needs does not offer (Start now stands in). */
const NOT_WITHOUT_BOOKING: readonly string[] = ['start', 'open'];
const NONE: readonly string[] = [];

/** Renderers that say what they show themselves; other fields get their label beside them. */
const SELF_EXPLAINING = new Set(['viewers', 'queue', 'scheduledShutdown', 'progress']);

/** The live thumbnail of a desktop with a screen (refreshed only while on screen). */
function LivePicture({ desktop }: { desktop: Desktop }) {
  const { t } = useCellText();
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

/** The card image (the list sends its id): an uploaded picture, or the stock card drawn as a gradient. */
function StillPicture({ desktop }: { desktop: Desktop }) {
  const source = cardImageSource(desktop.image) ?? { gradient: stockGradient('1') };
  return 'url' in source ? (
    <img src={source.url} alt="" loading="lazy" style={{ objectFit: 'cover' }} />
  ) : (
    <Box style={{ background: source.gradient }} data-testid="desktop-stock-card" />
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

/** "Next booking: start – end" in local time, when the desktop has one. */
function NextBooking({ desktop }: { desktop: Desktop }) {
  const { t } = useCellText();
  if (!desktop.next_booking_start) return null;
  const start = formatDate(desktop.next_booking_start);
  const end = formatDate(desktop.next_booking_end ?? null);
  return (
    <Group gap={4} wrap="nowrap" data-testid="desktop-next-booking">
      <IconCalendarEvent size={14} aria-hidden style={{ flexShrink: 0 }} />
      <Text size="xs">
        {end
          ? t('common:desktops.nextBookingRange', { start, end })
          : t('common:desktops.nextBooking', { date: start })}
      </Text>
    </Group>
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
  const role = useSessionRole();
  // cardFields answers a new list when the admin's role visibility changes.
  useRoleVisibilityRevision();
  const fields = cardFields(resource, role);
  const lines = useMemo(() => fields.filter((meta) => !PLACED.has(meta.path)), [fields]);
  const stateMeta = useMemo(() => fields.find((meta) => meta.path === 'state'), [fields]);
  if (!isDesktop(record)) return null;
  const desktop = record;
  // Only where the state offers a start (a stopped desktop).
  const gated = needsBookingNow(desktop) && offeredActions(resource, record).includes('start');
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
        <NextBooking desktop={desktop} />
        <ShutdownHint desktop={desktop} />
        <Box mt="auto" pt={4}>
          <Group gap={6} wrap="wrap">
            {gated && <StartNowActions desktop={desktop} />}
            <RecordActions
              resource={resource}
              record={record}
              exclude={gated ? NOT_WITHOUT_BOOKING : NONE}
            />
          </Group>
        </Box>
        <BookingStartHost desktop={desktop} />
      </Stack>
    </Card>
  );
});
