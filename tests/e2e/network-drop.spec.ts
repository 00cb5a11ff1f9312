/**
 * A brief network drop does not end the session: the live socket reconnects when the network is
 * back, the page stays where it was, and the server's changes arrive live again. A session that
 * ended while the network was down ends once: one `/logout`, one redirect to the login page.
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

test('a session revoked during a drop ends once: one /logout call, one redirect', async ({
  page,
  context,
  baseURL,
}) => {
  test.setTimeout(90_000);
  // The page's clock runs at its own pace but can jump (fastForward) instead of being waited for.
  await page.clock.install();
  // Every history change to the login page the SPA makes, counted in the page.
  await page.addInitScript(() => {
    const counted = { loginRedirects: 0 };
    Object.assign(window, { counted });
    for (const name of ['pushState', 'replaceState'] as const) {
      const original = history[name].bind(history);
      history[name] = (data: unknown, unused: string, url?: string | URL | null) => {
        if (url && new URL(String(url), location.href).pathname === '/login')
          counted.loginRedirects += 1;
        original(data, unused, url);
      };
    }
  });
  const logoutCalls: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === '/authentication/logout')
      logoutCalls.push(request.url());
  });
  await loginUi(page);
  await expect(page.getByTestId('record').first()).toBeVisible();
  const session = (await context.cookies()).find((cookie) => cookie.name === 'vdiportal_session');
  expect(session?.value).toBeTruthy();
  // Past the lists' 30 s freshness: back online, they are read again (and answered 401) while the
  // socket finds its handshake refused: several signals of one end.
  await page.clock.fastForward(31_000);

  await context.setOffline(true);
  await page.waitForTimeout(500);
  // The session ends while the page cannot hear it (logged out elsewhere).
  const elsewhere = await apiAs(baseURL ?? '', decodeURIComponent(session?.value ?? ''));
  expect((await elsewhere.post('/authentication/logout')).ok()).toBeTruthy();
  await elsewhere.dispose();
  await page.waitForTimeout(1000);
  await context.setOffline(false);

  await expect(page).toHaveURL(/\/login$/, { timeout: 15_000 });
  // Past the socket's next attempts and any late answer.
  await page.waitForTimeout(4000);
  await expect(page).toHaveURL(/\/login$/);
  expect(logoutCalls).toHaveLength(1);
  const redirects = await page.evaluate(
    () => (window as unknown as { counted: { loginRedirects: number } }).counted.loginRedirects,
  );
  expect(redirects).toBe(1);
});
