/**
 * Navigation bridge for code outside React (HTTP client, socket): the router registers its
 * navigate function; before that (or in tests) a full-page assignment is used.
 */
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
