/**
 * The browser VNC console of one desktop, covering the window: noVNC canvas with a toolbar
 * (status, Ctrl+Alt+Del, keyboard focus, scaling, fullscreen, disconnect/reconnect) and an overlay
 * when the desktop stopped or the connection ended. Shared by the logged-in viewer page and the
 * direct-viewer page, which differ in how they get a ticket and the way back they offer.
 * Only loaded in lazy chunks (noVNC uses top-level await).
 */
import '@mantine/core/styles/Badge.css';
import '@mantine/core/styles/Tooltip.css';
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { Badge, Button, Group, Stack, Text, Title, Tooltip } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { translateError } from '@/lib/error-display';
import { useVncConnection, type VncStatus, type VncTicketFetcher } from './use-vnc-connection';
import { VIEWER_FRAME_STYLE } from './viewer-frame';

const STATUS_COLORS: Record<VncStatus, string> = {
  connecting: 'blue',
  connected: 'green',
  reconnecting: 'yellow',
  disconnected: 'gray',
  stopped: 'gray',
  error: 'red',
};

/** Fullscreen state of the document. */
function useFullscreen(): boolean {
  const [fullscreen, setFullscreen] = useState(
    () => typeof document !== 'undefined' && !!document.fullscreenElement,
  );
  useEffect(() => {
    const update = (): void => setFullscreen(!!document.fullscreenElement);
    document.addEventListener('fullscreenchange', update);
    return () => document.removeEventListener('fullscreenchange', update);
  }, []);
  return fullscreen;
}

export interface VncConsoleProps {
  /** The desktop's id. */
  id: string | undefined;
  /** Asks for a console ticket; default the logged-in user's `desktops.viewer` call. */
  fetchTicket?: VncTicketFetcher;
  /** Drawn first in the toolbar: the way back (a link or a button). */
  leading?: ReactNode;
  /** Shown as the title until the viewer answer names the desktop; default "Desktop". */
  fallbackName?: string;
  /** Buttons of the overlay (stopped, disconnected, failed) after Reconnect. */
  overlayActions?: (status: VncStatus) => ReactNode;
  /** Told every status of the connection. */
  onStatus?: (status: VncStatus) => void;
}

export function VncConsole({
  id,
  fetchTicket,
  leading,
  fallbackName,
  overlayActions,
  onStatus,
}: VncConsoleProps) {
  const { t } = useTranslation();
  const rootRef = useRef<HTMLDivElement>(null);
  const screenRef = useRef<HTMLDivElement>(null);
  const [scale, setScale] = useState(true);
  const fullscreen = useFullscreen();
  const { status, name, error, rfb, connect, disconnect } = useVncConnection(
    id,
    screenRef,
    scale,
    fetchTicket,
  );
  const connected = status === 'connected' && !!rfb;
  useEffect(() => onStatus?.(status), [onStatus, status]);

  const toggleFullscreen = (): void => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void rootRef.current?.requestFullscreen?.().catch(() => undefined);
    rfb?.focus();
  };

  const overlay = status === 'stopped' || status === 'disconnected' || status === 'error';

  return (
    <div ref={rootRef} data-testid="vnc-viewer" data-status={status} style={VIEWER_FRAME_STYLE}>
      <Group
        gap="xs"
        px="sm"
        py={4}
        wrap="nowrap"
        justify="space-between"
        style={{
          background: 'var(--mantine-color-body)',
          borderBottom: '1px solid var(--mantine-color-default-border)',
        }}
        role="toolbar"
        aria-label={t('common:vnc.toolbar')}
      >
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          {leading}
          <Title
            order={1}
            size="h5"
            style={{ whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }}
          >
            {name || fallbackName || t('common:vnc.title')}
          </Title>
          <Badge
            color={STATUS_COLORS[status]}
            variant="light"
            data-testid="vnc-status"
            aria-live="polite"
          >
            {t(`common:vnc.status.${status}`)}
          </Badge>
        </Group>
        <Group gap={6} wrap="nowrap">
          <Button
            size="compact-sm"
            variant="default"
            disabled={!connected}
            onClick={() => rfb?.sendCtrlAltDel()}
            data-testid="vnc-cad"
          >
            {t('common:vnc.ctrlAltDel')}
          </Button>
          <Tooltip label={t('common:vnc.focusHint')} withArrow>
            <Button
              size="compact-sm"
              variant="default"
              disabled={!connected}
              onClick={() => rfb?.focus()}
              data-testid="vnc-focus"
            >
              {t('common:vnc.focus')}
            </Button>
          </Tooltip>
          <Button
            size="compact-sm"
            variant={scale ? 'light' : 'default'}
            aria-pressed={scale}
            onClick={() => setScale((value) => !value)}
            data-testid="vnc-scale"
          >
            {scale ? t('common:vnc.scaleFit') : t('common:vnc.scaleNative')}
          </Button>
          <Button
            size="compact-sm"
            variant="default"
            aria-pressed={fullscreen}
            onClick={toggleFullscreen}
            data-testid="vnc-fullscreen"
          >
            {fullscreen ? t('common:vnc.exitFullscreen') : t('common:vnc.fullscreen')}
          </Button>
          {connected || status === 'connecting' || status === 'reconnecting' ? (
            <Button
              size="compact-sm"
              color="red"
              variant="light"
              onClick={disconnect}
              data-testid="vnc-disconnect"
            >
              {t('common:vnc.disconnect')}
            </Button>
          ) : (
            <Button
              size="compact-sm"
              variant="light"
              onClick={connect}
              disabled={status === 'stopped'}
              data-testid="vnc-reconnect"
            >
              {t('common:vnc.reconnect')}
            </Button>
          )}
        </Group>
      </Group>
      <div style={{ position: 'relative', flex: 1, minHeight: 0 }}>
        <div
          ref={screenRef}
          data-testid="vnc-screen"
          aria-label={t('common:vnc.screen')}
          style={{
            position: 'absolute',
            inset: 0,
            overflow: scale ? 'hidden' : 'auto',
            visibility: overlay ? 'hidden' : 'visible',
          }}
        />
        {overlay && (
          <Stack
            align="center"
            justify="center"
            gap="sm"
            style={{ position: 'absolute', inset: 0 }}
            data-testid="vnc-overlay"
          >
            <Text c="gray.3" size="lg" role="alert" data-testid="vnc-message">
              {status === 'stopped'
                ? t('common:vnc.stopped')
                : status === 'error'
                  ? translateError(error as never)
                  : t('common:vnc.disconnected')}
            </Text>
            <Group gap="sm">
              {status !== 'stopped' && (
                <Button onClick={connect} data-testid="vnc-overlay-reconnect">
                  {t('common:vnc.reconnect')}
                </Button>
              )}
              {overlayActions?.(status)}
            </Group>
          </Stack>
        )}
      </div>
    </div>
  );
}
