/**
 * Bookings through the UI on the demo GPU item (profiles 2Q and 4Q, a 30-day plan for 2Q): the
 * admin plans availability, a desktop that needs a booking is refused a start outside one, and
 * starts with the card's start-now, which books it and shows the booking on the card.
 */
import { expect, test, type Page } from '@playwright/test';
import { apiAs, apiToken, loginUi } from './helpers';

interface Plan {
  id: string;
  subitem_id: string;
}

async function pickOption(page: Page, testId: string, name: string | RegExp): Promise<void> {
  await page.getByTestId(testId).click();
  await page.getByRole('listbox').getByRole('option', { name }).click();
}

test('a desktop that needs a booking starts with start-now, which books it', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const base = baseURL ?? '';
  const api = await apiAs(base, await apiToken(base, 'advanced'));
  const desktops = (await (await api.get('/api/v3/user/desktops')).json()) as {
    id: string;
    name: string;
  }[];
  const id = desktops.find((d) => d.name === 'GPU workstation')?.id ?? '';
  expect(id).toBeTruthy();

  // Outside a booking the server refuses the start with the gate's code.
  const refused = await api.get(`/api/v3/desktop/start/${id}`);
  expect(refused.status()).toBe(428);
  expect(((await refused.json()) as { description_code: string }).description_code).toMatch(
    /^desktop_not_booked/,
  );

  await loginUi(page, 'advanced');
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await expect(card.locator('[data-action="startNow"]')).toBeVisible();
  await card.locator('[data-action="startNow"]').click();
  const modal = page.getByRole('dialog');
  await expect(modal).toBeVisible();
  await page.getByTestId('start-now-submit').click();
  await expect(card).toHaveAttribute('data-state', /started|starting/, { timeout: 60_000 });
  await expect(card.getByTestId('desktop-next-booking')).toBeVisible();

  // Inside the booking the start gate lets it run; stop it again for the next tests.
  await api.get(`/api/v3/desktop/stop/${id}`);
  await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 60_000 });
});

test('the admin plans availability of a profile on the planning page', async ({
  page,
  baseURL,
}) => {
  const base = baseURL ?? '';
  const admin = await apiAs(base, await apiToken(base, 'admin'));
  const from = new Date(Date.now() - 86_400_000).toISOString();
  const to = new Date(Date.now() + 40 * 86_400_000).toISOString();
  const plansOf4Q = async () =>
    (
      (await (
        await admin.get(
          `/api/v3/admin/reservables_planner/demo-gpu/${encodeURIComponent(from)}/${encodeURIComponent(to)}`,
        )
      ).json()) as Plan[]
    ).filter((plan) => plan.subitem_id === 'DEMO-GPU-4Q').length;
  // Plans of one item never overlap: the demo's 2Q plan (used by the start-now test before this
  // one, and any earlier 4Q plan) makes room for the 4Q plan the admin draws now.
  const all = (await (
    await admin.get(
      `/api/v3/admin/reservables_planner/demo-gpu/${encodeURIComponent(from)}/${encodeURIComponent(to)}`,
    )
  ).json()) as Plan[];
  for (const plan of all)
    expect((await admin.delete(`/api/v3/admin/reservables_planner/${plan.id}`)).ok()).toBe(true);

  await loginUi(page, 'admin');
  await page.goto('/planning');
  await expect(page.getByTestId('planning')).toBeVisible();
  await pickOption(page, 'planning-item', /Demo GPU/);
  await pickOption(page, 'planning-profile', /4Q/);
  await page.getByTestId('plan-new').click();
  const modal = page.getByRole('dialog');
  await expect(modal).toBeVisible();
  await page.getByTestId('plan-save').click();
  await expect(modal).toBeHidden();
  await expect.poll(plansOf4Q).toBe(1);
});
