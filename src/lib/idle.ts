/** Work that waits until the page is interactive and idle. */

/** Runs `task` once the browser is idle (at the latest after `timeoutMs`); returns its cancel. */
export function whenIdle(task: () => void, timeoutMs = 2000): () => void {
  if (typeof window !== 'undefined' && typeof window.requestIdleCallback === 'function') {
    const handle = window.requestIdleCallback(() => task(), { timeout: timeoutMs });
    return () => window.cancelIdleCallback(handle);
  }
  const timer = setTimeout(task, Math.min(timeoutMs, 500));
  return () => clearTimeout(timer);
}
