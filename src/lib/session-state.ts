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

/** Calls `listener` after every change of the session state; returns the unsubscribe. */
export function subscribeSessionState(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

/** React binding of the session state (re-renders on every change of it). */
export function useSessionState(): SessionState {
  return useSyncExternalStore(subscribeSessionState, getSessionState, getSessionState);
}

/**
 * One value of the session state: the component re-renders only when that value changes (not
 * when another part, such as the recycle-bin cutoff, arrives). `select` answers a part of the
 * state or a primitive, never a new object.
 */
export function useSessionValue<T>(select: (state: SessionState) => T): T {
  const read = () => select(state);
  return useSyncExternalStore(subscribeSessionState, read, read);
}

/** Selectors for `useSessionValue`. */
export const selectUser = (s: SessionState) => s.user;
export const selectConfig = (s: SessionState) => s.config;
export const selectSessionTimes = (s: SessionState) => s.config?.session;

const roleOf = (s: SessionState) => s.user?.role_id ?? null;

/** The signed-in user's role (null without a session), re-rendering only when it changes. */
export function useSessionRole(): NonNullable<SessionState['user']>['role_id'] | null {
  return useSessionValue(roleOf);
}
