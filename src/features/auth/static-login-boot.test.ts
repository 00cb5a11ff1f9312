/**
 * The first script of the drawn login page: the colour scheme before the first frame, and a login
 * sent from the drawn form held back (and marked) instead of submitted natively.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STALLED_AFTER_MS, STALLED_MESSAGE_ID, STATIC_LOGIN_ID } from '@common/prerendered-login';
import { SESSION_COOKIE } from '@common/session-cookies';

const prefersDark = (dark: boolean) =>
  vi.stubGlobal('matchMedia', (query: string) => ({
    matches: dark && query === '(prefers-color-scheme: dark)',
  }));

/** Runs the script as the page does: once, at load. */
async function boot(): Promise<void> {
  vi.resetModules();
  await import('./static-login-boot');
}

beforeEach(() => {
  document.documentElement.removeAttribute('data-mantine-color-scheme');
  localStorage.clear();
});
afterEach(() => {
  vi.unstubAllGlobals();
  document.body.innerHTML = '';
  document.head.querySelectorAll('style').forEach((style) => style.remove());
  document.cookie = `${SESSION_COOKIE}=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT`;
});

describe("the drawn login page's first script", () => {
  it.each([
    ['dark', false, 'dark'],
    ['light', true, 'light'],
    ['auto', true, 'dark'],
    [null, false, 'light'],
  ])(
    'with the stored scheme %s (system dark: %s) draws the page %s',
    async (stored, dark, drawn) => {
      if (stored) localStorage.setItem('mantine-color-scheme-value', stored);
      prefersDark(dark);
      await boot();
      expect(document.documentElement.getAttribute('data-mantine-color-scheme')).toBe(drawn);
    },
  );

  it('holds back a login sent from the drawn form and marks it sent; other forms submit', async () => {
    prefersDark(false);
    document.body.innerHTML = `<div id="${STATIC_LOGIN_ID}"><form><input name="username"></form></div><form id="other"></form>`;
    await boot();
    const drawn = document.getElementById(STATIC_LOGIN_ID);
    const sent = new Event('submit', { bubbles: true, cancelable: true });
    drawn?.querySelector('form')?.dispatchEvent(sent);
    expect(sent.defaultPrevented).toBe(true);
    expect(drawn?.dataset.submitted).toBe('true');

    const other = new Event('submit', { bubbles: true, cancelable: true });
    document.getElementById('other')?.dispatchEvent(other);
    expect(other.defaultPrevented).toBe(false);
  });

  it('hides the drawn form from a browser that holds a session, and only then', async () => {
    prefersDark(false);
    document.body.innerHTML = `<div id="${STATIC_LOGIN_ID}"><form></form></div>`;
    await boot();
    const drawn = document.getElementById(STATIC_LOGIN_ID);
    expect(drawn && getComputedStyle(drawn).display).not.toBe('none');
    document.cookie = `${SESSION_COOKIE}=a.b.c; Path=/`;
    await boot();
    expect(drawn && getComputedStyle(drawn).display).toBe('none');
  });

  it('says so when the SPA has not taken a sent login over in time, and not before', async () => {
    prefersDark(false);
    vi.useFakeTimers();
    try {
      document.body.innerHTML = `<div id="${STATIC_LOGIN_ID}"><form></form><p id="${STALLED_MESSAGE_ID}" role="alert" style="display: none">…</p></div>`;
      await boot();
      const message = document.getElementById(STALLED_MESSAGE_ID);
      document
        .querySelector('form')
        ?.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
      vi.advanceTimersByTime(STALLED_AFTER_MS - 1);
      expect(message?.style.display).toBe('none');
      vi.advanceTimersByTime(1);
      expect(message?.style.display).toBe('');

      // taken over in time: the drawn form (and its message) are gone, nothing is shown
      document.body.innerHTML = `<div id="${STATIC_LOGIN_ID}"><form></form><p id="${STALLED_MESSAGE_ID}" style="display: none">…</p></div>`;
      await boot();
      const held = document.getElementById(STALLED_MESSAGE_ID);
      document
        .querySelector('form')
        ?.dispatchEvent(new Event('submit', { bubbles: true, cancelable: true }));
      document.getElementById(STATIC_LOGIN_ID)?.remove();
      vi.advanceTimersByTime(STALLED_AFTER_MS);
      expect(held?.style.display).toBe('none');
    } finally {
      vi.useRealTimers();
    }
  });
});
