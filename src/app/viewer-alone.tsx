/**
 * The browser VNC viewer page without the application (root.tsx decides): the console connects
 * as soon as its chunk and its ticket are there; the session's companions (./viewer-session) load
 * once the console has a first answer: a failure at once, a connection a moment later, so that
 * their chunks and their start do not compete with the console's first frames. A navigation away
 * hands the page to the router.
 */
import { lazy, Suspense, useCallback, useEffect, useRef, useState } from 'react';
import { VncViewerScreen } from '@/features/viewers/vnc-viewer-screen';
import type { VncStatus } from '@/features/viewers/use-vnc-connection';

const ViewerSession = lazy(() =>
  import('./viewer-session').then((m) => ({ default: m.ViewerSession })),
);

/** How long after the console connects the session's companions wait (its first frames first). */
export const COMPANIONS_AFTER_CONNECT_MS = 1000;

export function ViewerAlone({ id }: { id: string }) {
  const [answered, setAnswered] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const onStatus = useCallback((status: VncStatus) => {
    if (status === 'connecting') return;
    if (status !== 'connected') setAnswered(true);
    else timer.current ??= setTimeout(() => setAnswered(true), COMPANIONS_AFTER_CONNECT_MS);
  }, []);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
    },
    [],
  );
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
