/**
 * The desktop of a direct link: name, state badge, description, booking and shutdown notices, the
 * last action's failure, and the buttons its state allows (Start; Stop and Open in browser while
 * it runs). Actions are the link's calls; the state follows the page's polling.
 */
import '@mantine/core/styles/Badge.css';
import { Alert, Badge, Button, Group, Stack, Text, Title } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { desktopStates, inSet } from '@/generated/policy';
import type { DirectViewer } from '@/generated/types';
import { ruleStates } from '@common/state-actions';
import { Icon } from '@/components/icon';
import { formatDate } from '@/lib/dates';
import { translateError } from '@/lib/error-display';
import { stateColor, stateIcon } from '@/resources/cells/state-style';
import { isRateLimited, type DirectAction } from './direct-viewer-api';

/** States with a screen to open, and in which Stop applies (the desktops' viewer rule). */
const RUNNING = ruleStates('desktops', 'viewer');
/** States Start applies to. */

export interface DirectDesktopCardProps {
  desktop: DirectViewer;
  /** The action under way, if any. */
  busy: DirectAction | null;
  /** The last action's failure, if any. */
  actionError: unknown;
  onAction: (action: DirectAction) => void;
  onOpen: () => void;
}

export function DirectDesktopCard({
  desktop,
  busy,
  actionError,
  onAction,
  onOpen,
}: DirectDesktopCardProps) {
  const { t } = useTranslation();
  const state = desktop.vmState;
  const running = RUNNING.includes(state);
  const startable = inSet(desktopStates.startable, state);
  const browser = 'browser-vnc' in desktop.viewers;
  const shutdown = desktop.scheduled?.shutdown;

  return (
    <Stack gap="sm" data-testid="direct-desktop" data-state={state}>
      <Group justify="space-between" wrap="nowrap" align="flex-start">
        <Title order={1} size="h3" style={{ overflowWrap: 'anywhere' }} data-testid="direct-name">
          {desktop.vmName}
        </Title>
        <Badge
          color={stateColor(state)}
          variant="light"
          leftSection={<Icon name={stateIcon(state)} size={12} />}
          data-testid="direct-state"
          data-value={state}
          aria-live="polite"
          style={{ flexShrink: 0 }}
        >
          {t(`resources:desktops.enum.state.${state}`, { defaultValue: state })}
        </Badge>
      </Group>
      {desktop.vmDescription && (
        <Text c="dimmed" style={{ whiteSpace: 'pre-line' }} data-testid="direct-description">
          {desktop.vmDescription}
        </Text>
      )}
      {desktop.needs_booking && (
        <Alert
          color="yellow"
          data-testid="direct-booking"
          icon={<Icon name="calendar" size={18} />}
        >
          {desktop.next_booking_start
            ? t('common:directViewer.bookingNext', {
                start: formatDate(desktop.next_booking_start),
                end: formatDate(desktop.next_booking_end ?? null),
              })
            : t('common:directViewer.booking')}
        </Alert>
      )}
      {shutdown && (
        <Text size="sm" data-testid="direct-shutdown">
          {t('common:directViewer.scheduledShutdown', { date: formatDate(shutdown) })}
        </Text>
      )}
      {actionError !== null && (
        <Alert color="red" role="alert" data-testid="direct-action-error">
          {isRateLimited(actionError)
            ? t('common:directViewer.rateLimitedBody')
            : translateError(actionError as never)}
        </Alert>
      )}
      {!running && !startable && (
        <Text size="sm" c="dimmed" data-testid="direct-wait">
          {t('common:directViewer.wait')}
        </Text>
      )}
      {running && !browser && (
        <Text size="sm" c="dimmed">
          {t('common:directViewer.noBrowserViewer')}
        </Text>
      )}
      <Group gap="sm">
        {startable && (
          <Button
            color="green"
            leftSection={<Icon name="play" size={16} />}
            loading={busy === 'start'}
            disabled={busy !== null}
            onClick={() => onAction('start')}
            data-testid="direct-start"
          >
            {t('common:directViewer.start')}
          </Button>
        )}
        {running && browser && (
          <Button
            leftSection={<Icon name="desktop" size={16} />}
            disabled={busy !== null}
            onClick={onOpen}
            data-testid="direct-open"
          >
            {t('common:directViewer.open')}
          </Button>
        )}
        {running && (
          <Button
            color="red"
            variant="light"
            leftSection={<Icon name="stop" size={16} />}
            loading={busy === 'stop'}
            disabled={busy !== null}
            onClick={() => onAction('stop')}
            data-testid="direct-stop"
          >
            {t('common:directViewer.stop')}
          </Button>
        )}
      </Group>
    </Stack>
  );
}
