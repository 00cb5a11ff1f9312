/**
 * Product rule: every navbar entry leads to a working screen or is not shown. The route table's
 * passes (a11y-routes.spec.ts) click through each role's navbar; here a new visitor lands on the
 * login page, an unknown path shows the not-found page, and every navbar entry of every role
 * (read from the rendered navbar, never listed here) also opens on its own, loaded as a document
 * (a bookmark, a reload): an h1, no error body, no failing document or /api/v3 answer, no "not
 * available" placeholder. Failures name the entry and what it showed.
 */
import { type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiToken, trackHttpProblems, type HttpTracker } from './helpers';
import { describeProblem, navbar, navLinks, pageProblems, settledProblems } from './navbar';

const ROLES = ['admin', 'manager', 'advanced', 'user'] as const;
/** Longer than the session-cookie watcher's period (1 s), which used to send these to /login. */
const COOKIE_WATCH_GRACE_MS = 2500;

/** Waits until the page has drawn its heading and its requests have settled. */
async function settle(page: Page, http: HttpTracker): Promise<void> {
  await page
    .locator('h1')
    .first()
    .waitFor({ state: 'visible', timeout: 20_000 })
    .catch(() => undefined);
  await http.quiet();
}

test.describe('navigation', () => {
  // Each test logs in on its own and changes nothing, so the workers share them.
  test.describe.configure({ mode: 'parallel' });

  test('a new visitor opening / lands on the login page, not on a JSON error', async ({ page }) => {
    const http = trackHttpProblems(page);
    const response = await page.goto('/');
    expect(response?.status() ?? 0).toBeLessThan(400);
    expect(response?.headers()['content-type'] ?? '').toContain('text/html');
    await expect(page).toHaveURL(/\/login$/);
    await expect(page.locator('input[name=username]')).toBeVisible();
    expect(await page.locator('body').innerText()).not.toMatch(/^\s*[[{]/);
    expect(http.take().map(describeProblem)).toEqual([]);
  });

  test('an unknown path without a session shows the not-found page', async ({ page }) => {
    const response = await page.goto('/no/such/page');
    expect(response?.status() ?? 0).toBeLessThan(400);
    const heading = page.getByRole('heading', { level: 1 });
    await expect(heading).toHaveText(/not found/i);
    await page.waitForTimeout(COOKIE_WATCH_GRACE_MS);
    await expect(page).toHaveURL(/\/no\/such\/page$/);
    await expect(heading).toHaveText(/not found/i);
  });

  test('every navbar entry of every role opens on its own, as a deep link', async ({
    page,
    baseURL,
  }) => {
    // Some thirty screens, each loaded as a document.
    test.setTimeout(180_000);
    const http = trackHttpProblems(page);
    const failures: string[] = [];
    // Each path once, with the first role whose navbar offers it (the roles' screens are clicked
    // through and checked in the route table's passes).
    const checked = new Set<string>();
    for (const role of ROLES) {
      await page.context().clearCookies();
      await page.context().addCookies([
        {
          name: 'vdiportal_session',
          value: encodeURIComponent(await apiToken(baseURL ?? '', role)),
          url: baseURL ?? '',
          sameSite: 'Strict',
        },
      ]);
      http.take();
      await page.goto('/desktops');
      const nav = navbar(page);
      // Without a navbar, what the page showed instead, and the answers it got, are the failure.
      const shown = await expect(nav)
        .toBeVisible()
        .then(() => null)
        .catch(async () => [
          ...(await pageProblems(page, '/desktops')),
          ...http.take().map(describeProblem),
          `the page read: ${(await page.locator('body').innerText()).replace(/\s+/g, ' ').slice(0, 200)}`,
        ]);
      expect(shown, `${role}: no navbar on /desktops`).toBeNull();
      const links = await navLinks(nav);
      expect(links.length, `${role}: navbar links`).toBeGreaterThan(0);
      for (const link of links.filter((l) => l.target !== '_blank')) {
        const path = new URL(link.href, page.url()).pathname;
        if (checked.has(path)) continue;
        checked.add(path);
        http.take();
        const response = await page.goto(path);
        await settle(page, http);
        const shown = [
          ...((response?.status() ?? 0) >= 400
            ? [`answered ${response?.status() ?? 'nothing'}`]
            : []),
          ...(await settledProblems(page, path)),
          ...http.take().map(describeProblem),
        ];
        if (shown.length)
          failures.push(`${role} "${link.label}" (${path}) showed ${shown.join('; ')}`);
      }
    }
    expect(checked.size).toBeGreaterThan(15);
    expect(failures, 'navbar entries that do not open as a deep link').toEqual([]);
  });
});
