/**
 * Desktop lifecycle against the real server and real QEMU (TCG), all through the UI: create a
 * desktop from the demo template on the New desktop page, start it from the card (state follows
 * the socket, no reload), live thumbnail, browser VNC viewer in a new tab (canvas not blank,
 * typing reaches GRUB), SPICE file from the card opened in a real SPICE client over TLS, stop (the viewer tab shows "stopped"), edit its
 * memory on the edit page, delete it from the card and find it in the recycle-bin count.
 */
import { readFileSync } from 'node:fs';
import { expect, test } from './fixtures';
import { apiAs, apiToken, canvasStats, loginUi } from './helpers';
import { remoteViewerFrame } from './remote-viewer';

// With motion, as most users see it (the other specs ask for reduced motion).
test.use({ reducedMotion: 'no-preference' });

test('desktop lifecycle: create, start, VNC, SPICE, stop, edit, delete', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(240_000);
  const base = baseURL ?? '';
  const token = await apiToken(base);
  const api = await apiAs(base, token);
  await loginUi(page);

  // Create the desktop on the New desktop page.
  const name = `e2e-life-${Date.now()}`;
  await page.getByTestId('resource-create').click();
  await expect(page).toHaveURL(/\/desktops\/new$/);
  await page.getByRole('combobox', { name: 'Template' }).click();
  await page.getByRole('option', { name: 'Demo template' }).click();
  await expect(page.getByTestId('template-description')).toBeVisible();
  // The template's own name fills the field once its details arrive; typing before that could
  // land in the middle of the update.
  const nameInput = page.getByRole('textbox', { name: 'Name', exact: true });
  await expect(nameInput).toHaveValue('Demo template');
  await nameInput.fill(name);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: 30_000 });
  const list = (await (await api.get('/api/v3/user/desktops')).json()) as {
    id: string;
    name: string;
  }[];
  const id = list.find((d) => d.name === name)?.id ?? '';
  expect(id, 'the new desktop is listed').toBeTruthy();
  // Back on the list, the keyboard focus is on the new desktop's card.
  await expect(page.locator(`[data-record-id="${id}"]:focus`)).toBeVisible();
  await expect(page.getByTestId('list-announcement')).toContainText(name);

  await page.getByTestId('resource-filter').fill(name);
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 30_000 });

  // Start from the card; the state changes arrive on the socket (no navigation).
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations += 1;
  });
  await card.getByTestId('record-more').click();
  await page.locator('[data-action="start"]').click();
  await expect(card).toHaveAttribute('data-state', 'started', { timeout: 30_000 });
  expect(navigations).toBe(0);
  // The focus stays on the card (the control in the pressed one's place), never the page body.
  await expect
    .poll(() => page.evaluate(() => document.activeElement?.tagName ?? 'none'))
    .not.toMatch(/^(BODY|none)$/);
  expect(await card.evaluate((element) => element.contains(document.activeElement))).toBe(true);

  // Live thumbnail of the running desktop (fetched with the token, shown as an object URL).
  await expect(card.getByTestId('desktop-thumbnail')).toBeVisible({ timeout: 15_000 });
  await expect(card.getByTestId('desktop-thumbnail')).toHaveAttribute('src', /^blob:/);

  // Open: the preferred viewer is browser VNC (default order) and opens in a new tab.
  const open = card.getByTestId('desktop-open');
  await expect(open).toHaveAttribute('data-viewer', 'browser-vnc');
  const popupPromise = page.context().waitForEvent('page');
  await open.click();
  const viewer = await popupPromise;
  await viewer.waitForURL(new RegExp(`/viewer/vnc/${id}$`));
  await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', {
    timeout: 30_000,
  });

  // The canvas shows the GRUB menu (not blank).
  await expect
    .poll(async () => (await canvasStats(viewer)).nonBlack, { timeout: 20_000 })
    .toBeGreaterThan(2000);
  const menu = await canvasStats(viewer);
  expect(menu.width).toBeGreaterThan(300);

  // Typing reaches the guest: `c` opens the GRUB command line, then echo + Enter.
  await viewer.locator('[data-testid="vnc-screen"] canvas').click();
  await viewer.keyboard.press('c');
  await expect
    .poll(async () => (await canvasStats(viewer)).hash, { timeout: 15_000 })
    .not.toBe(menu.hash);
  await viewer.waitForTimeout(500);
  const commandLine = await canvasStats(viewer);
  await viewer.keyboard.type('echo hello-e2e', { delay: 40 });
  await viewer.keyboard.press('Enter');
  await expect
    .poll(async () => (await canvasStats(viewer)).hash, { timeout: 15_000 })
    .not.toBe(commandLine.hash);
  const typed = await canvasStats(viewer);
  await viewer
    .getByTestId('vnc-screen')
    .screenshot({ path: test.info().outputPath('vnc-typed.png') });
  expect(typed.nonBlack).toBeGreaterThan(commandLine.nonBlack);

  // The thumbnail endpoint serves a PNG of the running desktop.
  const thumb = await api.get(`/api/v3/desktop/${id}/thumbnail`);
  expect(thumb.status()).toBe(200);
  expect(thumb.headers()['content-type']).toContain('image/png');

  // SPICE file from the card's "Open with" menu.
  await page.bringToFront();
  await card.getByTestId('desktop-open-with').click();
  const downloadPromise = page.waitForEvent('download');
  await page.getByTestId('open-viewer-file-spice').click();
  const download = await downloadPromise;
  expect(download.suggestedFilename()).toBe('vdi-spice.vv');
  const spice = readFileSync((await download.path()) ?? '', 'utf8');
  expect(spice).toContain('[virt-viewer]');
  expect(spice).toMatch(/^type=spice$/m);
  expect(spice).toMatch(/^host=\S+$/m);
  expect(spice).toMatch(/^tls-port=\d+$/m);
  expect(spice).not.toMatch(/^port=/m);
  expect(spice).toMatch(/^ca=-----BEGIN CERTIFICATE-----\\n/m);
  expect(spice).toMatch(/^password=\S+$/m);
  expect(spice).toMatch(/^proxy=\S+$/m);
  // A real SPICE client opens the file: through the portal's tunnel, over TLS checked against
  // the file's CA, it shows the guest's screen in a window titled with the desktop's name.
  const frame = await remoteViewerFrame((await download.path()) ?? '', {
    title: new RegExp(`^${name}:\\d+ - Press SHIFT\\+F12`),
  });
  expect(frame.width).toBeGreaterThan(300);
  expect(frame.colours).toBeGreaterThan(2);
  // The choice is remembered: Open now uses SPICE.
  await expect(open).toHaveAttribute('data-viewer', 'file-spice');

  // Stop (GRUB ignores ACPI: shutting-down, then force stop).
  await card.locator('[data-action="stop"]').click();
  await expect(card).not.toHaveAttribute('data-state', 'started', { timeout: 15_000 });
  const force = card.locator('[data-action="forceStop"]');
  if (await force.isVisible().catch(() => false)) await force.click().catch(() => undefined);
  await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 40_000 });
  // The viewer tab says the desktop stopped, with a way back.
  await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'stopped', {
    timeout: 20_000,
  });
  await expect(viewer.getByTestId('vnc-back')).toBeVisible();
  // The way back leaves the viewer (shown without the application) for the desktops page.
  await viewer.getByTestId('vnc-back').click();
  await expect(viewer).toHaveURL(/\/desktops$/);
  await expect(viewer.locator(`[data-testid="record"][data-record-id="${id}"]`)).toBeVisible({
    timeout: 20_000,
  });
  await viewer.close();

  // Edit the memory on the edit page (Edit in the card's more menu).
  const before = (await (await api.get(`/api/v3/domain/info/${id}`)).json()) as {
    hardware?: { memory?: number };
  };
  const memory = before.hardware?.memory === 1.5 ? 2 : 1.5;
  await card.getByTestId('record-more').click();
  await page.locator('[data-action="edit"]').click();
  await expect(page).toHaveURL(new RegExp(`/domain/edit\\?id=${id}$`));
  const memoryInput = page.getByRole('textbox', { name: /^Memory/ });
  await memoryInput.fill(String(memory));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: 30_000 });
  await expect
    .poll(
      async () =>
        (
          (await (await api.get(`/api/v3/domain/info/${id}`)).json()) as {
            hardware?: { memory?: number };
          }
        ).hardware?.memory,
    )
    .toBe(memory);
  await page.getByTestId('resource-filter').fill(name);

  // Delete from the card's more menu (confirmation naming the desktop) -> recycle bin.
  const countBefore = Number(await (await api.get('/api/v3/recycle_bin/count')).text());
  await card.getByTestId('record-more').click();
  await page.locator('[data-action="delete"]').click();
  await page.getByTestId('confirm-action').click();
  await expect(card).toHaveCount(0, { timeout: 15_000 });
  await expect
    .poll(async () => Number(await (await api.get('/api/v3/recycle_bin/count')).text()))
    .toBe(countBefore + 1);
  await api.dispose();
});
