/**
 * What the application does for a session, for the VNC viewer page shown without it (root.tsx):
 * every catalogue, the session bootstrap (user and language, role visibility, the live socket with
 * its `msg` toasts and its logout, the config and its migration block), the session modals (renew
 * prompt, expiry, quota popup, notifications) and the session cookie's watch. Loaded once the
 * console has a first answer, so none of it delays the first frame.
 */
import '@mantine/core/styles/Modal.css';
import '@mantine/core/styles/ModalBase.css';
import '@mantine/core/styles/Overlay.css';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { usePageTitle } from '@/hooks/use-page-title';
import { loadAllNamespaces } from '@/i18n/i18n';
import { createLiveProvider } from '@/providers/live-provider';
import { watchSessionCookie } from './guard/cookie-watch';
import { queryClient } from './query-client';
import { bootstrapSession, setBootstrapLiveProvider } from './session-bootstrap';
import { SessionModals } from './session-modals';

/** The route's title, as the application's role gate sets it. */
function ViewerTitle() {
  const { t } = useTranslation();
  usePageTitle(t('resources:desktops.actions.viewer'));
  return null;
}

export function ViewerSession() {
  const [catalogues, setCatalogues] = useState(false);
  useEffect(() => {
    setBootstrapLiveProvider(createLiveProvider(queryClient, { batch: 'frame' }));
    void loadAllNamespaces().then(() => setCatalogues(true));
    bootstrapSession().catch((error: unknown) => console.warn('session', error));
    return watchSessionCookie();
  }, []);
  return (
    <>
      {catalogues && <ViewerTitle />}
      <SessionModals />
    </>
  );
}
