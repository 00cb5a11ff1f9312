import '@testing-library/jest-dom/vitest';
import { cleanup, configure } from '@testing-library/react';
import i18next from 'i18next';
import { afterAll, afterEach, vi } from 'vitest';
import { resetSessionState } from '../../src/lib/session-state';

// `findBy…` and `waitFor` wait up to 5 s, not Testing Library's 1 s: the suite keeps both cores
// busy, and a dialog that loads its names through a request has missed 1 s under that load. A
// test that fails still fails, only later; the DOM project's test limit is 20 s.
configure({ asyncUtilTimeout: 5_000 });

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

// Every test starts on an empty page (React trees unmounted), and every file on an empty storage,
// no signed-in session, its own globals and environment variables, real timers and the app's
// i18next in English: the files of a worker share one window and one module graph when they run
// without isolation.
afterEach(() => {
  cleanup();
});
afterAll(async () => {
  cleanup();
  if (i18next.isInitialized && i18next.language !== 'en') await i18next.changeLanguage('en');
  vi.useRealTimers();
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  resetSessionState();
  if (typeof window === 'undefined') return;
  document.body.innerHTML = '';
  window.localStorage.clear();
  window.sessionStorage.clear();
  for (const cookie of document.cookie.split(';')) {
    const name = cookie.split('=')[0]?.trim();
    if (name) document.cookie = `${name}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
  }
  window.history.replaceState(null, '', '/');
});
