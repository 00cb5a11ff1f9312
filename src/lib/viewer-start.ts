/**
 * The viewer page the one-click Open opens in the click itself, before the desktop's start has
 * been answered: its address carries a mark, and for a short while the page takes "not running"
 * for "not started yet" (the start request left before the page did) and asks again.
 */

/** The mark on the viewer page's address. */
export const FOLLOWS_START_HASH = '#starting';
/** How long a marked page waits for the desktop it follows to be started. */
export const FOLLOWS_START_MS = 10_000;
/** The history state a marked page keeps when it was opened (the address loses its mark). */
const STATE_KEY = 'followsStartAt';

/** The page's entry: a marked address loses its mark and remembers when it was opened. */
export function takeStartMark(now = Date.now()): void {
  if (typeof window === 'undefined' || window.location.hash !== FOLLOWS_START_HASH) return;
  const { pathname, search } = window.location;
  window.history.replaceState({ [STATE_KEY]: now }, '', pathname + search);
}

/** Whether the page still waits for the start it follows. */
export function followsStart(now = Date.now()): boolean {
  const state: unknown = typeof window === 'undefined' ? null : window.history.state;
  const at =
    state && typeof state === 'object' ? (state as Record<string, unknown>)[STATE_KEY] : null;
  return typeof at === 'number' && now - at >= 0 && now - at < FOLLOWS_START_MS;
}
