/**
 * The administration area, generated from the schemas: the admin creates a group and a user in
 * the UI and the user logs in; a manager of another category does not see that user; a CSV of 200
 * users imports with its one bad row reported; and the role-visibility screen changes what a
 * logged-in user sees, live, and what the API answers them.
 */
import { randomUUID } from 'node:crypto';
import { type APIRequestContext, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiAs, apiToken, DEMO_PASSWORD, loginUi } from './helpers';

/** Picks an option of a Mantine select by the select's label. */
async function choose(page: Page, label: string, option: string | RegExp): Promise<void> {
  await page.getByRole('combobox', { name: label, exact: true }).click();
  await page.getByRole('listbox').getByRole('option', { name: option, exact: true }).click();
}

/** The usernames the caller's admin user list holds. */
async function listedUsernames(api: APIRequestContext): Promise<string[]> {
  const res = await api.get('/api/v3/admin/users');
  expect(res.status()).toBe(200);
  return ((await res.json()) as { username: string }[]).map((u) => u.username);
}

/** Logs in through the login page in a category other than the default one. */
async function loginInCategory(page: Page, username: string, category: string): Promise<void> {
  await page.goto('/login');
  // The login page's category is a native select.
  await page
    .getByRole('combobox', { name: 'Category', exact: true })
    .selectOption({ label: category });
  await page.locator('input[name=username]').fill(username);
  await page.locator('input[name=password]').fill(DEMO_PASSWORD);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/desktops$/);
}

test('the admin creates a group and a user in the UI; the user logs in; another category’s manager does not see them', async ({
  page,
  browser,
  baseURL,
}) => {
  const base = baseURL ?? '';
  const tag = randomUUID().slice(0, 6);
  const group = `E2E class ${tag}`;
  const username = `e2e-${tag}`;
  const password = `Pw-${tag}-2026x`;

  await loginUi(page, 'admin');
  await page.getByRole('link', { name: 'Groups' }).click();
  await expect(page).toHaveURL(/\/admin\/groups$/);
  // The URL changes at the click, the screen once its chunk has loaded: until then the previous
  // screen, with a "New" button of its own, is still the one shown.
  await expect(page.getByRole('heading', { level: 1, name: 'Groups' })).toBeVisible();
  await page.getByTestId('resource-create').click();
  await page.getByRole('textbox', { name: /^Name/ }).fill(group);
  await choose(page, 'Category', 'Default');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/groups$/);
  // Back on the list, the keyboard focus is on the new group's row, and a status names it.
  await expect(page.locator('[data-testid="record"]:focus')).toContainText(group);
  await expect(page.getByTestId('list-announcement')).toContainText(group);
  await page.getByTestId('resource-filter').fill(group);
  await expect(page.getByTestId('record')).toHaveCount(1);

  await page.getByRole('link', { name: 'Users' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Users' })).toBeVisible();
  await page.getByTestId('resource-create').click();
  await page.getByRole('textbox', { name: /^Username/ }).fill(username);
  await page.getByRole('textbox', { name: /^Name/ }).fill(`E2E ${tag}`);
  await choose(page, 'Role', 'User');
  await choose(page, 'Main group', group);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/users$/);
  await page.getByTestId('resource-filter').fill(username);
  await expect(page.getByTestId('record')).toHaveCount(1);

  // The new account logs in, accepts the demo category's disclaimer and sees the portal.
  const fresh = await browser.newContext();
  const userPage = await fresh.newPage();
  await userPage.goto('/login');
  await userPage.locator('input[name=username]').fill(username);
  await userPage.locator('input[name=password]').fill(password);
  await userPage.getByTestId('login-submit').click();
  await expect(userPage).toHaveURL(/\/disclaimer$/);
  await userPage.getByRole('button', { name: 'Accept' }).click();
  await expect(userPage).toHaveURL(/\/desktops$/);
  await expect(userPage.getByRole('link', { name: 'Desktops' })).toBeVisible();
  await fresh.close();

  // The audit log has both writes, with who made them.
  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByTestId('resource-filter').fill(username);
  await expect(page.getByTestId('record').first()).toContainText('adminUsers.create');

  // The manager of the second school sees neither, in the UI nor through the API.
  const other = await browser.newContext();
  const managerPage = await other.newPage();
  await loginInCategory(managerPage, 'manager2', 'Second school');
  await managerPage.getByRole('link', { name: 'Users' }).click();
  await expect(managerPage).toHaveURL(/\/admin\/users$/);
  await expect(managerPage.getByTestId('record').first()).toBeVisible();
  await managerPage.getByTestId('resource-filter').fill(username);
  await expect(managerPage.getByTestId('record')).toHaveCount(0);
  await other.close();
  const manager2 = await apiAs(base, await apiToken(base, 'manager2', DEMO_PASSWORD, 'school2'));
  expect(await listedUsernames(manager2)).not.toContain(username);
  const admin = await apiAs(base, await apiToken(base, 'admin'));
  const created = (
    (await (await admin.get('/api/v3/admin/users')).json()) as {
      id: string;
      username: string;
    }[]
  ).find((u) => u.username === username);
  expect((await manager2.get(`/api/v3/admin/users/${created?.id ?? ''}`)).status()).toBe(404);
  expect(
    (
      await manager2.put(`/api/v3/admin/users/${created?.id ?? ''}`, { data: { name: 'x' } })
    ).status(),
  ).toBe(403);
});

test('a CSV of 200 users imports with its one bad row reported and the other 199 created', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const tag = randomUUID().slice(0, 6);
  const rows = Array.from({ length: 200 }, (_, i) => {
    const n = String(i + 1).padStart(3, '0');
    // Row 57 names a role that does not exist.
    const role = i === 56 ? 'superuser' : 'user';
    return `csv-${tag}-${n},Pupil ${n},csv-${tag}-${n}@example.org,${role},default-users,Pw-${tag}-2026x`;
  });
  // (Their names do not match the "us" other tests search users by.)
  const csv = ['username,name,email,role,group,password', ...rows].join('\n');

  await loginUi(page, 'admin');
  await page.goto('/admin/users');
  await page.locator('[data-action="importCsv"]').click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('textbox', { name: /^CSV/ }).fill(csv);
  await dialog.locator('button[type="submit"]').click();
  // The check reports the bad line (line 58: the header is line 1) and writes nothing.
  await expect(dialog).toContainText(`csv-${tag}-057`);
  await expect(dialog).toContainText('58');

  const base = baseURL ?? '';
  const admin = await apiAs(base, await apiToken(base, 'admin'));
  expect((await listedUsernames(admin)).filter((u) => u.startsWith(`csv-${tag}-`))).toHaveLength(0);

  // Without "check only" the 199 good lines are written.
  await dialog.getByRole('button', { name: /close/i }).first().click();
  await page.locator('[data-action="importCsv"]').click();
  const again = page.getByRole('dialog');
  await again.getByRole('textbox', { name: /^CSV/ }).fill(csv);
  await again.getByRole('switch', { name: /Check only/ }).click();
  await again.locator('button[type="submit"]').click();
  // The answer's count, once the import has written (the CSV in the dialog holds "199" too).
  await expect(again.getByTestId('action-result').locator('[data-field="created"]')).toContainText(
    '199',
    { timeout: 60_000 },
  );
  await expect
    .poll(
      async () => (await listedUsernames(admin)).filter((u) => u.startsWith(`csv-${tag}-`)).length,
    )
    .toBe(199);
});

test('role visibility: the admin hides the deployments menu and the description of desktops from users, live', async ({
  page,
  browser,
  baseURL,
}) => {
  const base = baseURL ?? '';
  const user = await apiAs(base, await apiToken(base, 'user'));
  const described = async () =>
    ((await (await user.get('/api/v3/user/desktops')).json()) as { description?: unknown }[]).some(
      (d) => 'description' in d,
    );
  expect(await described()).toBe(true);

  // A user logged in beforehand, in their own browser.
  const userContext = await browser.newContext();
  const userPage = await userContext.newPage();
  await loginUi(userPage, 'user');
  const deploymentsLink = userPage.getByRole('link', { name: 'Deployments' });
  await expect(deploymentsLink).toHaveCount(0);
  const descriptionOnCards = userPage.getByText('A desktop from the demo template');
  await expect(descriptionOnCards.first()).toBeVisible();

  await loginUi(page, 'admin');
  await page.getByRole('link', { name: 'Role visibility' }).click();
  const save = async (change: () => Promise<void>) => {
    await page.locator('[data-action="edit"]').click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.locator('[data-widget="roleMatrix"]')).toBeVisible();
    await change();
    await dialog.locator('button[type="submit"]').click();
    await expect(dialog).toBeHidden();
  };
  const open = async (resource: string) => {
    const item = page.getByRole('dialog').locator(`[data-resource="${resource}"]`);
    await item.getByRole('button').first().click();
    return item;
  };

  // Users are given deployments: the menu entry appears for the logged-in user without a reload.
  await save(async () => {
    const deployments = await open('deployments');
    for (const set of ['See (menu and screens)', 'Manage'])
      await deployments.getByRole('checkbox', { name: `${set}: User`, exact: true }).check();
  });
  await expect(deploymentsLink).toBeVisible();

  // Then hidden again, with the description of desktops: both go, live.
  await save(async () => {
    const deployments = await open('deployments');
    for (const set of ['See (menu and screens)', 'Manage'])
      await deployments.getByRole('checkbox', { name: `${set}: User`, exact: true }).uncheck();
    const desktops = await open('desktops');
    await desktops.getByRole('checkbox', { name: 'Description: User', exact: true }).uncheck();
  });
  await expect(deploymentsLink).toHaveCount(0);
  await expect(descriptionOnCards).toHaveCount(0);
  expect(await described()).toBe(false);
  await userContext.close();

  // Back to the defaults for the other tests.
  await save(async () => {
    const desktops = await open('desktops');
    await desktops.getByRole('checkbox', { name: 'Description: User', exact: true }).check();
  });
  expect(await described()).toBe(true);
});
