/**
 * Accounts through the UI: language kept on the server, password change, forgot password by mail
 * (a real SMTP sink beside the portal), the disclaimer and password-reset steps of a first login,
 * sign-up with a registration code, the VPN file, API keys and moving desktops between accounts.
 * Each test uses its own demo student, so the other suites' accounts stay as they are.
 */
import { request, type Page } from '@playwright/test';
import { expect, test, type Portal } from './fixtures';
import { DEMO_PASSWORD, apiAs, apiToken, loginUi } from './helpers';

interface Mail {
  to: string[];
  subject: string;
  links: string[];
}

/** The demo has two categories: the account pages ask which one (the accounts here are in Default). */
async function chooseDemoCategory(page: Page): Promise<void> {
  await page.getByRole('combobox', { name: 'Category', exact: true }).click();
  await page.getByRole('listbox').getByRole('option', { name: 'Default', exact: true }).click();
}

/** The first mail the portal sent to `address` whose subject matches, waiting for it to arrive. */
async function mailTo(portal: Portal, address: string, subject: RegExp): Promise<Mail> {
  let found: Mail | undefined;
  await expect
    .poll(
      () => {
        found = portal.mail().find((m) => m.to.includes(address) && subject.test(m.subject));
        return !!found;
      },
      { timeout: 15_000 },
    )
    .toBe(true);
  if (!found) throw new Error(`no mail to ${address}`);
  return found;
}

/** Status of a login with the form provider, without a browser. */
async function loginStatus(baseURL: string, username: string, password: string): Promise<number> {
  const ctx = await request.newContext({ baseURL });
  const response = await ctx.post('/authentication/login?provider=form&category_id=default', {
    multipart: { username, password },
  });
  const status = response.status();
  await ctx.dispose();
  return status;
}

async function openProfileAction(page: Page, action: string): Promise<void> {
  await page.goto('/profile');
  await page.locator(`[data-action="${action}"]`).click();
  await expect(page.getByRole('dialog')).toBeVisible();
}

test('the language chosen in the profile is the UI language at the next login on any browser', async ({
  page,
  browser,
}) => {
  await loginUi(page, 'student10');
  await openProfileAction(page, 'language');
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Language').click();
  await page.getByRole('listbox').getByRole('option', { name: 'Español' }).click();
  await dialog.locator('button[type=submit]').click();
  await expect(page.getByRole('link', { name: 'Escritorios' }).first()).toBeVisible();

  const fresh = await browser.newContext({ locale: 'en-GB' });
  const other = await fresh.newPage();
  await loginUi(other, 'student10');
  await expect(other.getByRole('link', { name: 'Escritorios' }).first()).toBeVisible();
  await expect(other.locator('html')).toHaveAttribute('lang', 'es');
  await fresh.close();
});

test('a password change keeps this session, ends the others, and the old password fails', async ({
  page,
  baseURL,
}) => {
  const base = baseURL ?? '';
  const elsewhere = await apiAs(base, await apiToken(base, 'student11'));
  expect((await elsewhere.get('/api/v3/user')).status()).toBe(200);

  await loginUi(page, 'student11');
  await openProfileAction(page, 'changePassword');
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Current password').fill(DEMO_PASSWORD);
  await dialog
    .getByRole('textbox', { name: 'New password', exact: true })
    .fill('Changed-pass-2026');
  await dialog.getByLabel('Confirm the new password').fill('Changed-pass-2026');
  await dialog.locator('button[type=submit]').click();
  await expect(dialog).toBeHidden();

  expect((await elsewhere.get('/api/v3/user')).status()).toBe(401);
  expect(await loginStatus(base, 'student11', DEMO_PASSWORD)).toBe(401);
  expect(await loginStatus(base, 'student11', 'Changed-pass-2026')).toBe(200);
  // The session that made the change goes on.
  await page.reload();
  await expect(page.getByTestId('resource-details')).toBeVisible();
});

test('forgot password: the mail arrives and its link sets a new password', async ({
  page,
  baseURL,
  portal,
}) => {
  const base = baseURL ?? '';
  await page.goto('/login');
  await page.getByRole('link', { name: /forgot/i }).click();
  await expect(page).toHaveURL(/\/forgot-password$/);
  await page.getByLabel('Email').fill('student12@example.org');
  await chooseDemoCategory(page);
  await page.locator('button[type=submit]').click();
  await expect(page.getByTestId('form-done')).toBeVisible();

  const mail = await mailTo(portal, 'student12@example.org', /password/i);
  const link = mail.links.find((l) => l.includes('/reset-password?token='));
  expect(link).toBeTruthy();
  await page.goto(link ?? '');
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('Forgot-pass-2026');
  await page.getByLabel('Confirm the password').fill('Forgot-pass-2026');
  await page.locator('button[type=submit]').click();
  await expect(page.getByTestId('form-done')).toBeVisible();
  await expect(page).toHaveURL(/\/login$/, { timeout: 15_000 });
  expect(await loginStatus(base, 'student12', DEMO_PASSWORD)).toBe(401);
  await loginUi(page, 'student12', 'Forgot-pass-2026');
  // The link works once.
  await page.goto(link ?? '');
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('Forgot-pass-2027');
  await page.getByLabel('Confirm the password').fill('Forgot-pass-2027');
  await page.locator('button[type=submit]').click();
  await expect(page.getByRole('alert')).toBeVisible();
  expect(await loginStatus(base, 'student12', 'Forgot-pass-2027')).toBe(401);
});

test('a first login passes the disclaimer and the password reset, then lands on the desktops', async ({
  page,
}) => {
  await page.goto('/login');
  await page.locator('input[name=username]').fill('newcomer');
  await page.locator('input[name=password]').fill(DEMO_PASSWORD);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/disclaimer$/);
  await expect(page.getByText('Terms of use')).toBeVisible();
  await page.getByRole('button', { name: 'Accept' }).click();
  await expect(page).toHaveURL(/\/reset-password$/);
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('First-login-2026');
  await page.getByLabel('Confirm the password').fill('First-login-2026');
  await page.locator('button[type=submit]').click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: 15_000 });
});

test('sign-up: the mailed link and a registration code make the account, which logs in', async ({
  page,
  baseURL,
  portal,
}) => {
  const base = baseURL ?? '';
  const username = `signup${Date.now() % 100000}`;
  const email = `${username}@example.org`;
  await page.goto('/login');
  await page.getByRole('link', { name: /create an account/i }).click();
  await expect(page).toHaveURL(/\/signup$/);
  await page.getByRole('textbox', { name: 'Username', exact: true }).fill(username);
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Signed Up');
  await page.getByLabel('Email').fill(email);
  await chooseDemoCategory(page);
  await page.locator('button[type=submit]').click();
  await expect(page.getByTestId('form-done')).toBeVisible();

  const mail = await mailTo(portal, email, /.*/);
  const link = mail.links.find((l) => l.includes('/register?token='));
  expect(link).toBeTruthy();
  await page.goto(link ?? '');
  await page.getByLabel('Registration code').fill('NOT-A-CODE');
  await page.getByRole('textbox', { name: 'Password', exact: true }).fill('Signup-pass-2026');
  await page.getByLabel('Confirm the password').fill('Signup-pass-2026');
  await page.locator('button[type=submit]').click();
  await expect(
    page.getByText(/The registration code was not found|No registration code matches/),
  ).toBeVisible();
  await expect(page).toHaveURL(/\/register\?token=/);
  await page.getByLabel('Registration code').fill('CLASS-A-2026');
  await page.locator('button[type=submit]').click();
  // New accounts of the demo category accept the disclaimer first.
  await expect(page).toHaveURL(/\/disclaimer$/, { timeout: 15_000 });
  await page.getByRole('button', { name: 'Accept' }).click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: 15_000 });

  const api = await apiAs(base, await apiToken(base, username, 'Signup-pass-2026'));
  const me = (await (await api.get('/api/v3/user')).json()) as { group_name: string; role: string };
  expect(me.group_name).toBe('Class A');
});

test('the navbar downloads a WireGuard configuration', async ({ page }) => {
  await loginUi(page, 'student15');
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'VPN download' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toBe('isard-vpn.conf');
  const path = await file.path();
  const { readFileSync } = await import('node:fs');
  const text = readFileSync(path, 'utf8');
  expect(text).toMatch(/^\[Interface\]$/m);
  expect(text).toMatch(/^PrivateKey = [A-Za-z0-9+/]{43}=$/m);
  expect(text).toMatch(/^\[Peer\]$/m);
  expect(text).toMatch(/^Endpoint = \S+:\d+$/m);
});

test('an API key works as a bearer until it is revoked', async ({ page, baseURL }) => {
  const base = baseURL ?? '';
  await loginUi(page, 'teacher');
  await openProfileAction(page, 'createApiKey');
  await page.getByRole('dialog').locator('button[type=submit]').click();
  const shown = page.getByRole('dialog').getByTestId('copy-value');
  await expect(shown).toBeVisible();
  const key = (await shown.textContent())?.trim() ?? '';
  expect(key).toMatch(/^vdik_/);
  await page.getByTestId('action-result-close').click();

  const withKey = await apiAs(base, key);
  const me = await withKey.get('/api/v3/user');
  expect(me.status()).toBe(200);
  expect(((await me.json()) as { username: string }).username).toBe('teacher');

  await openProfileAction(page, 'revokeApiKey');
  await page.getByTestId('confirm-action').click();
  await expect(page.getByRole('dialog')).toBeHidden();
  expect((await withKey.get('/api/v3/user')).status()).toBe(401);
});

test('export and import move the desktops to the new account', async ({
  page,
  browser,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const base = baseURL ?? '';
  const origin = await apiAs(base, await apiToken(base, 'student13'));
  const name = `e2e-moving-${Date.now()}`;
  const created = await origin.post('/api/v3/persistent_desktop', {
    data: { template_id: 'demo-template', name },
  });
  expect(created.ok()).toBe(true);
  await expect
    .poll(
      async () =>
        (
          (await (await origin.get('/api/v3/user/desktops')).json()) as {
            name: string;
            state: string;
          }[]
        ).find((d) => d.name === name)?.state,
      { timeout: 60_000 },
    )
    .toBe('stopped');

  await loginUi(page, 'student13');
  await openProfileAction(page, 'exportMigration');
  await page.getByTestId('confirm-action').click();
  const shown = page.getByRole('dialog').getByTestId('copy-value');
  await expect(shown).toBeVisible();
  const code = (await shown.textContent())?.trim() ?? '';
  expect(code.split('.')).toHaveLength(3);

  const targetContext = await browser.newContext();
  const target = await targetContext.newPage();
  await loginUi(target, 'student14');
  await openProfileAction(target, 'importMigration');
  await target.getByRole('dialog').getByLabel('Migration code').fill(code);
  await target.getByRole('dialog').locator('button[type=submit]').click();
  await expect(target).toHaveURL(/\/migration$/);
  await expect(target.getByText(name)).toBeVisible();
  await target.locator('button[type=submit]').click();
  await expect(target).toHaveURL(/\/desktops$/, { timeout: 30_000 });
  await expect(target.getByText(name)).toBeVisible();
  await targetContext.close();

  // The origin account is disabled once its desktops moved.
  expect(await loginStatus(base, 'student13', DEMO_PASSWORD)).toBe(403);
});
