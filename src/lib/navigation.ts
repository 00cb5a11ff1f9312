/**
 * Navigation bridge for code outside React (HTTP client, socket): the router registers its
 * navigate function; before that (or in tests) a full-page assignment is used.
 */
import type { MouseEvent } from 'react';

type Navigate = (path: string, options?: { replace?: boolean }) => void;

let navigateImpl: Navigate = (path) => {
  if (typeof window !== 'undefined' && window.location.pathname !== path)
    window.location.assign(path);
};

/** Registers the router's navigate function; returns the unregister function. */
export function setNavigator(fn: Navigate): () => void {
  const previous = navigateImpl;
  navigateImpl = fn;
  return () => {
    navigateImpl = previous;
  };
}

/** Navigates with the registered navigator. */
export function navigateTo(path: string, options?: { replace?: boolean }): void {
  navigateImpl(path, options);
}

/**
 * A link's click handler that navigates inside the SPA with the registered navigator; a modified,
 * middle or already handled click keeps the browser's behaviour (new tab, new window).
 */
export function followLink(path: string): (event: MouseEvent<HTMLElement>) => void {
  return (event) => {
    if (event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.altKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigateTo(path);
  };
}
