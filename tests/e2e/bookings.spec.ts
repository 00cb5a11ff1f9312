/**
 * Bookings through the UI on the demo GPU item (profiles 2Q and 4Q, a 30-day plan for 2Q): the
 * user books a slot on the item calendar and the card shows it, a desktop that needs a booking is
 * refused a start outside one and starts with the card's start-now, a desktop whose profile has
 * no plan now changes profile and starts from the cannot-start-now modal, and the admin plans
 * availability.
 */
import { type APIRequestContext, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';

interface Plan {
  id: string;
  subitem_id: string;
}

/** The demo desktop of `advanced` that needs a booking of the Demo GPU 2Q profile. */
async function gpuDesktop(api: APIRequestContext): Promise<string> {
  const desktops = (await (await api.get('/api/v3/user/desktops')).json()) as {
    id: string;
    name: string;
  }[];
  const id = desktops.find((d) => d.name === 'GPU workstation')?.id ?? '';
  expect(id).toBeTruthy();
  return id;
}

async function pickOption(page: Page, testId: string, name: string | RegExp): Promise<void> {
  await page.getByTestId(testId).click();
  await page.getByRole('listbox').getByRole('option', { name }).click();
}

test('a booking made on the item calendar shows on the desktop card', async ({ page, baseURL }) => {
  const base = baseURL ?? '';
  const api = await apiAs(base, await apiToken(base, 'advanced'));
  const id = await gpuDesktop(api);

  await loginUi(page, 'advanced');
  await page.goto(`/booking/desktop/${id}`);
  await expect(page.getByTestId('calendar')).toBeVisible();
  await page.getByTestId('booking-new').click();
  const modal = page.getByRole('dialog');
  await expect(modal).toBeVisible();
  await page.getByTestId('booking-save').click();
  await expect(modal).toBeHidden();
  await expect(page.getByTestId('calendar-event').first()).toBeVisible();

  const range = new URLSearchParams({
    startDate: new Date(Date.now() - 3_600_000).toISOString(),
    endDate: new Date(Date.now() + 7 * 86_400_000).toISOString(),
    returnType: 'event',
  });
  const booked = (await (
    await api.get(`/api/v3/bookings/user/${id}/desktop?${range.toString()}`)
  ).json()) as {
    id?: string;
    event_type: string;
  }[];
  const booking = booked.find((event) => event.event_type === 'event');
  expect(booking?.id).toBeTruthy();

  await page.goto('/desktops');
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await expect(card.getByTestId('desktop-next-booking')).toBeVisible();
  // Outside its booking the desktop does not start: the table's plain Start is refused with the
  // rule's own message, naming when the booking begins.
  await page.getByTestId('resource-view').getByText('Table', { exact: true }).click();
  const row = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  // The row's first action starts it ("Start", or "Start and open" when a viewer is preferred).
  await row
    .getByRole('button', { name: /^Start/ })
    .first()
    .click();
  await expect(page.getByText(/This desktop is not booked until/)).toBeVisible();
  await expect(row).toContainText('Stopped');
  // The next test books from now: this later booking goes again.
  expect((await api.delete(`/api/v3/booking/event/${booking?.id ?? ''}`)).ok()).toBe(true);
});

test('a desktop that needs a booking starts with start-now, which books it', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const base = baseURL ?? '';
  const api = await apiAs(base, await apiToken(base, 'advanced'));
  const id = await gpuDesktop(api);

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
  // The booking and the start succeed: the modal closes (a refusal stays in it with its reason).
  await expect(modal).toBeHidden({ timeout: 30_000 });
  await expect(card).toHaveAttribute('data-state', /started|starting/, { timeout: 60_000 });
  await expect(card.getByTestId('desktop-next-booking')).toBeVisible();

  // Inside the booking the start gate lets it run; stop it again for the next tests.
  // A desktop still starting cannot be stopped yet: stop it once it runs.
  await expect(card).toHaveAttribute('data-state', 'started', { timeout: 60_000 });
  expect((await api.get(`/api/v3/desktop/stop/${id}`)).ok()).toBe(true);
  await expect(card).toHaveAttribute('data-state', 'stopped', { timeout: 60_000 });
});

test('cannot-start-now changes the profile of a desktop whose profile has no plan now, then starts it', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(120_000);
  const base = baseURL ?? '';
  const api = await apiAs(base, await apiToken(base, 'advanced'));
  const id = await gpuDesktop(api);
  // The 4Q profile has no plan: the desktop cannot start with it now (its bookings go with it).
  const changed = await api.put(`/api/v3/domain/reservables/${id}`, {
    data: { reservables: { vgpus: ['DEMO-GPU-4Q'] } },
  });
  expect(changed.ok()).toBe(true);

  await loginUi(page, 'advanced');
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await card.locator('[data-action="startNow"]').click();
  const modal = page.getByRole('dialog');
  await expect(modal).toBeVisible();
  await expect(modal.getByTestId('cannot-start-reason')).toContainText(/plan/i);
  await expect(page.getByTestId('cannot-start-profile')).toHaveValue(/2Q/);
  await page.getByTestId('cannot-start-submit').click();
  // The profile change, the booking and the start all succeed: the modal closes. A refusal stays
  // in it with its reason, which a failure here then shows.
  await expect(modal).toBeHidden({ timeout: 30_000 });
  await expect(card).toHaveAttribute('data-state', /started|starting/, { timeout: 60_000 });
  await expect(card.getByTestId('desktop-next-booking')).toBeVisible();
  const listed = (await (await api.get('/api/v3/user/desktops')).json()) as {
    id: string;
    reservables?: { vgpus?: string[] | null };
  }[];
  expect(listed.find((d) => d.id === id)?.reservables?.vgpus).toEqual(['DEMO-GPU-2Q']);

  // A desktop still starting cannot be stopped yet: stop it once it runs.
  await expect(card).toHaveAttribute('data-state', 'started', { timeout: 60_000 });
  expect((await api.get(`/api/v3/desktop/stop/${id}`)).ok()).toBe(true);
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
