/**
 * The logged-in user and the portal config, fetched once per session by the navigation guard
 * and re-fetched after a renewal. Cleared on logout.
 */
import { useSyncExternalStore } from 'react';
import type { SessionUser, UserConfig } from '@/generated/types';

export interface SessionState {
  user: SessionUser | null;
  config: UserConfig | null;
  /** Recycle-bin retention returned by the cutoff-time call (when the operation exists). */
  recycleBinCutoff: unknown;
}

let state: SessionState = { user: null, config: null, recycleBinCutoff: null };
const listeners = new Set<() => void>();

/** Merges a partial update into the session state. */
export function updateSessionState(patch: Partial<SessionState>): void {
  state = { ...state, ...patch };
  for (const listener of listeners) listener();
}

/** Clears the session state (logout). */
export function resetSessionState(): void {
  updateSessionState({ user: null, config: null, recycleBinCutoff: null });
}

/** Current snapshot. */
export function getSessionState(): SessionState {
  return state;
}

/** React binding of the session state. */
export function useSessionState(): SessionState {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => state,
    () => state,
  );
}
