/**
 * The status bar under the header: the server's current notice (a migration announcement...) in
 * its level's colour, until the user dismisses it for this session.
 */
import '@mantine/core/styles/Alert.css';
import '@mantine/core/styles/CloseButton.css';
import { Alert } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { dismissStatusBar, useUserNotifications } from './user-notifications';

const LEVEL_COLORS: Readonly<Record<string, string>> = {
  info: 'blue',
  primary: 'blue',
  success: 'green',
  warning: 'orange',
  danger: 'red',
  error: 'red',
  secondary: 'gray',
};

/** The Mantine colour of a status level (blue for an unknown one). */
export function statusColor(level: string): string {
  return LEVEL_COLORS[level] ?? 'blue';
}

export function StatusBar() {
  const { t } = useTranslation();
  const { statusBar, statusBarDismissed } = useUserNotifications();
  if (!statusBar || statusBarDismissed) return null;
  return (
    <Alert
      color={statusColor(statusBar.level)}
      variant="light"
      mb="md"
      withCloseButton
      closeButtonLabel={t('common:statusBar.dismiss')}
      onClose={dismissStatusBar}
      role="status"
      data-testid="status-bar"
      data-level={statusBar.level}
    >
      {statusBar.text}
    </Alert>
  );
}
