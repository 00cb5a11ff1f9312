/**
 * The desktop of a direct link, kept current by polling `GET /direct/{token}` (every 5 s, 3 s
 * while the desktop changes state; only while the page is visible, and not after a failure).
 * The public page has no socket: socket.io refuses viewer JWTs, and polling stays within the
 * links' rate limit (30 calls a minute per address). Each answer also renews the viewer JWT,
 * which the console's ticket call uses.
 */
import { useCallback, useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { desktopStates } from '@/generated/policy';
import type { DesktopViewerAnswer, DirectViewer } from '@/generated/types';
import { isApiError } from '@/providers/http-client';
import {
  directAction,
  fetchDirectTicket,
  fetchDirectViewer,
  jwtNearlyExpired,
  type DirectAction,
} from './direct-viewer-api';

/** Poll interval while the desktop is steady, and while it changes state (ms). */
export const POLL_STEADY_MS = 5_000;
export const POLL_BUSY_MS = 3_000;

/** States a desktop stays in until someone acts. */
const STEADY: ReadonlySet<string> = new Set(desktopStates.steady);

/** The query key of a link's answer (the token stays in memory, never in a URL or a title). */
const keyOf = (token: string) => ['direct-viewer', token] as const;

export interface DirectViewerState {
  data: DirectViewer | undefined;
  /** The last call's failure (a reset link, the rate limit...), else null. */
  error: unknown;
  loading: boolean;
  retry: () => void;
  /** The action under way, if any. */
  busy: DirectAction | null;
  /** The last action's failure, else null. */
  actionError: unknown;
  act: (action: DirectAction) => Promise<void>;
  /** A console ticket for the link's desktop, with a viewer JWT renewed first when it ends soon. */
  fetchTicket: (desktopId: string) => Promise<DesktopViewerAnswer>;
}

export function useDirectViewer(token: string): DirectViewerState {
  const client = useQueryClient();
  const key = keyOf(token);
  const query = useQuery({
    queryKey: key,
    queryFn: ({ signal }) => fetchDirectViewer(token, signal),
    refetchInterval: (q) =>
      q.state.status === 'error'
        ? false
        : STEADY.has(q.state.data?.vmState ?? '')
          ? POLL_STEADY_MS
          : POLL_BUSY_MS,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
    staleTime: 0,
    gcTime: 0,
    retry: false,
  });
  const [busy, setBusy] = useState<DirectAction | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const { refetch } = query;

  const act = useCallback(
    async (action: DirectAction) => {
      setBusy(action);
      setActionError(null);
      try {
        await directAction(token, action);
      } catch (failure) {
        // A link that died meanwhile shows as such after the refetch below.
        if (!(isApiError(failure) && failure.statusCode === 404)) setActionError(failure);
      } finally {
        setBusy(null);
        void refetch();
      }
    },
    [token, refetch],
  );

  const fetchTicket = useCallback(
    async (desktopId: string) => {
      let jwt = client.getQueryData<DirectViewer>(keyOf(token))?.jwt;
      if (jwtNearlyExpired(jwt))
        jwt = (
          await client.fetchQuery({
            queryKey: keyOf(token),
            queryFn: ({ signal }) => fetchDirectViewer(token, signal),
            staleTime: 0,
          })
        ).jwt;
      if (!jwt) throw new Error('The link gave no viewer token');
      return fetchDirectTicket(desktopId, jwt);
    },
    [client, token],
  );

  return {
    data: query.data,
    error: query.isError ? query.error : null,
    loading: query.isPending,
    retry: () => void refetch(),
    busy,
    actionError,
    act,
    fetchTicket,
  };
}
