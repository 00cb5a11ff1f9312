/**
 * What a desktop that is shutting down waits for: the guest is asked to power off, and the server
 * forces it off once its timeout (`config.desktop_shutdown_timeout`, seconds) has passed. The
 * hint names the timeout and the time of day the forced stop happens, counted from when this
 * screen first saw the desktop shutting down.
 */
import { useState } from 'react';
import { Text } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { desktopState } from '@/generated/policy';
import type { Desktop } from '@/generated/types';
import { formatTimeWithSeconds } from '@/lib/dates';
import { useSessionValue, type SessionState } from '@/lib/session-state';

const shutdownTimeoutOf = (s: SessionState) => s.config?.desktop_shutdown_timeout;

/** The hint while the desktop is shutting down (nothing otherwise). */
export function ShutdownHint({ desktop }: { desktop: Pick<Desktop, 'state'> }) {
  if (desktop.state !== desktopState['shutting-down']) return null;
  return <ShutdownDeadline />;
}

/** Mounted when the shutdown is first seen: the forced stop is the timeout after that. */
function ShutdownDeadline() {
  const { t } = useTranslation();
  const seconds = useSessionValue(shutdownTimeoutOf);
  const [since] = useState(() => Date.now());
  if (seconds === undefined) return null;
  const forcedAt = new Date(since + seconds * 1000);
  return (
    <Text size="xs" c="dimmed" role="status" data-testid="desktop-shutdown-hint">
      {t('common:desktopShutdown.hint', { seconds, time: formatTimeWithSeconds(forcedAt) })}
    </Text>
  );
}
