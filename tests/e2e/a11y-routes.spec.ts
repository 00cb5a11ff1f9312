/**
 * Product rule: every screen of the generated route table is accessible and fits a phone. The
 * routes come from the same table the SPA renders (`deriveRoutes`, built from the generated
 * resources and the bespoke screens), never from a list written here. Each demo role visits every
 * built route its roles allow, by client-side navigation in one logged-in page, and each screen
 * must have zero axe violations of any impact and show no raw i18n key or field-id label. Admin
 * visits its routes in the light theme in English, and (a second test) in the dark theme in
 * Spanish, where each screen is also checked at 390×844 (the window changes size once a
 * screen); the advanced role and the pages without login are visited at 390×844. No screen on a
 * phone may scroll sideways, and every table on a phone shows its key columns (`keyColumns`:
 * their headers inside the window, their labels not cut). Routes with parameters are visited
 * through a link one of the visited screens offers (a record's details, its edit form), else
 * through an object the test makes for the role with the REST API and the page's own session;
 * every one must be reached. Each role's first pass also walks its navbar (read from the
 * rendered navbar, never listed here): the screens it offers are reached by clicking their
 * entries (on a phone, through the folded navbar) and must be working screens with no failing
 * answer, its links translated with icons, its external links safe, its downloads delivered;
 * the user's pass ends with the navbar's logout.
 *
 * The browser asks for reduced motion (the app then skips its transitions), a screen is checked
 * once it has drawn (its heading, no loader left) rather than after a fixed time, and axe runs
 * once per screen and theme, on the whole document with every rule.
 */
import { type APIRequestContext, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { deriveRoutes, type DerivedRoute } from '../../src/app/route-table';
import type { Role } from '../../src/generated/types';
import { keyColumns } from '../../src/resources/list/list-columns';
import { apiAs, apiToken, trackHttpProblems } from './helpers';
import {
  clickNavEntry,
  describeProblem,
  inView,
  linkProblems,
  navbar,
  navLinks,
  settledProblems,
} from './navbar';
import { idpMetadataAt } from '../support/saml-idp';

const ROLES: readonly Role[] = ['admin', 'manager', 'advanced', 'user'];
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1366, height: 768 };
/**
 * The console of a running desktop: not visited. Its screen is a VNC canvas that needs a guest
 * started and booted under QEMU (a minute of emulation on this machine) before it draws anything;
 * the desktop lifecycle and direct viewer tests cover it. Every other built route is visited.
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

/**
 * Marks the shown screen's headings as left, so that `settle` waits for the next screen's; the
 * screen already shown (the page the login landed on) keeps its heading.
 */
async function leave(page: Page, target: string): Promise<void> {
  await page.evaluate((next) => {
    const here = window.location.pathname + window.location.search;
    if (here !== next)
      for (const heading of Array.from(document.querySelectorAll('h1')))
        heading.setAttribute('data-left-screen', '');
  }, target);
}

/** Navigates inside the SPA (no reload) and waits until the screen has drawn. */
async function open(page: Page, url: string): Promise<void> {
  await leave(page, url);
  await page.evaluate((target) => {
    window.history.pushState({}, '', target);
    window.dispatchEvent(new PopStateEvent('popstate'));
  }, url);
  await settle(page);
}

/** Follows the navbar's entry for `url` with a click and waits until the screen has drawn. */
async function openFromNavbar(page: Page, url: string): Promise<void> {
  await leave(page, url);
  await clickNavEntry(page, url);
  await settle(page);
}

/**
 * Waits for the screen's heading and until no loader or skeleton is left, and no dialog is still
 * mounting (its name comes a render after it).
 */
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
          '[aria-busy="true"], [data-testid="page-loading"], .mantine-Skeleton-root[data-visible], ' +
            '[role="dialog"]:not([aria-labelledby]):not([aria-label])',
        ),
      undefined,
      { timeout: 8_000 },
    )
    .catch(() => undefined);
  await page.evaluate(
    () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
  );
}

/**
 * Waits until the layout holds still after a change of the window's size: the shell's transitions
 * (the navbar leaving, the main area widening) end, and the layouts that measure their width
 * (action rows) settle, the page width the same for five frames. Endless animations (loaders) are
 * not waited for.
 */
async function settleLayout(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const transitions = document
      .getAnimations()
      .filter((animation) => animation instanceof CSSTransition);
    // A transition cut short by another rejects its promise: it is over too.
    await Promise.all(transitions.map((transition) => transition.finished.catch(() => undefined)));
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

/**
 * What keeps a phone's tables from showing their key columns: a key column's header missing,
 * outside the window or the table's region, or its label cut.
 */
async function keyColumnProblems(page: Page, role: Role | null): Promise<string[]> {
  const tables = await page
    .locator('[data-testid="resource-collection"][data-view="table"]')
    .evaluateAll((regions) => regions.map((region) => region.getAttribute('data-resource') ?? ''));
  const problems: string[] = [];
  for (const resource of tables) {
    const paths = keyColumns(resource, role).map((meta) => meta.path);
    expect(paths.length, `${resource} has key columns`).toBeGreaterThan(0);
    const found = await page.evaluate(
      ({ resource, paths }) => {
        const region = document.querySelector<HTMLElement>(
          `[data-testid="resource-collection"][data-resource="${resource}"]`,
        );
        if (!region) return [`${resource}: no table`];
        const box = region.getBoundingClientRect();
        return paths.flatMap((path) => {
          const header = region.querySelector<HTMLElement>(`th[data-field="${path}"]`);
          if (!header) return [`${resource}: no ${path} column`];
          const rect = header.getBoundingClientRect();
          const label = header.querySelector<HTMLElement>('.mantine-Text-root') ?? header;
          const inside =
            rect.width > 0 &&
            rect.left >= Math.max(0, box.left) - 1 &&
            rect.right <= Math.min(window.innerWidth, box.right) + 1;
          if (!inside)
            return [
              `${resource}: the ${path} header is not in view (${Math.round(rect.left)} to ${Math.round(rect.right)} px)`,
            ];
          if (label.scrollWidth > label.clientWidth + 1)
            return [`${resource}: the ${path} header is cut ("${label.innerText}")`];
          return [];
        });
      },
      { resource, paths },
    );
    problems.push(...found);
  }
  return problems;
}

interface PassOptions {
  /**
   * Check that the page does not scroll sideways: at the current size, or on a phone (the window
   * narrowed to 390×844 for the check, then widened back).
   */
  overflow: 'no' | 'here' | 'phone';
  /** Load each screen as a document (the login page alone has no router to navigate in). */
  load?: boolean;
  /**
   * Walk the navbar too: its links must be translated and have icons, its external links open a
   * valid URL in a new tab, each screen it leads to is reached with a click on its entry and must
   * be a working screen (an h1, no error, alert or placeholder, no failing document or /api/v3
   * answer), and its downloads must deliver a file.
   */
  navbar?: boolean;
}

interface PassResult {
  visited: string[];
  problems: string[];
  /** Routes with parameters neither a link nor a seed reached. */
  unreached: string[];
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

/** The navbar's downloads: each click delivers a file, and nothing fails on the way. */
async function downloadProblems(
  page: Page,
  http: ReturnType<typeof trackHttpProblems>,
  label: string,
): Promise<string[]> {
  const problems: string[] = [];
  const buttons = navbar(page).locator('[data-nav-kind="download"]');
  for (let index = 0; index < (await buttons.count()); index++) {
    const button = buttons.nth(index);
    const folded = !(await inView(button));
    if (folded) await page.getByRole('button', { name: /toggle navigation/i }).click();
    const name = (await button.innerText()).trim();
    http.take();
    const download = page.waitForEvent('download', { timeout: 15_000 }).catch(() => null);
    await button.click();
    const file = await download;
    const shown = http.take().map(describeProblem);
    if (!file) shown.push('no file was downloaded');
    for (const problem of shown) problems.push(`${label} download "${name}": ${problem}`);
    // A phone's navbar is folded away again for the next screens.
    if (folded) await page.getByRole('button', { name: /toggle navigation/i }).click();
  }
  return problems;
}

/** Visits every route of the table the role can reach and checks each screen. */
async function visitAll(
  page: Page,
  role: Role | null,
  label: string,
  options: PassOptions,
  /** URLs for routes with parameters, by path: made while the plain routes are visited. */
  seeding: Promise<Readonly<Record<string, string>>> = Promise.resolve({}),
): Promise<PassResult> {
  // Without a role: the routes without login (roles null).
  const routes: DerivedRoute[] = routeTable.filter((route) =>
    role ? route.roles?.includes(role) : route.roles === null,
  );
  // A failed seeding fails the pass where it is awaited, not as an unhandled rejection before.
  seeding.catch(() => undefined);
  const plain = routes.filter((route) => !route.path.includes(':'));
  const withParams = routes.filter((route) => route.path.includes(':'));
  const seenLinks = new Set<string>();
  const visited: string[] = [];
  const problems: string[] = [];

  const started = Date.now();
  // Where the pass spends its time: drawing, axe, the other checks, the phone's.
  const spent = { draw: 0, axe: 0, texts: 0, phone: 0 };
  const http = trackHttpProblems(page);
  // The navbar's internal entries (paths) and what its links show wrong.
  const navPaths = new Set<string>();
  if (options.navbar) {
    const entries = await navLinks(navbar(page));
    expect(entries.length, 'navbar links').toBeGreaterThan(0);
    problems.push(...linkProblems(entries).map((problem) => `${label} navbar: ${problem}`));
    for (const entry of entries.filter(({ target }) => target !== '_blank'))
      navPaths.add(new URL(entry.href, page.url()).pathname);
  }

  let clicked = 0;
  /** On a phone pass: whether the window is narrowed to a phone's now. */
  let phoneSized = false;
  const check = async (url: string, dialog = false): Promise<void> => {
    const before = problems.length;
    const opened = Date.now();
    const fromNavbar = navPaths.delete(url);
    if (fromNavbar) clicked++;
    http.take();
    if (options.load) {
      await page.goto(url);
      await settle(page);
    } else if (fromNavbar) await openFromNavbar(page, url);
    else await open(page, url);
    if (fromNavbar) {
      await http.quiet();
      const shown = [...(await settledProblems(page, url)), ...http.take().map(describeProblem)];
      for (const problem of shown) problems.push(`${label} ${url} from the navbar: ${problem}`);
    }
    // A route that opens an action's dialog over its screen is checked with the dialog open.
    if (dialog) {
      await page.getByRole('dialog').waitFor({ state: 'visible', timeout: 8_000 });
      await settle(page);
    }
    const settled = Date.now() - opened;
    spent.draw += settled;
    visited.push(url);
    const where = `${label} ${url}`;
    /** At the full size: links, axe, raw texts. */
    const atFullSize = async () => {
      for (const href of await links(page)) seenLinks.add(href);
      const axeStarted = Date.now();
      const violations = await axeViolations(page);
      spent.axe += Date.now() - axeStarted;
      const textsStarted = Date.now();
      for (const violation of violations) {
        const targets = violation.nodes
          .slice(0, 3)
          .map((node) => node.target.join(' '))
          .join(' | ');
        problems.push(`${where}: axe ${violation.id} (${violation.impact}) at ${targets}`);
      }
      for (const raw of await rawTexts(page)) problems.push(`${where}: ${raw}`);
      spent.texts += Date.now() - textsStarted;
    };
    /** On a phone: no sideways scrolling, the tables' key columns in view. */
    const onPhone = async () => {
      const phoneStarted = Date.now();
      const widths = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        inner: window.innerWidth,
      }));
      if (widths.scroll > widths.inner)
        problems.push(
          `${where}: scrolls sideways (${widths.scroll} > ${widths.inner} px: ${await widest(page)})`,
        );
      for (const problem of await keyColumnProblems(page, role))
        problems.push(`${where}: ${problem}`);
      spent.phone += Date.now() - phoneStarted;
    };
    if (options.overflow === 'phone') {
      // The window changes size once per screen: a screen opened on a phone is checked there
      // first, then at the full size, and the next one opens at the full size (and the other way
      // round). Each check waits until the new size's layout has settled.
      const resized = async (size: typeof PHONE) => {
        const phoneStarted = Date.now();
        await page.setViewportSize(size);
        await settleLayout(page);
        phoneSized = size === PHONE;
        spent.phone += Date.now() - phoneStarted;
      };
      if (phoneSized) {
        await settleLayout(page);
        await onPhone();
        await resized(DESKTOP);
        await atFullSize();
      } else {
        await atFullSize();
        await resized(PHONE);
        await onPhone();
      }
    } else {
      await atFullSize();
      if (options.overflow === 'here') await onPhone();
    }
    const total = Date.now() - opened;
    if (total > 2_000) console.log(`${where}: ${settled} ms to draw, ${total} ms in all`);
    for (const problem of problems.slice(before)) console.log(problem);
  };

  for (const route of plain) await check(route.path);
  // Navbar entries outside the route table (a page of another kind) are followed and checked too.
  for (const path of [...navPaths]) {
    await check(path);
    visited.pop();
  }
  if (options.navbar) problems.push(...(await downloadProblems(page, http, label)));
  const seeds = await seeding;
  const unreached: string[] = [];
  // A link to a route without parameters (`/profile/passkeys`) is no instance of a route with them
  // that its path also fits (`/profile/:action`).
  const plainPaths = new Set(routeTable.map((route) => route.path).filter((p) => !p.includes(':')));
  for (const route of withParams) {
    const match = pattern(route.path);
    const target =
      [...seenLinks].find((href) => {
        const path = href.split('?')[0] ?? '';
        return match.test(path) && !plainPaths.has(path);
      }) ?? seeds[route.path];
    if (target) await check(target, route.kind === 'action');
    else unreached.push(route.path);
  }
  // The pass ends at the full size.
  if (phoneSized) await page.setViewportSize(DESKTOP);
  console.log(
    `${label}: ${visited.length} screens (${clicked} from the navbar) in ${Date.now() - started} ms (drawing ${spent.draw}, ` +
      `axe ${spent.axe}, texts ${spent.texts}, phone ${spent.phone})`,
  );
  if (unreached.length) console.log(`${label}: nothing reached ${unreached.join(', ')}`);
  return { visited, problems, unreached };
}

/** The page's session token (the SPA keeps it in a cookie). */
async function sessionToken(page: Page): Promise<string> {
  const cookie = (await page.context().cookies()).find(({ name }) => name === 'vdiportal_session');
  expect(cookie, 'the page has a session').toBeTruthy();
  return decodeURIComponent(cookie?.value ?? '');
}

/** The JSON answer of a call that must succeed. */
async function answer<T>(
  call: Promise<{ ok(): boolean; status(): number; text(): Promise<string> }>,
  what: string,
): Promise<T> {
  const response = await call;
  const text = await response.text();
  expect(response.ok(), `${what}: ${response.status()} ${text}`).toBe(true);
  return JSON.parse(text) as T;
}

/** A desktop of the token's user from the demo template, once its disk exists (stopped). */
async function newDesktop(api: APIRequestContext, name: string): Promise<string> {
  const { id } = await answer<{ id: string }>(
    api.post('/api/v3/persistent_desktop', { data: { template_id: 'demo-template', name } }),
    'create a desktop',
  );
  await expect
    .poll(
      async () => {
        const desktops = await answer<{ id: string; state: string }[]>(
          api.get('/api/v3/user/desktops'),
          'list the desktops',
        );
        return desktops.find((desktop) => desktop.id === id)?.state;
      },
      { timeout: 30_000 },
    )
    .toBe('stopped');
  return id;
}

/**
 * Objects for the routes with parameters of the role, made with the REST API and the page's
 * session: a desktop to book, a desktop in the recycle bin, a deployment (its details, edit form
 * and videowall), the profile with an action's dialog open, and what the role's lists already
 * hold (an audit entry, a category). Answers each route's URL by its path.
 */
async function seed(page: Page, baseURL: string, role: Role): Promise<Record<string, string>> {
  const api = await apiAs(baseURL, await sessionToken(page));
  const paths = new Set(
    routeTable
      .filter((route) => route.roles?.includes(role) && route.path.includes(':'))
      .map((route) => route.path),
  );
  const seeds: Record<string, string> = {};
  const stamp = `${role} ${Date.now()}`;
  try {
    const binned = await newDesktop(api, `Route table bin ${stamp}`);
    if (paths.has('/booking/:type/:id')) {
      const desktops = await answer<{ id: string }[]>(
        api.get('/api/v3/user/desktops'),
        'list the desktops',
      );
      const booked = desktops.find(({ id }) => id !== binned)?.id ?? binned;
      seeds['/booking/:type/:id'] = `/booking/desktop/${booked}`;
    }
    if (paths.has('/recyclebin/:id')) {
      expect((await api.delete(`/api/v3/desktop/${binned}`)).ok(), 'delete a desktop').toBe(true);
      const bin = await answer<{ id: string }[]>(
        api.get('/api/v3/recycle_bin/item_count/user'),
        'list the recycle bin',
      );
      const entry = bin[0]?.id;
      if (entry) seeds['/recyclebin/:id'] = `/recyclebin/${entry}`;
    }
    if (paths.has('/deployment/:id')) {
      const token = await sessionToken(page);
      const claims = JSON.parse(
        Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'),
      ) as { data: { user_id: string } };
      const { id } = await answer<{ id: string }>(
        api.post('/api/v3/deployments', {
          data: {
            name: `Route table ${stamp}`,
            desktop_name: 'Route table desktop',
            template_id: 'demo-template',
            allowed: { users: [claims.data.user_id] },
            visible: false,
          },
        }),
        'create a deployment',
      );
      for (const path of ['/deployment/:id', '/deployment/:id/edit', '/deployment/:id/videowall'])
        if (paths.has(path)) seeds[path] = path.replace(':id', id);
    }
    if (paths.has('/profile/:action')) seeds['/profile/:action'] = '/profile/changePassword';
    // The seeded host local (the portal's own QEMU) is always there.
    for (const path of ['/admin/hypervisors/:id', '/admin/hypervisors/:id/edit'])
      if (paths.has(path)) seeds[path] = path.replace(':id', 'local');
    // The seeded NAT network is always there.
    for (const path of ['/admin/networks/:id', '/admin/networks/:id/edit'])
      if (paths.has(path)) seeds[path] = path.replace(':id', 'default');
    if (paths.has('/admin/ldap-providers/:id/edit')) {
      // A directory of the second school, disabled (nobody's sign-in asks it); the other admin
      // pass on this portal finds it made.
      let [directory] = await answer<{ id: string }[]>(
        api.get('/api/v3/admin/ldap-providers'),
        'the directories',
      );
      directory ??= await answer<{ id: string }>(
        api.post('/api/v3/admin/ldap-providers', {
          data: {
            category_id: 'school2',
            label: `Route table ${stamp}`,
            enabled: false,
            url: 'ldap://127.0.0.1:1',
            bind_dn: 'cn=portal,dc=example,dc=org',
            bind_password: 'route-table',
            search_base: 'ou=people,dc=example,dc=org',
            filter: '(uid={username})',
            group_id: 'school2-default',
            role: 'user',
          },
        }),
        'create a directory',
      );
      seeds['/admin/ldap-providers/:id/edit'] = `/admin/ldap-providers/${directory.id}/edit`;
    }
    if (paths.has('/admin/oidc-providers/:id/edit')) {
      // An OpenID Connect provider of the second school, disabled (no button shows it, nothing
      // asks its issuer); the other admin pass on this portal finds it made.
      let [provider] = await answer<{ id: string }[]>(
        api.get('/api/v3/admin/oidc-providers'),
        'the OpenID Connect providers',
      );
      provider ??= await answer<{ id: string }>(
        api.post('/api/v3/admin/oidc-providers', {
          data: {
            category_id: 'school2',
            label: `Route table ${stamp}`,
            enabled: false,
            issuer: 'https://sso.example.org',
            client_id: 'portal',
            client_secret: 'route-table',
            group_id: 'school2-default',
            role: 'user',
          },
        }),
        'create an OpenID Connect provider',
      );
      seeds['/admin/oidc-providers/:id/edit'] = `/admin/oidc-providers/${provider.id}/edit`;
    }
    if (paths.has('/admin/saml-providers/:id/edit')) {
      // A SAML provider of the second school, disabled (no button shows it); the other admin pass
      // on this portal finds it made.
      let [provider] = await answer<{ id: string }[]>(
        api.get('/api/v3/admin/saml-providers'),
        'the SAML providers',
      );
      provider ??= await answer<{ id: string }>(
        api.post('/api/v3/admin/saml-providers', {
          data: {
            category_id: 'school2',
            label: `Route table ${stamp}`,
            enabled: false,
            idp_metadata: idpMetadataAt('https://idp.example.org'),
            sp_entity_id: 'https://portal.example.org/saml',
            group_id: 'school2-default',
            role: 'user',
          },
        }),
        'create a SAML provider',
      );
      seeds['/admin/saml-providers/:id/edit'] = `/admin/saml-providers/${provider.id}/edit`;
    }
    if (paths.has('/admin/audit/:id') || paths.has('/admin/categories/:id/edit')) {
      const categories = await answer<{ id: string }[]>(
        api.get('/api/v3/admin/categories'),
        'the categories',
      );
      const category = categories[0]?.id ?? '';
      if (paths.has('/admin/categories/:id/edit'))
        seeds['/admin/categories/:id/edit'] = `/admin/categories/${category}/edit`;
      if (paths.has('/admin/audit/:id')) {
        // A new group is an audited change.
        await answer(
          api.post('/api/v3/admin/groups', { data: { name: `Route table ${stamp}`, category } }),
          'create a group',
        );
        const entries = await answer<{ id: string }[]>(api.get('/api/v3/admin/audit'), 'audit');
        if (entries[0]) seeds['/admin/audit/:id'] = `/admin/audit/${entries[0].id}`;
      }
    }
  } finally {
    await api.dispose();
  }
  return seeds;
}

/** A direct link of a desktop of `user`, for the page without login that opens it. */
async function directLink(baseURL: string): Promise<string> {
  const api = await apiAs(baseURL, await apiToken(baseURL));
  try {
    const id = await newDesktop(api, `Route table direct ${Date.now()}`);
    const token = await answer<string>(
      api.put(`/api/v3/desktop/jumperurl_reset/${id}`, { data: { disabled: false } }),
      'make a direct link',
    );
    return `/vw/${token}`;
  } finally {
    await api.dispose();
  }
}

/**
 * Opens the role's desktops at the given size, logged in through the API: the session cookie the
 * login page would set is set directly (the login form itself is a screen of the anonymous pass
 * and of its own tests).
 */
async function loggedIn(page: Page, baseURL: string, role: Role, size = DESKTOP): Promise<void> {
  await page.setViewportSize(size);
  await page.emulateMedia({ colorScheme: 'light' });
  const token = await apiToken(baseURL, role);
  await page.context().addCookies([
    {
      name: 'vdiportal_session',
      value: encodeURIComponent(token),
      url: baseURL,
      sameSite: 'Strict',
    },
  ]);
  await page.goto('/desktops');
  // The router has drawn the app shell: only then does a client-side navigation reach it.
  await expect(page.locator('#main-content')).toBeVisible();
}

/** A dialog opened from the keyboard takes the focus, passes axe, and gives the focus back. */
async function dialogKeepsFocus(page: Page): Promise<void> {
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
}

/** The routes a role (null: no login) reaches. */
const routesOf = (role: Role | null): DerivedRoute[] =>
  routeTable.filter((route) => (role ? route.roles?.includes(role) : route.roles === null));

/** Every route of the role visited, none unreached, no problem on any screen. */
function expectComplete(result: PassResult, role: Role | null): void {
  expect(result.unreached, 'routes with parameters nothing reached').toEqual([]);
  expect(result.visited).toHaveLength(routesOf(role).length);
  expect(result.problems).toEqual([]);
}

test.describe('route table', () => {
  // The passes are independent (a page each): the workers share them.
  test.describe.configure({ mode: 'parallel', timeout: 300_000 });

  test('admin: light', async ({ page, baseURL }) => {
    await loggedIn(page, baseURL ?? '', 'admin');
    const seeds = seed(page, baseURL ?? '', 'admin');
    const result = await visitAll(
      page,
      'admin',
      'admin light',
      { overflow: 'no', navbar: true },
      seeds,
    );
    expect(result.visited.length).toBeGreaterThan(20);
    expectComplete(result, 'admin');
  });

  test('admin: dark, in Spanish, each screen also on a phone', async ({ page, baseURL }) => {
    await loggedIn(page, baseURL ?? '', 'admin');
    const seeds = seed(page, baseURL ?? '', 'admin');
    // Dark and Spanish together: the theme changes only colours, the language only texts.
    await page.emulateMedia({ colorScheme: 'dark' });
    await expect(page.locator('html')).toHaveAttribute('data-mantine-color-scheme', 'dark');
    await page.getByTestId('language-switcher').selectOption('es');
    await expect(page.locator('html')).toHaveAttribute('lang', /^es/);
    const result = await visitAll(page, 'admin', 'admin dark es', { overflow: 'phone' }, seeds);
    await page.getByTestId('language-switcher').selectOption('en');
    expectComplete(result, 'admin');
  });

  for (const role of ROLES.filter((name) => name !== 'admin')) {
    const phone = role === 'advanced';
    const dialog = role === 'user';
    const title = `${role}: light${phone ? ' on a phone' : ''}${dialog ? ', and a dialog' : ''}`;
    test(title, async ({ page, baseURL }) => {
      await loggedIn(page, baseURL ?? '', role, phone ? PHONE : DESKTOP);
      const seeds = seed(page, baseURL ?? '', role);
      // With the same login: a dialog takes the focus, passes axe, and gives the focus back.
      if (dialog) await dialogKeepsFocus(page);
      const label = `${role} light${phone ? ' 390px' : ''}`;
      const result = await visitAll(
        page,
        role,
        label,
        { overflow: phone ? 'here' : 'no', navbar: true },
        seeds,
      );
      expect(result.visited.length).toBeGreaterThan(3);
      expectComplete(result, role);
      if (dialog) {
        // The navbar's last entry ends the session (the last screen's dialog closed first).
        await page.keyboard.press('Escape');
        await expect(page.getByRole('dialog')).toBeHidden();
        await navbar(page).getByTestId('logout').click();
        await expect(page).toHaveURL(/\/login$/);
      }
    });
  }

  test('anonymous: the pages without login, on a phone', async ({ page, baseURL }) => {
    await page.setViewportSize(PHONE);
    await page.emulateMedia({ colorScheme: 'light' });
    const seeds = directLink(baseURL ?? '').then((url) => ({ '/vw/:jumperurl': url }));
    const result = await visitAll(
      page,
      null,
      'anonymous 390px',
      { overflow: 'here', load: true },
      seeds,
    );
    expect(result.visited.length).toBeGreaterThan(3);
    expectComplete(result, null);
  });
});
