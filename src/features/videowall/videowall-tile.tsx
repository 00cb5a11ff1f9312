/**
 * One tile of the videowall: a button named after the desktop's user and state, with the live
 * thumbnail while the desktop has a screen (else a placeholder) and the state badge on its
 * corner. Memoised: it re-renders only when its own desktop object, the thumbnail switch or its
 * own image changes, never because another desktop did.
 */
import '@mantine/core/styles/Badge.css';
import { memo } from 'react';
import { Badge, Text } from '@mantine/core';
import { IconDeviceDesktopOff, IconPhotoOff } from '@tabler/icons-react';
import { useTranslation } from 'react-i18next';
import { ruleStates } from '@common/state-actions';
import type { DeploymentDesktop } from '@/generated/types';
import { Icon } from '@/components/icon';
import { stateColor, stateIcon } from '@/resources/cells/state-style';
import { useWallThumbnail, type ThumbnailScheduler } from './thumbnail-scheduler';
import classes from './videowall.module.css';

/** States in which a desktop has a screen (thumbnail, console). */
export const SCREEN_STATES: readonly string[] = ruleStates('desktops', 'viewer');

export interface VideowallTileProps {
  /** The deployment desktop shown. */
  desktop: DeploymentDesktop;
  /** Shared thumbnail scheduler of the wall. */
  scheduler: ThumbnailScheduler;
  /** The "thumbnails on/off" switch. */
  thumbnails: boolean;
  /** Opens the desktop's console (stable across renders). */
  onOpen: (id: string) => void;
  /** Called on every render (tests count renders). */
  onRender?: (id: string) => void;
}

function TileScreen({
  desktop,
  scheduler,
  running,
  thumbnails,
  label,
}: {
  desktop: DeploymentDesktop;
  scheduler: ThumbnailScheduler;
  running: boolean;
  thumbnails: boolean;
  label: string;
}) {
  const { t } = useTranslation();
  const { ref, url } = useWallThumbnail(scheduler, desktop.id, running && thumbnails);
  return (
    <span ref={ref} className={classes.screen}>
      {url ? (
        <img
          src={url}
          alt={t('common:videowall.thumbnail', { name: label })}
          data-testid="videowall-thumbnail"
        />
      ) : running ? (
        <IconPhotoOff size={36} stroke={1.5} aria-hidden data-testid="videowall-no-thumbnail" />
      ) : (
        <IconDeviceDesktopOff
          size={36}
          stroke={1.5}
          aria-hidden
          data-testid="videowall-placeholder"
        />
      )}
    </span>
  );
}

export const VideowallTile = memo(function VideowallTile({
  desktop,
  scheduler,
  thumbnails,
  onOpen,
  onRender,
}: VideowallTileProps) {
  const { t } = useTranslation();
  onRender?.(desktop.id);
  const running = SCREEN_STATES.includes(desktop.state);
  const who = desktop.user_name || desktop.name;
  const state = t(`resources:desktops.enum.state.${desktop.state}`, {
    defaultValue: desktop.state,
  });
  const label = running
    ? t('common:videowall.tileOpen', { name: who, state })
    : t('common:videowall.tileNoScreen', { name: who, state });
  return (
    <button
      type="button"
      className={classes.tile}
      aria-label={label}
      aria-disabled={!running}
      onClick={() => {
        if (running) onOpen(desktop.id);
      }}
      data-testid="videowall-tile"
      data-desktop-id={desktop.id}
      data-state={desktop.state}
    >
      <TileScreen
        // A new screen (and no stale image) whenever refreshing turns on or off.
        key={running && thumbnails ? 'live' : 'still'}
        desktop={desktop}
        scheduler={scheduler}
        running={running}
        thumbnails={thumbnails}
        label={who}
      />
      <Badge
        className={classes.badge}
        color={stateColor(desktop.state)}
        variant="filled"
        size="sm"
        leftSection={<Icon name={stateIcon(desktop.state)} size={12} />}
        data-testid="videowall-state"
      >
        {state}
      </Badge>
      <span className={classes.caption}>
        <Text component="span" display="block" size="sm" fw={600} truncate="end" title={who}>
          {who}
        </Text>
        <Text
          component="span"
          display="block"
          size="xs"
          c="dimmed"
          truncate="end"
          title={desktop.name}
        >
          {desktop.name}
        </Text>
      </span>
    </button>
  );
});
