import { Button } from '@mantine/core';
import { useTranslation } from 'react-i18next';
import { followLink } from '@/lib/navigation';
import { HOME_PATH } from '@/lib/paths';
import { VncConsole } from './vnc-console';
import type { VncStatus } from './use-vnc-connection';

export interface VncViewerScreenProps {
  /** The desktop's id. */
  id: string | undefined;
  /** Told every status of the connection. */
  onStatus?: (status: VncStatus) => void;
}

/**
 * Full-window browser VNC viewer of a desktop: the VNC console (./vnc-console) with the logged-in
 * user's tickets and a way back to the desktops. Covers the application shell. When the desktop
 * stops the proxy closes the socket and the page says so. Needs no router: the way back goes
 * through the registered navigator (the router's, or the root's hand-over to it).
 */
export function VncViewerScreen({ id, onStatus }: VncViewerScreenProps) {
  const { t } = useTranslation();
  return (
    <VncConsole
      id={id}
      onStatus={onStatus}
      leading={
        <Button
          component="a"
          href={HOME_PATH}
          onClick={followLink(HOME_PATH)}
          size="compact-sm"
          variant="subtle"
        >
          {t('common:vnc.back')}
        </Button>
      }
      overlayActions={(status) => (
        <Button
          component="a"
          href={HOME_PATH}
          onClick={followLink(HOME_PATH)}
          variant={status === 'stopped' ? 'filled' : 'default'}
          data-testid="vnc-back"
        >
          {t('common:vnc.backToDesktops')}
        </Button>
      )}
    />
  );
}
