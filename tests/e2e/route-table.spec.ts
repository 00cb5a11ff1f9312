/**
 * Product rule: every screen of the generated route table is accessible and fits a phone. The
 * routes come from the same table the SPA renders (`deriveRoutes`, built from the generated
 * resources and the bespoke screens), never from a list written here. Each demo role visits every
 * built route its roles allow, by client-side navigation in one logged-in page, and each screen
 * must have zero axe violations of any impact and show no raw i18n key or field-id label. Admin
 * visits its routes in the light theme in English, then in the dark theme in Spanish, where each
 * screen is also narrowed to 390×844; the advanced role and the pages without login are visited
 * at 390×844. No screen on a phone may scroll sideways. Routes with parameters are visited
 * through a link one of the visited screens offers (a record's details, its edit form).
 */
import { type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { deriveRoutes, type DerivedRoute } from '../../src/app/route-table';
import type { Role } from '../../src/generated/types';
import { loginUi } from './helpers';

const ROLES: readonly Role[] = ['admin', 'manager', 'advanced', 'user'];
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 768 };
/**
 * Routes that need a state the demo data has not (a running desktop's console): not visited.
 * Every other built route with roles is.
 */
const NEEDS_RUNNING_DESKTOP = new Set(['desktops.viewer']);

const routeTable = deriveRoutes().filter(
  (route) => route.built && !NEEDS_RUNNING_DESKTOP.has(`${route.resource}.${route.kind}`),
);

/**
 * axe-core as `@axe-core/playwright` ships it, injected once per page: the screens change by
 * client-side navigation, so the engine stays loaded and each screen costs one `axe.run`.
 */
const AXE_SOURCE = readFileSync(
  createRequire(
    createRequire(join(process.cwd(), 'package.json')).resolve('@axe-core/playwright'),
  ).resolve('axe-core/axe.min.js'),
  'utf8',
);

interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: { target: string[] }[];
}

/** Runs axe (every rule, every impact) on the page and returns its violations. */
async function axeViolations(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const { axe } = window as unknown as {
      axe: {
        run: (context: Document, options: object) => Promise<{ violations: AxeViolation[] }>;
      };
    };
    const results = await axe.run(document, { resultTypes: ['violations'] });
    return results.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      nodes: violation.nodes.map((node) => ({ target: node.target.map(String) })),
    }));
  });
}

/** Every i18n key of the English catalogues, as `ns:key` and, when it holds a dot, as `key`. */
function i18nKeys(): Set<string> {
  const keys = new Set<string>();
  const dir = join(process.cwd(), 'locales', 'en');
  const walk = (ns: string, prefix: string, value: unknown): void => {
    if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        walk(ns, prefix ? `${prefix}.${key}` : key, child);
      }
      return;
    }
    const key = prefix.replace(/_(zero|one|two|few|many|other)$/, '');
    keys.add(`${ns}:${key}`);
    if (key.includes('.')) keys.add(key);
  };
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.json'))) {
    walk(file.replace(/\.json$/, ''), '', JSON.parse(readFileSync(join(dir, file), 'utf8')));
  }
  return keys;
}
const KEYS = i18nKeys();

/** A path pattern (`/deployment/:id/edit`) as a regular expression over a pathname. */
function pattern(path: string): RegExp {
  const source = path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/?#]+');
  return new RegExp(`^${source}$`);
}

/** Navigates inside the SPA (no reload) and waits until the screen has drawn. */
async function open(page: Page, url: string): Promise<void> {
  await page.evaluate((target) => {
    // The previous screen's headings are marked so the wait below is for the new screen's.
    for (const heading of Array.from(document.querySelectorAll('h1')))
      heading.setAttribute('data-left-screen', '');
    window.history.pushState({}, '', target);
    window.dispatchEvent(new PopStateEvent('popstate'));
  }, url);
  await settle(page);
}

/** Waits for the screen's heading and until no loader or skeleton is left. */
async function settle(page: Page): Promise<void> {
  await page
    .locator('h1:not([data-left-screen])')
    .first()
    .waitFor({ state: 'visible', timeout: 8_000 })
    .catch(() => undefined);
  await page
    .waitForFunction(
      () =>
        !document.querySelector(
          '[aria-busy="true"], [data-testid="page-loading"], .mantine-Skeleton-root[data-visible]',
        ),
      undefined,
      { timeout: 8_000 },
    )
    .catch(() => undefined);
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
}

/** Every same-origin link the screen offers (path with query). */
async function links(page: Page): Promise<string[]> {
  return page.locator('a[href^="/"]').evaluateAll((anchors) =>
    anchors.map((anchor) => {
      const url = new URL((anchor as HTMLAnchorElement).href);
      return url.pathname + url.search;
    }),
  );
}

/** The innermost elements that reach past the right edge of the window (what widens it). */
async function widest(page: Page): Promise<string> {
  return page.evaluate(() => {
    const past = Array.from(document.body.querySelectorAll<HTMLElement>('*')).filter(
      (element) => element.getBoundingClientRect().right > window.innerWidth + 1,
    );
    const innermost = past.filter(
      (element) => !past.some((other) => other !== element && element.contains(other)),
    );
    return innermost
      .slice(0, 3)
      .map((element) => {
        const id =
          element.getAttribute('data-testid') ?? element.className.toString().split(' ')[0] ?? '';
        return `${element.tagName.toLowerCase()}${id ? `.${id}` : ''} to ${Math.round(element.getBoundingClientRect().right)} px`;
      })
      .join(', ');
  });
}

interface PassOptions {
  /**
   * Check that the page does not scroll sideways: at the current size, or on a phone (the window
   * narrowed to 390×844 for the check, then widened back).
   */
  overflow: 'no' | 'here' | 'phone';
  /** Load each screen as a document (the login page alone has no router to navigate in). */
  load?: boolean;
}

interface PassResult {
  visited: string[];
  problems: string[];
}

/** What the screen shows that is a raw key or a label made from a field id. */
async function rawTexts(page: Page): Promise<string[]> {
  const texts = await page.evaluate(() => {
    const attributes = Array.from(
      document.querySelectorAll('[aria-label], [placeholder], [title]'),
    ).flatMap((element) =>
      ['aria-label', 'placeholder', 'title'].map((name) => element.getAttribute(name) ?? ''),
    );
    const labels = Array.from(
      document.querySelectorAll('label, th, dt, legend, button, [role="tab"], h1, h2, h3, h4'),
    ).map((element) => (element as HTMLElement).innerText.trim());
    return { body: document.body.innerText, attributes, labels };
  });
  const found = new Set<string>();
  for (const text of [texts.body, ...texts.attributes]) {
    for (const token of text.match(/[A-Za-z_][\w:.-]*[\w]/g) ?? []) {
      if (KEYS.has(token)) found.add(`raw key "${token}"`);
    }
  }
  for (const label of texts.labels) {
    // A raw field id (`template_id`) or the label a field id makes (`Template id`).
    if (/^[a-z][a-z0-9]*(_[a-z0-9]+)+$/.test(label) || /^[A-Z][a-z]+( [a-z]+)* id$/.test(label))
      found.add(`field-id label "${label}"`);
  }
  return [...found];
}

/** Visits every route of the table the role can reach and checks each screen. */
async function visitAll(
  page: Page,
  role: Role | null,
  label: string,
  options: PassOptions,
): Promise<PassResult> {
  // Without a role: the routes without login (roles null).
  const routes: DerivedRoute[] = routeTable.filter((route) =>
    role ? route.roles?.includes(role) : route.roles === null,
  );
  const plain = routes.filter((route) => !route.path.includes(':'));
  const withParams = routes.filter((route) => route.path.includes(':'));
  const seenLinks = new Set<string>();
  const visited: string[] = [];
  const problems: string[] = [];

  const started = Date.now();
  const check = async (url: string): Promise<void> => {
    const before = problems.length;
    const opened = Date.now();
    if (options.load) {
      await page.goto(url);
      await settle(page);
    } else await open(page, url);
    const settled = Date.now() - opened;
    visited.push(url);
    for (const href of await links(page)) seenLinks.add(href);
    const where = `${label} ${url}`;
    for (const violation of await axeViolations(page)) {
      const targets = violation.nodes
        .slice(0, 3)
        .map((node) => node.target.join(' '))
        .join(' | ');
      problems.push(`${where}: axe ${violation.id} (${violation.impact}) at ${targets}`);
    }
    for (const raw of await rawTexts(page)) problems.push(`${where}: ${raw}`);
    if (options.overflow === 'phone') await page.setViewportSize(PHONE);
    if (options.overflow !== 'no') {
      // The shell's transitions (the navbar leaving, the main area widening) end first, and the
      // layouts that measure their width (action rows) settle: the page width holds still for
      // five frames. Endless animations (loaders) are not waited for.
      if (options.overflow === 'phone')
        await page.evaluate(async () => {
          const transitions = document
            .getAnimations()
            .filter((animation) => animation instanceof CSSTransition);
          // A transition cut short by another rejects its promise: it is over too.
          await Promise.all(
            transitions.map((transition) => transition.finished.catch(() => undefined)),
          );
          const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
          const until = performance.now() + 2_000;
          let width = -1;
          let still = 0;
          while (still < 5 && performance.now() < until) {
            await frame();
            const now = document.documentElement.scrollWidth;
            still = now === width ? still + 1 : 0;
            width = now;
          }
        });
      const widths = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        inner: window.innerWidth,
      }));
      if (widths.scroll > widths.inner)
        problems.push(
          `${where}: scrolls sideways (${widths.scroll} > ${widths.inner} px: ${await widest(page)})`,
        );
    }
    if (options.overflow === 'phone') await page.setViewportSize(DESKTOP);
    const total = Date.now() - opened;
    if (total > 2_000) console.log(`${where}: ${settled} ms to draw, ${total} ms in all`);
    for (const problem of problems.slice(before)) console.log(problem);
  };

  for (const route of plain) await check(route.path);
  const unreached: string[] = [];
  for (const route of withParams) {
    const match = pattern(route.path);
    const target = [...seenLinks].find((href) => match.test(href.split('?')[0] ?? ''));
    if (target) await check(target);
    else unreached.push(route.path);
  }
  console.log(`${label}: ${visited.length} screens in ${Date.now() - started} ms`);
  if (unreached.length) console.log(`${label}: no link offered to ${unreached.join(', ')}`);
  return { visited, problems };
}

/** Logs the role in and returns its page at the given size. */
async function loggedIn(page: Page, role: Role, size = DESKTOP): Promise<void> {
  await page.setViewportSize(size);
  await page.emulateMedia({ colorScheme: 'light' });
  await loginUi(page, role);
  // The router has taken over from the login form once the app shell is drawn: only then does a
  // client-side navigation reach it.
  await expect(page.locator('#main-content')).toBeVisible();
}

test.describe('route table', () => {
  // The passes are independent (a page each): the workers share them.
  test.describe.configure({ mode: 'parallel', timeout: 300_000 });

  test('admin: light, then dark in Spanish and on a phone', async ({ page }) => {
    await loggedIn(page, 'admin');
    const light = await visitAll(page, 'admin', 'admin light', { overflow: 'no' });

    // Dark and Spanish together: the theme changes only colours, the language only texts.
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
    await page.getByTestId('language-switcher').selectOption('es');
    await expect(page.locator('html')).toHaveAttribute('lang', /^es/);
    const dark = await visitAll(page, 'admin', 'admin dark es', { overflow: 'phone' });
    await page.getByTestId('language-switcher').selectOption('en');

    expect(light.visited.length).toBeGreaterThan(20);
    expect(dark.visited).toEqual(light.visited);
    expect([...light.problems, ...dark.problems]).toEqual([]);
  });

  for (const role of ROLES.filter((name) => name !== 'admin')) {
    const phone = role === 'advanced';
    test(`${role}: light${phone ? ' on a phone' : ''}`, async ({ page }) => {
      await loggedIn(page, role, phone ? PHONE : DESKTOP);
      const label = `${role} light${phone ? ' 390px' : ''}`;
      const result = await visitAll(page, role, label, { overflow: phone ? 'here' : 'no' });
      expect(result.visited.length).toBeGreaterThan(3);
      expect(result.problems).toEqual([]);
    });
  }

  test('user: a dialog takes the focus, passes axe, and gives the focus back', async ({ page }) => {
    test.setTimeout(60_000);
    await loggedIn(page, 'user');
    await open(page, '/profile');
    const opener = page.getByRole('button', { name: 'Change password' });
    await opener.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await expect(dialog).toBeVisible();
    await expect
      .poll(() => dialog.evaluate((element) => element.contains(document.activeElement)))
      .toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    await expect(opener).toBeFocused();
  });

  test('anonymous: the pages without login, on a phone', async ({ page }) => {
    await page.setViewportSize(PHONE);
    await page.emulateMedia({ colorScheme: 'light' });
    const result = await visitAll(page, null, 'anonymous 390px', { overflow: 'here', load: true });
    expect(result.visited.length).toBeGreaterThan(3);
    expect(result.problems).toEqual([]);
  });
});
