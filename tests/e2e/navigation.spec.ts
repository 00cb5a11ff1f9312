/**
 * Product rule: every navbar entry leads to a working screen or is not shown. For each demo role
 * the entries are read from the rendered navbar (never listed here), every internal link is
 * followed, and each page must show a real screen: an h1, no error body, no failing document or
 * /api/v3 answer, no "not available" placeholder. External links must open a valid URL in a new
 * tab. Failures name the entry and what it showed.
 */
import { type Locator, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { loginUi, trackHttpProblems, type HttpProblem, type HttpTracker } from './helpers';

const ROLES = ['admin', 'manager', 'advanced', 'user'] as const;
/** Longer than the session-cookie watcher's period (1 s), which used to send these to /login. */
const COOKIE_WATCH_GRACE_MS = 2500;

interface NavLinkInfo {
  label: string;
  href: string;
  target: string | null;
  rel: string | null;
  kind: string | null;
  hasIcon: boolean;
}

function describeProblem(problem: HttpProblem): string {
  return `${problem.document ? 'document' : 'API'} ${problem.method} ${problem.path} answered ${problem.status}`;
}

/** The main navigation landmark. */
function navbar(page: Page): Locator {
  return page.getByRole('navigation', { name: /main navigation/i });
}

/** Reads every link of the navbar from the DOM. */
async function navLinks(nav: Locator): Promise<NavLinkInfo[]> {
  return nav.locator('a[href]').evaluateAll((anchors) =>
    anchors.map((anchor) => ({
      label: (anchor.textContent ?? '').replace(/\s+/g, ' ').trim(),
      href: anchor.getAttribute('href') ?? '',
      target: anchor.getAttribute('target'),
      rel: anchor.getAttribute('rel'),
      kind: anchor.getAttribute('data-nav-kind'),
      hasIcon: !!anchor.querySelector('svg[aria-hidden="true"]'),
    })),
  );
}

/** What is wrong with the page now (empty when it is a working screen). */
async function pageProblems(page: Page, expectedPath: string): Promise<string[]> {
  const problems: string[] = [];
  const path = new URL(page.url()).pathname;
  if (path !== expectedPath) problems.push(`ended on ${path} instead of ${expectedPath}`);
  if (path.startsWith('/error/')) problems.push(`the error page ${path}`);

  const body = (await page.locator('body').innerText()).trim();
  if (/^[[{]/.test(body) || /"(error|description_code)"\s*:/.test(body))
    problems.push(`JSON text: ${body.slice(0, 160)}`);
  const notAvailable = /[^.\n]*not available[^.\n]*\.?/i.exec(body);
  if (notAvailable) problems.push(`"not available": ${notAvailable[0].trim()}`);

  for (const alert of await page.getByRole('alert').all()) {
    if (await alert.isVisible())
      problems.push(`an alert: ${(await alert.innerText()).replace(/\s+/g, ' ').trim()}`);
  }
  if (await page.getByTestId('error-message').isVisible())
    problems.push(`the error page: ${await page.getByTestId('error-message').innerText()}`);

  const headings = page.locator('main h1, h1');
  if ((await headings.count()) === 0) problems.push('no h1');
  else if (/page not found/i.test(await headings.first().innerText()))
    problems.push('the not-found page');
  return problems;
}

/**
 * The problems a screen still shows once it had the time to load: a client-side navigation leaves
 * the page "network idle" from before, so the new screen is awaited until it shows none of the
 * problems, for at most 20 s, and what it still shows then is the answer.
 */
async function settledProblems(page: Page, expectedPath: string): Promise<string[]> {
  let problems: string[] = [];
  const deadline = Date.now() + 20_000;
  for (;;) {
    problems = await pageProblems(page, expectedPath);
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await page.waitForTimeout(250);
  }
}

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

  for (const role of ROLES) {
    test(`${role}: every navbar entry leads to a working screen`, async ({ page }) => {
      // Some twenty screens, each followed and reloaded.
      test.setTimeout(180_000);
      const http = trackHttpProblems(page);
      await loginUi(page, role);
      const nav = navbar(page);
      await expect(nav).toBeVisible();
      await expect(nav.getByTestId('logout')).toBeVisible();
      await settle(page, http);
      http.take();

      const links = await navLinks(nav);
      expect(links.length, 'navbar links').toBeGreaterThan(0);
      const failures: string[] = [];

      for (const link of links) {
        const name = `"${link.label}" (${link.href})`;
        if (!link.label || /^(common:)?nav\./.test(link.label))
          failures.push(`${name}: no translated label`);
        if (!link.hasIcon) failures.push(`${name}: no icon`);
      }

      // External links: a valid http(s) URL opening in a new tab, checked without leaving.
      for (const link of links.filter((l) => l.target === '_blank')) {
        const name = `"${link.label}" (${link.href})`;
        let url: URL | null = null;
        try {
          url = new URL(link.href);
        } catch {
          failures.push(`${name}: not a valid URL`);
        }
        if (url && !/^https?:$/.test(url.protocol)) failures.push(`${name}: not an http(s) URL`);
        if (!(link.rel ?? '').split(/\s+/).includes('noreferrer'))
          failures.push(`${name}: rel="${link.rel ?? ''}" lacks noreferrer`);
      }

      // Internal links: follow each one from the navbar, then load it afresh (deep link).
      for (const link of links.filter((l) => l.target !== '_blank')) {
        const name = `"${link.label}" (${link.href})`;
        const expectedPath = new URL(link.href, page.url()).pathname;
        await nav.locator(`a[href="${link.href}"]`).first().click();
        await settle(page, http);
        const shown = [
          ...(await settledProblems(page, expectedPath)),
          ...http.take().map(describeProblem),
        ];
        if (!shown.length) {
          const response = await page.reload();
          await settle(page, http);
          if ((response?.status() ?? 0) >= 400)
            shown.push(`reload answered ${response?.status() ?? 'nothing'}`);
          shown.push(
            ...(await settledProblems(page, expectedPath)).map((p) => `after reload, ${p}`),
            ...http.take().map(describeProblem),
          );
        }
        if (shown.length) failures.push(`${name} showed ${shown.join('; ')}`);
        // Back to a known page for the next entry (the failing one may have left the shell).
        if (!(await nav.isVisible())) await page.goto('/');
        await expect(nav).toBeVisible();
        http.take();
      }

      // Downloads: the file arrives and nothing fails.
      for (const button of await nav.locator('[data-nav-kind="download"]').all()) {
        const label = (await button.innerText()).trim();
        const download = page.waitForEvent('download', { timeout: 15_000 }).catch(() => null);
        await button.click();
        const file = await download;
        const problems = http.take().map(describeProblem);
        if (!file) problems.push('no file was downloaded');
        if (problems.length) failures.push(`download "${label}": ${problems.join('; ')}`);
      }

      await nav.getByTestId('logout').click();
      await expect(page).toHaveURL(/\/login$/);

      expect(failures, `${role}: navbar entries that do not lead to a working screen`).toEqual([]);
    });
  }
});
