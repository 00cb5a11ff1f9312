/**
 * Templates, media, storage and the recycle bin on real disk images, through the UI only:
 * - an advanced user makes a template from a stopped desktop and shares it with `user`, who makes
 *   a desktop from it and sees it boot (VNC frame);
 * - an ISO served by a local HTTP server (admitted by MEDIA_ALLOWED_HOSTS) downloads with a
 *   progress bar that moves, and a desktop made from it boots the ISO; a URL that serves no ISO
 *   ends invalid-format;
 * - a disk grows from the storage page (`qemu-img info` reads the new size);
 * - a deleted desktop comes back from the recycle bin and boots; emptying the bin removes its files.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { type BrowserContext, type Locator, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiAs, apiToken, canvasStats, loginUi } from './helpers';

const ISO = '/usr/lib/grub-rescue/grub-rescue-cdrom.iso';

/** Files under the portal's data directory whose name contains the id (disks are named after their desktop). */
function filesOf(dataDir: string, id: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.includes(id)) found.push(path);
    }
  };
  walk(dataDir);
  return found;
}

/** The virtual size of a qcow2 file, from `qemu-img info`. */
function virtualSize(path: string): number {
  const info = JSON.parse(
    execFileSync('qemu-img', ['info', '--force-share', '--output=json', path], {
      encoding: 'utf8',
    }),
  ) as { 'virtual-size': number };
  return info['virtual-size'];
}

/** A new desktop from a template on the New desktop page; answers its id. */
async function newDesktop(page: Page, template: string, name: string): Promise<string> {
  await page.goto('/desktops/new');
  await page.getByRole('combobox', { name: 'Template' }).click();
  await page.getByRole('option', { name: template }).click();
  // The form takes the template's values (its name first), then the desktop gets its own name.
  const nameBox = page.getByRole('textbox', { name: 'Name', exact: true });
  await expect(nameBox).toHaveValue(template);
  await nameBox.fill(name);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: 30_000 });
  return cardId(page, name);
}

/** The id of the desktop card with this name (filtering the list to it). */
async function cardId(page: Page, name: string): Promise<string> {
  await page.getByTestId('resource-filter').fill(name);
  const card = page.locator('[data-testid="record"]', { hasText: name });
  await expect(card).toHaveCount(1, { timeout: 30_000 });
  return (await card.getAttribute('data-record-id')) ?? '';
}

function cardOf(page: Page, id: string): Locator {
  return page.locator(`[data-testid="record"][data-record-id="${id}"]`);
}

/** Runs a card's action from its "more" menu (or its own button when it is primary). */
async function cardAction(page: Page, card: Locator, action: string): Promise<void> {
  const direct = card.locator(`[data-action="${action}"]`);
  if (await direct.isVisible().catch(() => false)) return direct.click();
  await card.getByTestId('record-more').click();
  await page.locator(`[role="menu"] [data-action="${action}"]`).click();
}

/**
 * One click on the stopped desktop's Open: it starts the desktop and opens the browser viewer's
 * tab, whose page loads while the desktop boots; waits for a drawn screen.
 */
async function bootsToScreen(page: Page, id: string): Promise<void> {
  const card = cardOf(page, id);
  await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 60_000 });
  await expect(card.getByTestId('desktop-open')).toHaveAttribute('data-viewer', 'browser-vnc');
  const popup = page.context().waitForEvent('page');
  await card.getByTestId('desktop-open').click();
  const viewer = await popup;
  await viewer.waitForURL(new RegExp(`/viewer/vnc/${id}$`));
  await expect(card).toHaveAttribute('data-state', 'started', { timeout: 60_000 });
  await expect(viewer.getByTestId('vnc-viewer')).toHaveAttribute('data-status', 'connected', {
    timeout: 30_000,
  });
  await expect
    .poll(async () => (await canvasStats(viewer)).nonBlack, { timeout: 30_000 })
    .toBeGreaterThan(2000);
  await viewer.close();
  await stop(page, id);
}

/** Stops a started desktop from its card (GRUB ignores ACPI: force stop when offered). */
async function stop(page: Page, id: string): Promise<void> {
  const card = cardOf(page, id);
  await card.locator('[data-action="stop"]').click();
  await expect(card).not.toHaveAttribute('data-state', 'started', { timeout: 15_000 });
  const force = card.locator('[data-action="forceStop"]');
  if (await force.isVisible().catch(() => false)) await force.click().catch(() => undefined);
  await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 40_000 });
}

async function signedIn(context: BrowserContext, username: string): Promise<Page> {
  const page = await context.newPage();
  await loginUi(page, username);
  return page;
}

test.describe('templates, media, storage and recycle bin', () => {
  // Each test makes its own desktops and logs in on its own: the workers share them.
  test.describe.configure({ mode: 'parallel' });

  test('a template made from a desktop and shared with user boots for user only', async ({
    browser,
    baseURL,
    portal,
  }) => {
    test.setTimeout(300_000);
    const advanced = await signedIn(await browser.newContext(), 'advanced');
    const source = `e2e-src-${Date.now()}`;
    const id = await newDesktop(advanced, 'Demo template', source);

    // Make template from the stopped desktop's card: the form opens with the desktop chosen.
    await cardAction(advanced, cardOf(advanced, id), 'template');
    await expect(advanced).toHaveURL(new RegExp(`/templates/new\\?desktop_id=${id}$`));
    const template = `e2e-tpl-${Date.now()}`;
    await advanced.getByRole('textbox', { name: 'Name', exact: true }).fill(template);
    await advanced.getByRole('switch', { name: 'Enabled' }).check();
    await advanced.getByRole('button', { name: 'Create', exact: true }).click();
    await expect(advanced).toHaveURL(/\/templates$/, { timeout: 30_000 });
    const row = advanced.locator('[data-testid="record"]', { hasText: template });
    await expect(row).toContainText('Ready', { timeout: 60_000 });
    // The template has its own flattened image; the desktop keeps its disk.
    const templateId = (await row.getAttribute('data-record-id')) ?? '';
    const templateFiles = filesOf(portal.dataDir, templateId).filter((path) =>
      path.endsWith('.qcow2'),
    );
    expect(templateFiles).toHaveLength(1);
    const backing = execFileSync(
      'qemu-img',
      ['info', '--force-share', '--output=json', templateFiles[0] ?? ''],
      { encoding: 'utf8' },
    );
    expect(JSON.parse(backing) as Record<string, unknown>).not.toHaveProperty('backing-filename');
    expect(filesOf(portal.dataDir, id).some((path) => path.endsWith('.qcow2'))).toBe(true);

    // Nobody else sees it yet.
    const userToken = await apiToken(baseURL ?? '', 'user');
    const userApi = await apiAs(baseURL ?? '', userToken);
    const usable = async () =>
      (
        (await (await userApi.get('/api/v3/user/templates/allowed/all')).json()) as {
          name: string;
        }[]
      ).map((item) => item.name);
    expect(await usable()).not.toContain(template);

    // Share with user through the allowed users modal (search of at least 2 characters).
    await row.getByTestId('record-more').click();
    await advanced.locator('[role="menu"] [data-action="allowed"]').click();
    const modal = advanced.getByTestId('allowed-modal');
    await modal.getByTestId('allowed-users-on').check();
    await modal.getByTestId('allowed-users-search').click();
    await advanced.keyboard.type('us');
    await advanced.getByRole('option', { name: /Demo User/ }).click();
    // Close the choices (a click on the modal's text) so they do not cover the buttons.
    await modal.getByText(/A ticked box with nobody chosen/).click();
    await modal.getByTestId('allowed-save').click();
    await expect(modal).toBeHidden();
    await expect.poll(usable).toContain(template);

    // user makes a desktop from the shared template and it boots.
    const user = await signedIn(await browser.newContext(), 'user');
    const fromTemplate = await newDesktop(user, template, `e2e-from-tpl-${Date.now()}`);
    await bootsToScreen(user, fromTemplate);
    // It is advanced's own template, not one shared with advanced.
    await advanced.goto('/templates');
    await expect(advanced.locator('[data-testid="record"]', { hasText: template })).toHaveCount(1);
    await advanced.getByRole('tab', { name: 'Shared with me' }).click();
    await expect(advanced.locator('[data-testid="record"]', { hasText: template })).toHaveCount(0);
    await userApi.dispose();
  });

  test('an ISO downloads with moving progress and a desktop made from it boots it', async ({
    browser,
    portal,
  }) => {
    test.setTimeout(300_000);
    // The source: the GRUB rescue ISO, sent slowly enough for the progress to be seen moving.
    const iso = readFileSync(ISO);
    const server: Server = createServer((request, response) => {
      if (request.url === '/not-an-iso.iso') {
        response.writeHead(200, { 'Content-Length': 65536 });
        response.end(Buffer.alloc(65536, 7));
        return;
      }
      response.writeHead(200, { 'Content-Length': iso.length });
      let sent = 0;
      const chunk = Math.ceil(iso.length / 40);
      const timer = setInterval(() => {
        response.write(iso.subarray(sent, sent + chunk));
        sent += chunk;
        if (sent >= iso.length) {
          clearInterval(timer);
          response.end();
        }
      }, 100);
      response.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(portal.mediaPort, '127.0.0.1', resolve));
    try {
      const page = await signedIn(await browser.newContext(), 'advanced');
      const name = `e2e-iso-${Date.now()}`;
      await page.goto('/media');
      await page.getByTestId('resource-create').click();
      await expect(page).toHaveURL(/\/media\/new$/);
      await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name);
      await page
        .getByRole('textbox', { name: 'URL' })
        .fill(`http://127.0.0.1:${portal.mediaPort}/grub.iso`);
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await expect(page).toHaveURL(/\/media$/, { timeout: 30_000 });

      // The progress bar moves (socket updates, no reload), then the medium is downloaded.
      const row = page.locator('[data-testid="record"]', { hasText: name });
      const progress = row.getByTestId('record-progress');
      await expect(progress).toBeVisible({ timeout: 15_000 });
      const seen = new Set<string>();
      await expect
        .poll(
          async () => {
            const value = await progress.getAttribute('data-value').catch(() => null);
            if (value) seen.add(value);
            return seen.size;
          },
          { timeout: 20_000, intervals: [200] },
        )
        .toBeGreaterThan(2);
      await expect(row).toContainText('Downloaded', { timeout: 30_000 });

      // New desktop from the medium: empty disk of the chosen size, boots the ISO.
      await cardAction(page, row, 'newDesktop');
      await expect(page).toHaveURL(/\/media\/desktop\/new\?media_id=/);
      const desktop = `e2e-from-iso-${Date.now()}`;
      await page.getByRole('textbox', { name: 'Name', exact: true }).fill(desktop);
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await expect(page).toHaveURL(/\/desktops$/, { timeout: 30_000 });
      const id = await cardId(page, desktop);
      await bootsToScreen(page, id);

      // A URL that serves no ISO ends invalid-format, and its file is gone.
      const bad = `e2e-bad-${Date.now()}`;
      await page.goto('/media/new');
      await page.getByRole('textbox', { name: 'Name', exact: true }).fill(bad);
      await page
        .getByRole('textbox', { name: 'URL' })
        .fill(`http://127.0.0.1:${portal.mediaPort}/not-an-iso.iso`);
      await page.getByRole('button', { name: 'Create', exact: true }).click();
      await expect(page).toHaveURL(/\/media$/, { timeout: 30_000 });
      const badRow = page.locator('[data-testid="record"]', { hasText: bad });
      await expect(badRow).toContainText('Invalid format', { timeout: 30_000 });
      const badId = (await badRow.getAttribute('data-record-id')) ?? '';
      expect(filesOf(portal.dataDir, badId)).toEqual([]);
    } finally {
      server.close();
    }
  });

  test('a disk grows from the storage page', async ({ browser, portal }) => {
    test.setTimeout(180_000);
    const page = await signedIn(await browser.newContext(), 'advanced');
    const id = await newDesktop(page, 'Demo template', `e2e-grow-${Date.now()}`);
    await expect(cardOf(page, id)).toHaveAttribute('data-state', 'stopped', { timeout: 30_000 });
    const disk = filesOf(portal.dataDir, id).find((path) => path.endsWith('.qcow2')) ?? '';
    const before = virtualSize(disk);

    await page.goto('/userstorage');
    const row = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
    await row.locator('[data-action="increase"]').click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('textbox', { name: /Increase by/ }).fill('1');
    await dialog.getByRole('button', { name: 'Increase size' }).click();
    await expect(dialog).toBeHidden({ timeout: 15_000 });
    await expect.poll(() => virtualSize(disk), { timeout: 60_000 }).toBe(before + 1024 ** 3);
  });

  test('a deleted desktop is restored from the recycle bin and boots; emptying removes its files', async ({
    browser,
    portal,
  }) => {
    test.setTimeout(240_000);
    const page = await signedIn(await browser.newContext(), 'user');
    const name = `e2e-bin-${Date.now()}`;
    const id = await newDesktop(page, 'Demo template', name);
    await expect(cardOf(page, id)).toHaveAttribute('data-state', 'stopped', { timeout: 30_000 });

    // Delete to the recycle bin, restore from its details page.
    await cardAction(page, cardOf(page, id), 'delete');
    await page.getByTestId('confirm-action').click();
    await expect(cardOf(page, id)).toHaveCount(0, { timeout: 15_000 });
    await page.goto('/recycleBins');
    const entry = page.locator('[data-testid="record"]', { hasText: name });
    await expect(entry).toHaveCount(1, { timeout: 15_000 });
    await cardAction(page, entry, 'restore');
    const confirm = page.getByTestId('confirm-action');
    if (await confirm.isVisible().catch(() => false)) await confirm.click();
    await expect(entry).toHaveCount(0, { timeout: 15_000 });
    await page.goto('/desktops');
    await cardId(page, name);
    await bootsToScreen(page, id);

    // Delete again, then empty the bin: the disk file is gone.
    await cardAction(page, cardOf(page, id), 'delete');
    await page.getByTestId('confirm-action').click();
    await expect(cardOf(page, id)).toHaveCount(0, { timeout: 15_000 });
    expect(filesOf(portal.dataDir, id).length).toBeGreaterThan(0);
    await page.goto('/recycleBins');
    await page.locator('[data-action="empty"]').click();
    await page.getByTestId('confirm-action').click();
    await expect(page.locator('[data-testid="record"]', { hasText: name })).toHaveCount(0, {
      timeout: 15_000,
    });
    await expect.poll(() => filesOf(portal.dataDir, id), { timeout: 30_000 }).toEqual([]);
  });
});
