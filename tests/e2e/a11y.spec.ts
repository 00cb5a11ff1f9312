import AxeBuilder from '@axe-core/playwright';
import { expect, test } from './fixtures';
import { loginUi } from './helpers';

async function seriousViolations(page: import('@playwright/test').Page) {
  const results = await new AxeBuilder({ page }).analyze();
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
}

test('the login page has no serious or critical axe violations', async ({ page }) => {
  await page.goto('/login');
  await expect(page.getByTestId('login-submit')).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
});

test('the desktops page has no serious or critical axe violations', async ({ page }) => {
  await loginUi(page);
  await expect(page.getByTestId('record').first()).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
});
