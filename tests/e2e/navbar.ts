/**
 * The navbar as the end-to-end tests read it: its entries come from the rendered navbar (never
 * listed in a test), and a screen reached from it must be a working screen.
 */
import { expect, type Locator, type Page } from '@playwright/test';
import type { HttpProblem } from './helpers';

export interface NavLinkInfo {
  label: string;
  href: string;
  target: string | null;
  rel: string | null;
  kind: string | null;
  hasIcon: boolean;
}

/** The main navigation landmark. */
export function navbar(page: Page): Locator {
  return page.getByRole('navigation', { name: /main navigation/i });
}

/** Reads every link of the navbar from the DOM. */
export async function navLinks(nav: Locator): Promise<NavLinkInfo[]> {
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

/**
 * What is wrong with the navbar's links themselves: an untranslated label, a missing icon, an
 * external link that is not a valid http(s) URL opening in a new tab without a referrer.
 */
export function linkProblems(links: readonly NavLinkInfo[]): string[] {
  const problems: string[] = [];
  for (const link of links) {
    const name = `"${link.label}" (${link.href})`;
    if (!link.label || /^(common:)?nav\./.test(link.label))
      problems.push(`${name}: no translated label`);
    if (!link.hasIcon) problems.push(`${name}: no icon`);
    if (link.target !== '_blank') continue;
    let url: URL | null = null;
    try {
      url = new URL(link.href);
    } catch {
      problems.push(`${name}: not a valid URL`);
    }
    if (url && !/^https?:$/.test(url.protocol)) problems.push(`${name}: not an http(s) URL`);
    if (!(link.rel ?? '').split(/\s+/).includes('noreferrer'))
      problems.push(`${name}: rel="${link.rel ?? ''}" lacks noreferrer`);
  }
  return problems;
}

export function describeProblem(problem: HttpProblem): string {
  return `${problem.document ? 'document' : 'API'} ${problem.method} ${problem.path} answered ${problem.status}`;
}

/**
 * What is wrong with the screen shown now (empty when it is a working screen): another path than
 * the expected one, an error page, JSON text, a "not available" placeholder, a visible alert, no
 * h1 or the not-found page.
 */
export async function pageProblems(page: Page, expectedPath: string): Promise<string[]> {
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
export async function settledProblems(page: Page, expectedPath: string): Promise<string[]> {
  let problems: string[] = [];
  const deadline = Date.now() + 20_000;
  for (;;) {
    problems = await pageProblems(page, expectedPath);
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await page.waitForTimeout(250);
  }
}

/**
 * Clicks the navbar entry for `href`, first opening the navbar when it is folded away (a phone):
 * the burger of the header shows it, and using an entry folds it again.
 */
export async function clickNavEntry(page: Page, href: string): Promise<void> {
  const link = navbar(page).locator(`a[href="${href}"]`).first();
  if (!(await inView(link))) {
    await page.getByRole('button', { name: /toggle navigation/i }).click();
    await expect.poll(() => inView(link)).toBe(true);
  }
  await link.click();
}

/** Whether the element is on screen: a folded navbar stays rendered, beside the window. */
export async function inView(element: Locator): Promise<boolean> {
  return element.evaluate((node) => {
    const rect = node.getBoundingClientRect();
    return rect.width > 0 && rect.right > 0 && rect.left < window.innerWidth;
  });
}
