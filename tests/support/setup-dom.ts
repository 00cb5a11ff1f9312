import '@testing-library/jest-dom/vitest';

// Mantine needs these browser APIs, which jsdom lacks.
const noop = (): void => undefined;

if (typeof window !== 'undefined') {
  window.matchMedia ??= ((query: string) => ({
    matches: false,
    media: query,
    onchange: null,
    addListener: noop,
    removeListener: noop,
    addEventListener: noop,
    removeEventListener: noop,
    dispatchEvent: () => false,
  })) as typeof window.matchMedia;
  class RO {
    observe = noop;
    unobserve = noop;
    disconnect = noop;
  }
  window.ResizeObserver ??= RO as unknown as typeof ResizeObserver;
  window.HTMLElement.prototype.scrollIntoView ??= noop;
}
