/**
 * A class deployment through the UI, on real QEMU: the teacher creates a deployment for the
 * active students of Class A (one desktop each, plus the teacher's own; other suites sign a student
 * up to Class A and disable another, so the count is read first), the creating count goes down to 0
 * live, the detail table lists them; a student sees nothing while it is invisible, then exactly
 * their desktop once it is made visible, and it leaves their list without a reload when it is
 * made invisible again. Start all starts every desktop (the demo guest idles in HLT, so thirty-odd run
 * on two cores), stop all stops them, and the deployment goes for good with its disks.
 */
import { type Locator, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';
import { stateActions } from '../../src/generated/actions';

/** A value cell of the deployments table row (by its column's field). */
function cell(row: Locator, field: string): Locator {
  return row.locator(`[data-field="${field}"]`);
}

/**
 * Runs a deployment action: a primary one (the schema says which) from its button, which shows
 * once the record is in a state that offers it (the page follows the record live, so it may come a
 * moment after the change that offers it); the others from the "more" menu.
 */
async function action(page: Page, scope: Locator, name: string): Promise<void> {
  const declared: object | undefined = Object.entries(stateActions.deployments.actions).find(
    ([key]) => key === name,
  )?.[1];
  if (declared && 'primary' in declared && declared.primary)
    return scope.locator(`[data-action="${name}"]`).first().click();
  await scope.getByTestId('record-more').first().click();
  await page.locator(`[role="menu"] [data-action="${name}"]`).click();
}

/** How many desktops a deployment for Class A makes: its active members and the teacher's own. */
async function classADesktops(base: string): Promise<number> {
  const admin = await apiAs(base, await apiToken(base, 'admin'));
  const users = (await (await admin.get('/api/v3/admin/users')).json()) as {
    group: string;
    active: boolean;
  }[];
  await admin.dispose();
  return users.filter((user) => user.group === 'default-class-a' && user.active).length + 1;
}

test('a class deployment: create for the students of Class A, visibility live, start and stop all', async ({
  browser,
  baseURL,
}) => {
  test.setTimeout(420_000);
  const base = baseURL ?? '';
  const expected = await classADesktops(base);
  expect(expected).toBeGreaterThanOrEqual(30);
  const teacher = await browser.newPage();
  await loginUi(teacher, 'teacher');
  const name = `Class A lab ${Date.now()}`;

  // Create: template, the desktops' name and the group, through the generated form.
  await teacher.goto('/deployments/new');
  await teacher.getByRole('combobox', { name: 'Template' }).click();
  await teacher.getByRole('option', { name: 'Demo template' }).click();
  const nameBox = teacher.getByRole('textbox', { name: 'Name', exact: true });
  await expect(nameBox).toHaveValue('Demo template');
  await nameBox.fill(name);
  await teacher.getByRole('textbox', { name: 'Name of the desktops' }).fill('Lab desktop');
  await teacher.getByTestId('allowed-groups-on').check();
  await teacher.getByTestId('allowed-groups-search').click();
  await teacher.keyboard.type('Class A');
  await teacher.getByRole('option', { name: /Class A/ }).click();
  await teacher.getByRole('heading', { name: 'New deployment' }).click();
  await teacher.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(teacher).toHaveURL(/\/deployments$/, { timeout: 30_000 });

  // The list row: a desktop each, the creating count back to 0 (pushed over the socket).
  const row = teacher.locator('[data-testid="record"]', { hasText: name });
  await expect(cell(row, 'totalDesktops')).toHaveText(String(expected), { timeout: 60_000 });
  await expect(cell(row, 'creatingDesktops')).toHaveText('0', { timeout: 60_000 });
  await expect(row.getByTestId('record-visibility')).toHaveAttribute('data-value', 'false');
  const id = (await row.getAttribute('data-record-id')) ?? '';

  // Details: one row per desktop, students and teacher.
  await row.getByTestId('record-details').click();
  await expect(teacher).toHaveURL(new RegExp(`/deployment/${id}$`));
  const desktops = teacher.getByTestId('items-desktops').locator('tbody tr');
  await expect(desktops).toHaveCount(expected);
  await expect(desktops.filter({ hasText: 'Student 01' })).toHaveCount(1);

  // A student sees nothing of an invisible deployment...
  const student = await browser.newPage();
  await loginUi(student, 'student01');
  const studentCards = student.locator('[data-testid="record"]', { hasText: 'Lab desktop' });
  await expect(studentCards).toHaveCount(0);
  const token = await apiToken(base, 'student01');
  const api = await apiAs(base, token);
  const listed = async () =>
    ((await (await api.get('/api/v3/user/desktops')).json()) as { name: string }[]).filter(
      (desktop) => desktop.name === 'Lab desktop',
    ).length;
  expect(await listed()).toBe(0);

  // ...then exactly their desktop once it is visible, without a reload.
  let navigations = 0;
  student.on('framenavigated', (frame) => {
    if (frame === student.mainFrame()) navigations += 1;
  });
  const header = teacher.locator('main');
  await action(teacher, header, 'makeVisible');
  await expect(studentCards).toHaveCount(1, { timeout: 15_000 });
  expect(await listed()).toBe(1);

  // Invisible again (not stopping anything): it leaves the student's list live.
  await action(teacher, header, 'makeInvisible');
  const dialog = teacher.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Make invisible' }).click();
  await expect(dialog).toBeHidden({ timeout: 15_000 });
  await expect(studentCards).toHaveCount(0, { timeout: 15_000 });
  expect(navigations).toBe(0);
  await api.dispose();

  // Start all: every desktop of the table reaches started; then stop all.
  await action(teacher, header, 'startAll');
  const started = teacher
    .getByTestId('items-desktops')
    .locator('[data-testid="record-state"][data-value="started"]');
  await expect
    .poll(async () => started.count(), { timeout: 240_000, intervals: [2_000] })
    .toBeGreaterThanOrEqual(expected);
  // The videowall: a tile per desktop, live thumbnails of the running ones.
  await teacher.goto(`/deployment/${id}/videowall`);
  await expect(teacher.getByTestId('videowall-tile')).toHaveCount(expected, { timeout: 20_000 });
  await expect
    .poll(() => teacher.getByTestId('videowall-thumbnail').count(), { timeout: 90_000 })
    .toBeGreaterThan(10);
  await teacher.goto(`/deployment/${id}`);
  await expect(desktops).toHaveCount(expected);
  await action(teacher, header, 'stopAll');
  await teacher.getByTestId('confirm-action').click();
  // The guest ignores the power button, like GRUB: each stop ends forced after the grace time.
  const stopped = teacher
    .getByTestId('items-desktops')
    .locator('[data-testid="record-state"][data-value="stopped"]');
  await expect
    .poll(async () => stopped.count(), { timeout: 240_000, intervals: [2_000] })
    .toBe(expected);

  // Delete for good (no recycle bin): the deployment leaves the list.
  await action(teacher, header, 'delete');
  await teacher.getByTestId('confirm-permanent').check();
  await teacher.getByTestId('confirm-action').click();
  await expect(teacher).toHaveURL(/\/deployments$/, { timeout: 30_000 });
  await expect(teacher.locator('[data-testid="record"]', { hasText: name })).toHaveCount(0, {
    timeout: 30_000,
  });
});
