/**
 * Direct-viewer links end to end, against the real server and real QEMU (TCG): `user` makes a
 * direct link from a stopped desktop's card menu; a fresh browser (no cookies, no login) opens it,
 * sees the desktop, starts it and opens the VNC console (canvas not blank), with the page served
 * no-referrer / no-store and no request leaving the portal or naming the page in a Referer; the
 * owner resets the link and the old URL shows the invalid-link page (404 from the API); the new
 * link stops the desktop.
 */
import { type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiAs, apiToken, canvasStats, loginUi } from './helpers';

const LINK = /\/vw\/([A-Za-z0-9_-]{43})$/;

/** Opens the direct link modal of a card, turns the link on or resets it, and reads the URL. */
async function makeLink(page: Page, id: string, mode: 'enable' | 'reset'): Promise<string> {
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await card.getByTestId('record-more').click();
  await page.locator('[data-action="directLink"]').click();
  const modal = page.getByTestId('direct-link-modal');
  if (mode === 'enable') {
    const toggle = modal.getByTestId('direct-link-enabled');
    await expect(toggle).not.toBeChecked();
    await toggle.click({ force: true });
  } else {
    await expect(modal.getByTestId('direct-link-hidden')).toBeVisible();
    await modal.getByTestId('direct-link-reset').click();
    await expect(modal.getByTestId('direct-link-reset-confirm')).toContainText('stops working');
    await modal.getByTestId('direct-link-reset-yes').click();
  }
  const input = modal.getByTestId('direct-link-url');
  await expect(input).toHaveValue(LINK);
  await expect(modal.getByTestId('direct-link-once')).toBeVisible();
  await expect(modal.getByTestId('direct-link-copy')).toBeVisible();
  const url = await input.inputValue();
  await modal.getByTestId('direct-link-close').click();
  await expect(modal).toHaveCount(0);
  return url;
}

test('direct link: enable, open without login, start, VNC, reset, stop', async ({
  page,
  browser,
  baseURL,
}) => {
  test.setTimeout(240_000);
  const base = baseURL ?? '';
  const api = await apiAs(base, await apiToken(base));

  // A stopped desktop of `user` (made from the demo template for this test).
  const name = `e2e-direct-${Date.now()}`;
  const created = await api.post('/api/v3/persistent_desktop', {
    data: { template_id: 'demo-template', name, description: 'Opened through a direct link' },
  });
  expect(created.ok()).toBe(true);
  const id = ((await created.json()) as { id: string }).id;
  expect(id).toBeTruthy();

  try {
    // The owner makes a link from the card's menu.
    await loginUi(page);
    await page.getByTestId('resource-filter').fill(name);
    const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
    await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 30_000 });
    const url = await makeLink(page, id, 'enable');
    expect(url.startsWith(`${base}/vw/`)).toBe(true);
    const token = LINK.exec(url)?.[1] ?? '';

    // A fresh browser: no cookies, no login.
    const visitor = await browser.newContext();
    const anon = await visitor.newPage();
    const requests: { url: string; referer: string | undefined }[] = [];
    anon.on('request', (request) =>
      requests.push({ url: request.url(), referer: request.headers().referer }),
    );
    const response = await anon.goto(url);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    expect(response?.headers()['cache-control']).toBe('no-store');

    await expect(anon.getByTestId('direct-name')).toHaveText(name);
    await expect(anon.getByTestId('direct-description')).toHaveText('Opened through a direct link');
    const state = anon.getByTestId('direct-state');
    await expect(state).toHaveAttribute('data-value', 'stopped');
    expect(await anon.title()).not.toContain(token);

    // Start: the state follows the page's polling.
    await anon.getByTestId('direct-start').click();
    await expect(state).toHaveAttribute('data-value', 'started', { timeout: 60_000 });

    // Open in browser: the console covers the page and shows the guest's screen.
    await anon.getByTestId('direct-open').click();
    await expect(anon.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', {
      timeout: 30_000,
    });
    await expect
      .poll(async () => (await canvasStats(anon)).nonBlack, { timeout: 30_000 })
      .toBeGreaterThan(2000);
    expect((await canvasStats(anon)).width).toBeGreaterThan(300);
    expect(await anon.title()).not.toContain(token);

    // Nothing left the portal, and no request told where it came from.
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      expect(new URL(request.url).origin, request.url).toBe(new URL(base).origin);
      // The page sends none; a module chunk importing another names that chunk (its own policy).
      expect(request.referer ?? '', request.url).not.toContain('/vw/');
      expect(request.referer ?? '', request.url).not.toContain(token);
    }

    // The owner resets the link: the old one stops working at once.
    await page.bringToFront();
    const fresh = await makeLink(page, id, 'reset');
    expect(fresh).not.toBe(url);
    // The open page finds out (its console is closed, its polling gets the 404)...
    await expect(anon.getByTestId('direct-invalid')).toBeVisible({ timeout: 30_000 });
    // ...and the old URL opened anew shows the invalid-link page, from a 404.
    const old = await visitor.newPage();
    const answer = old.waitForResponse(
      (r) => r.url().includes('/api/v3/direct/') && r.request().method() === 'GET',
    );
    await old.goto(url);
    expect((await answer).status()).toBe(404);
    await expect(old.getByTestId('direct-invalid')).toContainText(
      'This link is not valid or was reset',
    );

    // The new link works, and stops the desktop.
    const current = await visitor.newPage();
    await current.goto(fresh);
    await expect(current.getByTestId('direct-state')).toHaveAttribute('data-value', 'started');
    await current.getByTestId('direct-stop').click();
    await expect(current.getByTestId('direct-state')).not.toHaveAttribute('data-value', 'started', {
      timeout: 20_000,
    });
    await visitor.close();
  } finally {
    // Stopped at the end whatever happened (a guest that ignores ACPI gets stopped again: forced).
    await expect
      .poll(
        async () => {
          const info = (await (await api.get(`/api/v3/domain/info/${id}`)).json()) as {
            state?: string;
          };
          if (info.state !== 'stopped') await api.get(`/api/v3/desktop/stop/${id}`);
          return info.state;
        },
        { timeout: 60_000, intervals: [2_000] },
      )
      .toBe('stopped');
    await api.delete(`/api/v3/desktop/${id}/permanent`);
    await api.dispose();
  }
});
