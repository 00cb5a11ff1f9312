import { expect, test } from './fixtures';
import { loginUi } from './helpers';

test('the language switch changes the UI and survives a reload', async ({ page }) => {
  await loginUi(page);
  await expect(page.getByRole('link', { name: 'Desktops' }).first()).toBeVisible();
  await page.getByTestId('language-switcher').selectOption('es');
  await expect(page.getByRole('link', { name: 'Escritorios' }).first()).toBeVisible();
  await page.reload();
  await expect(page.getByRole('link', { name: 'Escritorios' }).first()).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'es');
  await page.getByTestId('language-switcher').selectOption('en');
});
