import { memo } from 'react';
import { Badge, Card, Group, Stack, Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import type { Desktop } from '@/generated/types';
import { normalisedState } from '@/resources/state-actions';
import { OpenDesktopMenu } from '@/features/viewers/open-desktop-menu';
import { DesktopActions } from './desktop-actions';
import { DesktopManage } from './desktop-manage';
import { formatDate } from './format';
import { useDesktopThumbnail } from './use-desktop-thumbnail';

/** States in which the desktop has a screen to show. */
export const RUNNING_STATES: readonly string[] = ['started', 'waitingip', 'shutting-down'];

const STATE_COLORS: Partial<Record<string, string>> = {
  started: 'green',
  stopped: 'gray',
  failed: 'red',
  'shutting-down': 'orange',
  waitingip: 'yellow',
  maintenance: 'orange',
};

export interface DesktopCardProps {
  /** The desktop to show. */
  desktop: Desktop;
}

/** The state badge of a desktop. */
export function DesktopStateBadge({ desktop }: DesktopCardProps) {
  const { t } = useTranslation();
  const state = normalisedState('desktops', desktop as unknown as Record<string, unknown>);
  return (
    <Badge color={STATE_COLORS[state] ?? 'blue'} variant="light" data-testid="desktop-state">
      {t(`resources:desktops.enum.state.${state}`)}
    </Badge>
  );
}

/** Facts line: last access, queue, scheduled shutdown, next booking. */
export function DesktopFacts({ desktop }: DesktopCardProps) {
  const { t } = useTranslation();
  const shutdown = formatDate(desktop.scheduled?.shutdown);
  const booking = formatDate(desktop.next_booking_start);
  const accessed = formatDate(desktop.accessed);
  return (
    <Stack gap={2}>
      {accessed && (
        <Text size="xs" c="dimmed">
          {t('common:desktops.lastAccess', { date: accessed })}
        </Text>
      )}
      {typeof desktop.queue?.position === 'number' && (
        <Text size="xs" c="orange.9" data-testid="desktop-queue">
          {t('common:desktops.queuePosition', { position: desktop.queue.position })}
        </Text>
      )}
      {shutdown && (
        <Text size="xs" c="orange.9">
          {t('common:desktops.scheduledShutdown', { date: shutdown })}
        </Text>
      )}
      {booking && <Text size="xs">{t('common:desktops.nextBooking', { date: booking })}</Text>}
    </Stack>
  );
}

/** Viewer badges. */
export function DesktopViewers({ desktop }: DesktopCardProps) {
  const { t } = useTranslation();
  if (!desktop.viewers?.length) return null;
  return (
    <Group gap={4}>
      {desktop.viewers.map((viewer) => (
        <Badge key={viewer} size="xs" variant="default">
          {t(`common:viewers.${viewer}`)}
        </Badge>
      ))}
    </Group>
  );
}

/** Card image: the live thumbnail while running (refreshed only while on screen), else the desktop image. */
export function DesktopPicture({ desktop }: DesktopCardProps) {
  const { t } = useTranslation();
  const running = RUNNING_STATES.includes(desktop.state);
  const { ref, url } = useDesktopThumbnail(desktop.id, running);
  const style = { objectFit: 'cover', display: 'block', height: 90, width: '100%' } as const;
  return (
    <div
      ref={ref}
      style={{ height: 90, background: running ? '#111' : 'var(--mantine-color-default-hover)' }}
    >
      {running && url ? (
        <img
          src={url}
          alt={t('common:desktops.thumbnail', { name: desktop.name })}
          width="100%"
          height={90}
          style={{ ...style, objectFit: 'contain' }}
          data-testid="desktop-thumbnail"
        />
      ) : desktop.image?.url ? (
        <img src={desktop.image.url} alt="" loading="lazy" width="100%" height={90} style={style} />
      ) : null}
    </div>
  );
}

/** Grid card of one desktop; memoised so a socket update repaints only its own card. */
export const DesktopCard = memo(function DesktopCard({ desktop }: DesktopCardProps) {
  return (
    <Card
      withBorder
      padding="sm"
      h="100%"
      data-testid="desktop-card"
      data-desktop-id={desktop.id}
      data-state={desktop.state}
    >
      <Card.Section>
        <DesktopPicture desktop={desktop} />
      </Card.Section>
      <Stack gap={6} mt="xs">
        <Group justify="space-between" wrap="nowrap" gap="xs">
          <Text fw={600} truncate title={desktop.name} data-testid="desktop-name">
            {desktop.name}
          </Text>
          <DesktopStateBadge desktop={desktop} />
        </Group>
        {desktop.description && (
          <Text size="xs" c="dimmed" lineClamp={1}>
            {desktop.description}
          </Text>
        )}
        <DesktopViewers desktop={desktop} />
        <DesktopFacts desktop={desktop} />
        <OpenDesktopMenu desktop={desktop} />
        <Group gap={6} wrap="wrap">
          <DesktopActions desktop={desktop} />
          <DesktopManage desktop={desktop} />
        </Group>
      </Stack>
    </Card>
  );
});

/** List row of one desktop (list view). */
export const DesktopRow = memo(function DesktopRow({ desktop }: DesktopCardProps) {
  return (
    <Group
      wrap="nowrap"
      gap="md"
      px="sm"
      h="100%"
      style={{ borderBottom: '1px solid var(--mantine-color-default-border)' }}
      data-testid="desktop-card"
      data-desktop-id={desktop.id}
      data-state={desktop.state}
    >
      <Text fw={600} w={220} truncate data-testid="desktop-name">
        {desktop.name}
      </Text>
      <DesktopStateBadge desktop={desktop} />
      <Text size="xs" c="dimmed" style={{ flex: 1 }} truncate>
        {desktop.description}
      </Text>
      <DesktopViewers desktop={desktop} />
      <Text size="xs" c="dimmed" w={130}>
        {formatDate(desktop.accessed)}
      </Text>
      <OpenDesktopMenu desktop={desktop} />
      <DesktopActions desktop={desktop} />
      <DesktopManage desktop={desktop} />
    </Group>
  );
});
