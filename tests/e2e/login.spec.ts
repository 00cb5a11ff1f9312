import type { Page, Route } from '@playwright/test';
import { expect, test } from './fixtures';
import { DEMO_PASSWORD, loginUi } from './helpers';

/** The SPA's login chunk (not the drawn page's boot script): held until `release` is called. */
async function holdLoginChunk(page: Page): Promise<{ release: () => Promise<void> }> {
  const held: Route[] = [];
  let released = false;
  await page.route(/\/assets\/login-(?!boot-)[\w-]+\.js$/, async (route) => {
    if (released) await route.continue();
    else held.push(route);
  });
  return {
    release: async () => {
      released = true;
      await Promise.all(held.map((route) => route.continue()));
    },
  };
}

test.describe('login', () => {
  // With motion, as most users see it (the other specs ask for reduced motion).
  test.use({ reducedMotion: 'no-preference' });

  test('a user logs in and sees the seeded desktops', async ({ page }) => {
    await loginUi(page);
    await expect(page.getByTestId('record').first()).toBeVisible();
    expect(await page.getByTestId('record').count()).toBeGreaterThan(0);
    await expect(page).toHaveTitle(/VDI Portal/);
  });

  test('a wrong password shows the error', async ({ page }) => {
    await page.goto('/login');
    await page.locator('input[name=username]').fill('user');
    await page.locator('input[name=password]').fill('definitely-wrong');
    await page.getByTestId('login-submit').click();
    await expect(page.getByTestId('login-error')).toHaveText(/wrong username or password/i);
    await expect(page).toHaveURL(/\/login$/);
  });

  test('no session on a protected route goes to the login page', async ({ page }) => {
    await page.goto('/desktops');
    await expect(page).toHaveURL(/\/login$/);
  });

  test('a user opening /templates lands on /desktops', async ({ page }) => {
    await loginUi(page);
    await page.goto('/templates');
    await expect(page).toHaveURL(/\/desktops$/);
  });

  test('the login form is drawn before the app has loaded; a login sent from it signs in once it has', async ({
    page,
  }) => {
    const chunk = await holdLoginChunk(page);
    const logins: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/authentication/login') logins.push(request.url());
    });
    await page.goto('/login', { waitUntil: 'commit' });
    const drawn = page.locator('#static-login');
    // the demo has several categories: the drawn form offers them, filled in by the server
    await expect(drawn.getByTestId('login-category').locator('option')).toHaveText([
      'Default',
      'Second school',
    ]);
    await drawn.locator('input[name=username]').fill('user');
    await drawn.locator('input[name=password]').fill(DEMO_PASSWORD);
    await drawn.getByTestId('login-submit').click();
    // held until the app has taken the form over: not sent natively (no password in the address)
    await page.waitForTimeout(300);
    expect(logins).toEqual([]);
    expect(page.url()).toMatch(/\/login$/);
    await chunk.release();
    await expect(page).toHaveURL(/\/desktops$/);
    expect(logins).toHaveLength(1);
    await expect(page.locator('#static-login')).toHaveCount(0);
  });

  test("the drawn login form comes in the browser's language, then in the one chosen", async ({
    browser,
    baseURL,
  }) => {
    const context = await browser.newContext({ baseURL, locale: 'es-ES' });
    const page = await context.newPage();
    const chunk = await holdLoginChunk(page);
    await page.goto('/login', { waitUntil: 'commit' });
    await expect(page.locator('#static-login').getByTestId('login-submit')).toHaveText(
      'Iniciar sesión',
    );
    await expect(page.locator('html')).toHaveAttribute('lang', 'es');
    await chunk.release();
    await expect(page.locator('#static-login')).toHaveCount(0);
    await page.getByTestId('language-switcher').selectOption('de');
    await expect(page.getByTestId('login-submit')).toHaveText('Anmelden');
    // the choice reaches the server: the next visit's drawn form is German
    await page.route(/\/assets\/login-(?!boot-)[\w-]+\.js$/, () => undefined);
    await page.goto('/login', { waitUntil: 'commit' });
    await expect(page.locator('#static-login').getByTestId('login-submit')).toHaveText('Anmelden');
    await context.close();
  });
});
