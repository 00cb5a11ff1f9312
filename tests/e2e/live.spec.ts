import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';

test('a desktop changed on the server appears changed without reload within 1 s', async ({
  page,
  baseURL,
}) => {
  await loginUi(page);
  const token = await apiToken(baseURL ?? '');
  const api = await apiAs(baseURL ?? '', token);
  // The seeded desktops are created (disks made) right after the server starts.
  let target: { id: string; state: string } | undefined;
  await expect
    .poll(
      async () => {
        const desktops = (await (await api.get('/api/v3/user/desktops')).json()) as {
          id: string;
          state: string;
        }[];
        target = desktops.find((d) => d.state === 'stopped');
        return Boolean(target);
      },
      { timeout: 20_000 },
    )
    .toBe(true);
  const card = page.locator(`[data-testid="record"][data-record-id="${target?.id}"]`);
  await expect(card).toHaveAttribute('data-state', 'stopped');
  let navigations = 0;
  page.on('framenavigated', () => (navigations += 1));

  const response = await api.get(`/api/v3/desktop/start/${target?.id}`);
  expect(response.ok()).toBeTruthy();
  await expect(card).not.toHaveAttribute('data-state', 'stopped', { timeout: 1000 });
  expect(navigations).toBe(0);

  // Leave the desktop stopped for the next tests.
  await expect
    .poll(
      async () => {
        const list = (await (await api.get('/api/v3/user/desktops')).json()) as {
          id: string;
          state: string;
        }[];
        return list.find((d) => d.id === target?.id)?.state;
      },
      { timeout: 30_000 },
    )
    .not.toBe('starting');
  await api.get(`/api/v3/desktop/stop/${target?.id}`);
  await api.dispose();
});
