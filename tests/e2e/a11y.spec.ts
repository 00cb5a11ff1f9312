/**
 * The login page (not a route of the route table): no serious or critical axe violations. The
 * screens behind the login are held to zero violations by `a11y-routes.spec.ts`.
 */
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from './fixtures';

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
