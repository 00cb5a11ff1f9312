/**
 * The browser VNC viewer page without the application (root.tsx decides): the console connects
 * as soon as its chunk and its ticket are there; the session's companions (./viewer-session) load
 * once the console has a first answer: a failure at once, a connection a moment later, so that
 * their chunks and their start do not compete with the console's first frames. A navigation away
 * hands the page to the router.
 */
import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { VncViewerScreen } from '@/features/viewers/vnc-viewer-screen';
import type { VncStatus } from '@/features/viewers/use-vnc-connection';

const ViewerSession = lazy(() =>
  import('./viewer-session').then((m) => ({ default: m.ViewerSession })),
);

/** How long after the console connects the session's companions wait (its first frames first). */
export const COMPANIONS_AFTER_CONNECT_MS = 1000;

export function ViewerAlone({ id }: { id: string }) {
  // The console's first answer: connected, or anything else (which stays, whatever follows).
  const [answer, setAnswer] = useState<'none' | 'connected' | 'other'>('none');
  const [waited, setWaited] = useState(false);
  const onStatus = useCallback((status: VncStatus) => {
    if (status === 'connecting') return;
    setAnswer((first) => (first === 'other' || status !== 'connected' ? 'other' : 'connected'));
  }, []);
  useEffect(() => {
    if (answer !== 'connected') return;
    const timer = setTimeout(() => setWaited(true), COMPANIONS_AFTER_CONNECT_MS);
    return () => clearTimeout(timer);
  }, [answer]);
  const answered = answer === 'other' || waited;
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
