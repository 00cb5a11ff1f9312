/**
 * The browser RDP viewer (`/rdp`, a page without the application shell): the desktop's screen
 * through the server's Guacamole tunnel, a toolbar (status, Ctrl+Alt+Del, fullscreen,
 * disconnect/retry) and the RDP dialog for every state in which the screen cannot be used:
 * connecting, disconnected, unstable, error, cookie not set, cookie expired, retrying N of max and
 * RDP service not running, with Retry and Refresh.
 */
import '@mantine/core/styles/Badge.css';
import { useEffect, useRef, useState } from 'react';
import { Badge, Button, Group, Loader, Paper, Stack, Text, Title } from '@mantine/core';
import { Link } from 'react-router';
import { useTranslation } from 'react-i18next';
import { HOME_PATH } from '@/lib/paths';
import { MAX_RDP_RETRIES, useRdpConnection, type RdpStatus } from './use-rdp-connection';
import { VIEWER_FRAME_STYLE } from './viewer-frame';

const STATUS_COLORS: Record<RdpStatus, string> = {
  connecting: 'blue',
  connected: 'green',
  unstable: 'yellow',
  retrying: 'yellow',
  disconnected: 'gray',
  error: 'red',
  serviceNotRunning: 'red',
  cookieNotSet: 'gray',
  cookieExpired: 'gray',
};

/** States the dialog covers the screen in (an unstable connection keeps it visible). */
const DIALOG_STATES: readonly RdpStatus[] = [
  'connecting',
  'retrying',
  'disconnected',
  'error',
  'serviceNotRunning',
  'cookieNotSet',
  'cookieExpired',
];

/** Ctrl+Alt+Del as X11 keysyms (Control_L, Alt_L, Delete). */
const CTRL_ALT_DEL = [0xffe3, 0xffe9, 0xffff];

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

/** The error code and parameters of a failure (an API error or a tunnel `error` instruction). */
function codeOf(error: unknown): { code: string; params: Record<string, unknown> } {
  const failure = error as { description_code?: unknown; params?: unknown } | null;
  return {
    code: typeof failure?.description_code === 'string' ? failure.description_code : '',
    params:
      failure?.params && typeof failure.params === 'object'
        ? (failure.params as Record<string, unknown>)
        : {},
  };
}

export function RdpViewerPage() {
  // The errors catalogue is loaded with the page: a refusal is shown in the reader's language.
  const { t, i18n } = useTranslation(['common', 'errors']);
  const rootRef = useRef<HTMLDivElement>(null);
  const screenRef = useRef<HTMLDivElement>(null);
  const fullscreen = useFullscreen();
  const { status, name, error, attempt, client, connect, disconnect } = useRdpConnection(screenRef);
  const live = status === 'connected' || status === 'unstable';
  const dialog = DIALOG_STATES.includes(status);
  const cookieProblem = status === 'cookieNotSet' || status === 'cookieExpired';

  const sendCtrlAltDel = (): void => {
    if (!client) return;
    for (const key of CTRL_ALT_DEL) client.sendKeyEvent(1, key);
    for (const key of [...CTRL_ALT_DEL].reverse()) client.sendKeyEvent(0, key);
  };
  const toggleFullscreen = (): void => {
    if (document.fullscreenElement) void document.exitFullscreen();
    else void rootRef.current?.requestFullscreen?.().catch(() => undefined);
  };

  const message = (): string => {
    switch (status) {
      case 'connecting':
        return t('common:rdp.connecting');
      case 'retrying':
        return t('common:rdp.retrying', { attempt, max: MAX_RDP_RETRIES });
      case 'disconnected':
        return t('common:rdp.disconnected');
      case 'serviceNotRunning':
        return t('common:rdp.serviceNotRunning');
      case 'cookieNotSet':
        return t('common:rdp.cookieNotSet');
      case 'cookieExpired':
        return t('common:rdp.cookieExpired');
      case 'error': {
        const { code, params } = codeOf(error);
        return code && i18n.exists(`errors:${code}`)
          ? t(`errors:${code}`, params)
          : t('common:rdp.error');
      }
      default:
        return '';
    }
  };

  return (
    <div ref={rootRef} data-testid="rdp-viewer" data-status={status} style={VIEWER_FRAME_STYLE}>
      <Group
        component="header"
        gap="xs"
        px="sm"
        py={4}
        wrap="nowrap"
        justify="space-between"
        style={{
          background: 'var(--mantine-color-body)',
          borderBottom: '1px solid var(--mantine-color-default-border)',
        }}
      >
        <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
          <Button component={Link} to={HOME_PATH} size="compact-sm" variant="subtle">
            {t('common:rdp.back')}
          </Button>
          <Title
            order={1}
            size="h5"
            style={{ whiteSpace: 'nowrap', overflow: 'hidden', textOverflow: 'ellipsis' }}
          >
            {name || t('common:rdp.title')}
          </Title>
          <Badge
            color={STATUS_COLORS[status]}
            variant="light"
            data-testid="rdp-status"
            aria-live="polite"
          >
            {t(`common:rdp.status.${status}`)}
          </Badge>
        </Group>
        <Group gap={6} wrap="nowrap" role="toolbar" aria-label={t('common:rdp.toolbar')}>
          <Button
            size="compact-sm"
            variant="default"
            disabled={!live}
            onClick={sendCtrlAltDel}
            data-testid="rdp-cad"
          >
            {t('common:rdp.ctrlAltDel')}
          </Button>
          <Button
            size="compact-sm"
            variant="default"
            aria-pressed={fullscreen}
            onClick={toggleFullscreen}
            data-testid="rdp-fullscreen"
          >
            {fullscreen ? t('common:rdp.exitFullscreen') : t('common:rdp.fullscreen')}
          </Button>
          {live || status === 'connecting' ? (
            <Button
              size="compact-sm"
              color="red"
              variant="light"
              onClick={disconnect}
              data-testid="rdp-disconnect"
            >
              {t('common:rdp.disconnect')}
            </Button>
          ) : null}
        </Group>
      </Group>
      <main style={{ position: 'relative', flex: 1, minHeight: 0 }}>
        <div
          ref={screenRef}
          data-testid="rdp-screen"
          aria-label={t('common:rdp.screen')}
          role="application"
          style={{
            position: 'absolute',
            inset: 0,
            overflow: 'hidden',
            visibility: dialog ? 'hidden' : 'visible',
          }}
        />
        {status === 'unstable' && (
          <Text
            c="yellow.3"
            size="sm"
            ta="center"
            role="status"
            data-testid="rdp-unstable"
            style={{ position: 'absolute', top: 8, left: 0, right: 0 }}
          >
            {t('common:rdp.unstable')}
          </Text>
        )}
        {dialog && (
          <Stack align="center" justify="center" style={{ position: 'absolute', inset: 0 }} p="md">
            <Paper
              withBorder
              p="lg"
              maw={460}
              w="100%"
              role="dialog"
              aria-labelledby="rdp-dialog-title"
              aria-describedby="rdp-dialog-message"
              data-testid="rdp-dialog"
            >
              <Stack gap="sm" align="center">
                <Title order={2} size="h4" id="rdp-dialog-title" ta="center">
                  {t(`common:rdp.status.${status}`)}
                </Title>
                {(status === 'connecting' || status === 'retrying') && <Loader size="sm" />}
                <Text
                  id="rdp-dialog-message"
                  ta="center"
                  role={status === 'connecting' || status === 'retrying' ? 'status' : 'alert'}
                  data-testid="rdp-message"
                >
                  {message()}
                </Text>
                <Group gap="sm" justify="center">
                  {!cookieProblem && status !== 'connecting' && status !== 'retrying' && (
                    <Button onClick={connect} data-testid="rdp-retry">
                      {t('common:rdp.retry')}
                    </Button>
                  )}
                  <Button
                    variant="default"
                    onClick={() => window.location.reload()}
                    data-testid="rdp-refresh"
                  >
                    {t('common:rdp.refresh')}
                  </Button>
                  {cookieProblem && (
                    <Button component={Link} to={HOME_PATH} variant="default">
                      {t('common:rdp.backToDesktops')}
                    </Button>
                  )}
                </Group>
              </Stack>
            </Paper>
          </Stack>
        )}
      </main>
    </div>
  );
}
