/**
 * The console of one videowall desktop, shown in the wall's modal: noVNC on a NEW single-use
 * ticket (`desktops.viewer`, browser-vnc), view-only until "Take control" is switched on. The
 * connection is shared (the student's own viewer stays connected) and closes when the component
 * unmounts (the modal closes). Loaded lazily: noVNC's chunk is fetched on the first click only.
 */
import '@mantine/core/styles/Badge.css';
import '@mantine/core/styles/Switch.css';
import { useCallback, useEffect, useRef, useState } from 'react';
import { Badge, Button, Group, Stack, Switch, Text } from '@mantine/core';
import RFB from '@novnc/novnc';
import { useTranslation } from 'react-i18next';
import { translateError } from '@/lib/error-display';
import { isApiError, request } from '@/providers/http-client';
import classes from './videowall.module.css';

export type WallConsoleStatus = 'connecting' | 'connected' | 'disconnected' | 'stopped' | 'error';

const STATUS_COLORS: Record<WallConsoleStatus, string> = {
  connecting: 'blue',
  connected: 'green',
  disconnected: 'gray',
  stopped: 'gray',
  error: 'red',
};

export interface WallConsoleProps {
  /** The desktop whose console is shown. */
  desktopId: string;
}

/** Same-origin websocket URL of the console path. */
const websocketUrl = (path: string): string =>
  `${window.location.protocol === 'https:' ? 'wss' : 'ws'}://${window.location.host}${path}`;

export function WallConsole({ desktopId }: WallConsoleProps) {
  const { t } = useTranslation();
  const screenRef = useRef<HTMLDivElement>(null);
  const rfbRef = useRef<RFB | null>(null);
  const generation = useRef(0);
  const [status, setStatus] = useState<WallConsoleStatus>('connecting');
  const [error, setError] = useState<unknown>(null);
  const [control, setControl] = useState(false);
  const controlRef = useRef(control);

  const teardown = useCallback(() => {
    const current = rfbRef.current;
    rfbRef.current = null;
    try {
      current?.disconnect();
    } catch {
      // already closed
    }
  }, []);

  const open = useCallback(async () => {
    const run = ++generation.current;
    teardown();
    setStatus('connecting');
    setError(null);
    let answer;
    try {
      answer = await request('desktops.viewer', {
        params: { id: desktopId, viewer: 'browser-vnc' },
      });
    } catch (failure) {
      if (run !== generation.current) return;
      if (isApiError(failure) && failure.statusCode === 409) setStatus('stopped');
      else {
        setError(failure);
        setStatus('error');
      }
      return;
    }
    const target = screenRef.current;
    if (run !== generation.current || !target) return;
    if (!answer || answer.kind !== 'browser' || !('url' in answer)) {
      setStatus('error');
      return;
    }
    const password = answer.values.password ?? '';
    const client = new RFB(target, websocketUrl(answer.url), {
      shared: true,
      credentials: { password },
    });
    client.viewOnly = !controlRef.current;
    client.focusOnClick = controlRef.current;
    client.scaleViewport = true;
    client.background = '#111';
    client.addEventListener('connect', () => {
      if (run === generation.current) setStatus('connected');
    });
    client.addEventListener('credentialsrequired', () => client.sendCredentials({ password }));
    client.addEventListener('disconnect', () => {
      if (run !== generation.current) return; // closed on purpose
      rfbRef.current = null;
      setStatus('disconnected');
    });
    rfbRef.current = client;
  }, [desktopId, teardown]);

  useEffect(() => {
    // Connect after the commit; a mount undone at once (StrictMode) never asks for a ticket.
    const mounted = generation.current;
    queueMicrotask(() => {
      if (generation.current === mounted) void open();
    });
    return () => {
      generation.current += 1;
      teardown();
    };
  }, [open, teardown]);

  useEffect(() => {
    controlRef.current = control;
    const current = rfbRef.current;
    if (!current) return;
    current.viewOnly = !control;
    current.focusOnClick = control;
    if (control) current.focus();
    else current.blur();
  }, [control]);

  const overlay = status === 'stopped' || status === 'disconnected' || status === 'error';

  return (
    <Stack gap="xs" data-testid="videowall-console" data-status={status} data-control={control}>
      <Group justify="space-between" gap="xs">
        <Badge
          color={STATUS_COLORS[status]}
          variant="light"
          aria-live="polite"
          data-testid="videowall-console-status"
        >
          {t(`common:videowall.status.${status}`)}
        </Badge>
        <Switch
          checked={control}
          onChange={(event) => setControl(event.currentTarget.checked)}
          label={t('common:videowall.takeControl')}
          description={control ? t('common:videowall.controlOn') : t('common:videowall.viewOnly')}
          data-testid="videowall-take-control"
        />
      </Group>
      <div className={classes.console}>
        <div
          ref={screenRef}
          data-testid="vnc-screen"
          aria-label={t('common:videowall.screen')}
          style={{ position: 'absolute', inset: 0, visibility: overlay ? 'hidden' : 'visible' }}
        />
        {overlay && (
          <Stack
            align="center"
            justify="center"
            gap="sm"
            style={{ position: 'absolute', inset: 0 }}
          >
            <Text c="gray.3" role="alert" data-testid="videowall-console-message">
              {status === 'stopped'
                ? t('common:videowall.stopped')
                : status === 'error'
                  ? translateError(error as never)
                  : t('common:videowall.disconnected')}
            </Text>
            {status !== 'stopped' && (
              <Button onClick={() => void open()} data-testid="videowall-console-reconnect">
                {t('common:videowall.reconnect')}
              </Button>
            )}
          </Stack>
        )}
      </div>
    </Stack>
  );
}
