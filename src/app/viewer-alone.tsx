/**
 * The browser VNC viewer page without the application (root.tsx decides): the console connects
 * as soon as its chunk and its ticket are there; the session's companions (./viewer-session) load
 * once the console has a first answer. A navigation away hands the page to the router.
 */
import { lazy, Suspense, useCallback, useState } from 'react';
import { VncViewerScreen } from '@/features/viewers/vnc-viewer-screen';
import type { VncStatus } from '@/features/viewers/use-vnc-connection';

const ViewerSession = lazy(() =>
  import('./viewer-session').then((m) => ({ default: m.ViewerSession })),
);

export function ViewerAlone({ id }: { id: string }) {
  const [answered, setAnswered] = useState(false);
  const onStatus = useCallback((status: VncStatus) => {
    if (status !== 'connecting') setAnswered(true);
  }, []);
  return (
    <>
      <VncViewerScreen id={id} onStatus={onStatus} />
      {answered && (
        <Suspense fallback={null}>
          <ViewerSession />
        </Suspense>
      )}
    </>
  );
}
