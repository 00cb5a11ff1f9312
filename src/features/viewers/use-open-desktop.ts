/**
 * `useOpenDesktop(desktop)`: the one-click Open of a card. Starts a stopped desktop, follows its
 * state in the cached desktops list (patched by the socket), then opens the viewer: browser VNC
 * in a new tab opened on its page at click time, inside the user gesture and after the start
 * request has left, so that the page loads while the desktop starts and boots (it waits for the
 * start it follows: viewer-start); same tab when popups are blocked, once the start is accepted.
 * Another browser viewer gets a blank tab at click time that its answer navigates; SPICE is a file
 * download. A failed start closes the tab; one refused for a quota or limit also opens the quota
 * popup.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { useQueryClient, type QueryClient } from '@tanstack/react-query';
import { useNavigate } from 'react-router';
import { isQuotaCode } from '@/generated/error-codes';
import type { Desktop, ViewerKey } from '@/generated/types';
import { showError, type DisplayableError } from '@/lib/error-display';
import { FOLLOWS_START_HASH } from '@/lib/viewer-start';
import { useSessionValue, type SessionState } from '@/lib/session-state';

const userIdOf = (s: SessionState) => s.user?.id ?? null;
import { request } from '@/providers/http-client';
import { listKeyPrefix } from '@/providers/live-provider';
import { runOpenFlow, type OpenProgress } from './open-flow';
import { applyViewerAnswer, fetchViewer, openViewerPage, viewerPagePath } from './viewer-api';
import { preferredViewer, rememberViewer } from './viewer-order';

/** The desktop as the cached desktops lists have it. */
export function cachedDesktop(queryClient: QueryClient, id: string): Desktop | undefined {
  for (const [, data] of queryClient.getQueriesData<{ data?: Desktop[] }>({
    queryKey: listKeyPrefix('desktops'),
  })) {
    const found = data?.data?.find((desktop) => desktop.id === id);
    if (found) return found;
  }
  return undefined;
}

/** Starts a desktop through the generated state action `start`. */
export function startDesktop(id: string): Promise<unknown> {
  return request('desktops.action', { params: { id, action: 'start' } });
}

export interface UseOpenDesktop {
  progress: OpenProgress;
  /** The viewer Open uses (remembered choice, else the first usable one in default order). */
  preferred: ViewerKey | null;
  /** Opens the desktop with `viewer` (default: the preferred one); remembers an explicit choice. */
  open: (viewer?: ViewerKey) => void;
  /** Cancels a running flow. */
  cancel: () => void;
  busy: boolean;
}

const IDLE: OpenProgress = { phase: 'idle' };

export function useOpenDesktop(desktop: Pick<Desktop, 'id' | 'viewers' | 'ip'>): UseOpenDesktop {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const userId = useSessionValue(userIdOf);
  const [progress, setProgress] = useState<OpenProgress>(IDLE);
  const abortRef = useRef<AbortController | null>(null);
  const preferred = preferredViewer(desktop, userId);

  useEffect(() => () => abortRef.current?.abort(), []);

  const open = useCallback(
    (choice?: ViewerKey) => {
      const viewer = choice ?? preferred;
      if (!viewer) return;
      if (choice) rememberViewer(userId, choice);
      abortRef.current?.abort();
      const controller = new AbortController();
      abortRef.current = controller;
      const id = desktop.id;
      let tab: Window | null = null;
      // The viewer's own page, opened in the click (it follows the start, see viewer-start).
      let pageOpened = false;
      runOpenFlow(id, viewer, {
        // Inside the click, after the start request has left: the viewer's page when it has one
        // (its loading starts at once), else a blank tab the answer navigates later; null when
        // popups are blocked. Opening a window costs the page tens of milliseconds.
        inGesture: () => {
          if (!viewer.startsWith('browser-')) return;
          const page = viewerPagePath(id, viewer);
          tab = window.open(page ? `${page}${FOLLOWS_START_HASH}` : 'about:blank', '_blank');
          if (tab) tab.opener = null;
          pageOpened = !!tab && !!page;
        },
        getDesktop: () => cachedDesktop(queryClient, id),
        subscribe: (listener) => queryClient.getQueryCache().subscribe(listener),
        start: startDesktop,
        fetchViewer: (desktopId, key) => fetchViewer(desktopId, key, controller.signal),
        deliver: (answer) => applyViewerAnswer(answer, tab, (path) => void navigate(path), id),
        openPage: (key) => {
          if (pageOpened) return 'tab';
          const path = viewerPagePath(id, key);
          return path ? openViewerPage(path, tab, (to) => void navigate(to)) : null;
        },
        onProgress: (next) => {
          if (!controller.signal.aborted) setProgress(next);
        },
        signal: controller.signal,
      }).catch((error: unknown) => {
        tab?.close();
        // The card shows the refusal; a quota or limit refusal opens the quota popup too.
        if (isQuotaCode((error as DisplayableError | null)?.description_code)) showError(error);
      });
    },
    [desktop.id, navigate, preferred, queryClient, userId],
  );

  const cancel = useCallback(() => {
    abortRef.current?.abort();
    setProgress(IDLE);
  }, []);

  const busy =
    progress.phase === 'starting' || progress.phase === 'waiting' || progress.phase === 'opening';
  return { progress, preferred, open, cancel, busy };
}
