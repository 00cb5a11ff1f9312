/** State of the expired-session modal (kinds `renew` and `logout`). */
import { useSyncExternalStore } from 'react';

export type SessionModalKind = 'renew' | 'logout' | null;

let kind: SessionModalKind = null;
const listeners = new Set<() => void>();

/** Opens the modal with the given kind (`null` closes it). */
export function setSessionModal(next: SessionModalKind): void {
  if (kind === next) return;
  kind = next;
  for (const listener of listeners) listener();
}

/** The current modal kind. */
export function getSessionModal(): SessionModalKind {
  return kind;
}

/** React binding of the modal kind. */
export function useSessionModal(): SessionModalKind {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => kind,
    () => null,
  );
}
