import { expect, test } from './fixtures';
import { loginUi } from './helpers';

test.describe('login', () => {
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
});
