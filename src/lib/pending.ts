/**
 * Global request counter: while any request runs the body
 * carries `data-loading` (loading cursor via CSS) and submit buttons are disabled.
 */
import { useSyncExternalStore } from 'react';

let pending = 0;
const listeners = new Set<() => void>();

function publish(): void {
  if (typeof document !== 'undefined') {
    if (pending > 0) document.body.dataset.loading = 'true';
    else delete document.body.dataset.loading;
  }
  for (const listener of listeners) listener();
}

/** Marks one request as started; returns the function that marks it finished (idempotent). */
export function beginRequest(): () => void {
  pending += 1;
  publish();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    pending = Math.max(0, pending - 1);
    publish();
  };
}

/** Number of requests in flight. */
export function pendingCount(): number {
  return pending;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** True while at least one request is in flight. */
export function useRequestPending(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => pending > 0,
    () => false,
  );
}
