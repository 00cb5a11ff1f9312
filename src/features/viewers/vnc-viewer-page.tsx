import { Button } from '@mantine/core';
import { Link, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { HOME_PATH } from '@/lib/paths';
import { VncConsole } from './vnc-console';

/**
 * Full-window browser VNC viewer of a desktop (`/viewer/vnc/:id`): the VNC console (./vnc-console)
 * with the logged-in user's tickets and a way back to the desktops. Covers the application shell.
 * When the desktop stops the proxy closes the socket and the page says so.
 */
export function VncViewerPage() {
  const { t } = useTranslation();
  const { id } = useParams<{ id: string }>();
  return (
    <VncConsole
      id={id}
      leading={
        <Button component={Link} to={HOME_PATH} size="compact-sm" variant="subtle">
          {t('common:vnc.back')}
        </Button>
      }
      overlayActions={(status) => (
        <Button
          component={Link}
          to={HOME_PATH}
          variant={status === 'stopped' ? 'filled' : 'default'}
          data-testid="vnc-back"
        >
          {t('common:vnc.backToDesktops')}
        </Button>
      )}
    />
  );
}
