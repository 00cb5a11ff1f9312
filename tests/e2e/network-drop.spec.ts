/**
 * A brief network drop does not end the session: the live socket reconnects when the network is
 * back, the page stays where it was, and the server's changes arrive live again.
 */
import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';

test('1.5 s offline keeps the user on the desktops page and live updates still arrive', async ({
  page,
  context,
  baseURL,
}) => {
  await loginUi(page);
  const api = await apiAs(baseURL ?? '', await apiToken(baseURL ?? ''));
  let target: { id: string; name: string } | undefined;
  await expect
    .poll(
      async () => {
        const desktops = (await (await api.get('/api/v3/user/desktops')).json()) as {
          id: string;
          name: string;
          state: string;
        }[];
        target = desktops.find((d) => d.state === 'stopped');
        return Boolean(target);
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  const card = page.locator(`[data-testid="record"][data-record-id="${target?.id}"]`);
  await expect(card).toBeVisible();

  await context.setOffline(true);
  await page.waitForTimeout(1500);
  await context.setOffline(false);

  // Past the reconnect delays (1-2 s) and a session check: still signed in, still here.
  await page.waitForTimeout(4000);
  await expect(page).toHaveURL(/\/desktops$/);

  const renamed = `${target?.name ?? 'Desktop'} after the drop`.slice(0, 50);
  const edit = await api.put(`/api/v3/domain/${target?.id}`, { data: { name: renamed } });
  expect(edit.ok()).toBeTruthy();
  await expect(card).toContainText(renamed, { timeout: 5000 });
  await expect(page).toHaveURL(/\/desktops$/);

  await api.put(`/api/v3/domain/${target?.id}`, { data: { name: target?.name } });
  await api.dispose();
});
