/**
 * The Hypervisors administration, generated from the schema: the admin finds the seeded host
 * local in the list, adds a libvirt host through the generated form (its SSH key file never shown
 * back), and deletes it from the row's menu. No VM is started.
 */
import { randomUUID } from 'node:crypto';
import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';

test('the admin adds a libvirt host in the generated form and deletes it; local stays', async ({
  page,
  portal,
}) => {
  const name = `e2e-${randomUUID().slice(0, 6)}`;
  const key = `/etc/vdi/keys/${name}`;
  await loginUi(page, 'admin');
  await page.getByRole('link', { name: 'Hypervisors' }).click();
  await expect(page).toHaveURL(/\/admin\/hypervisors$/);
  await expect(page.getByTestId('record').filter({ hasText: 'local' }).first()).toBeVisible();

  await page.getByTestId('resource-create').click();
  await page.getByRole('textbox', { name: /^Name/ }).fill(name);
  await page.getByRole('textbox', { name: /^Libvirt URI/ }).fill('qemu+ssh://vdi@192.0.2.7/system');
  await page.getByLabel(/^SSH key file/).fill(key);
  await page.getByRole('textbox', { name: /^vCPUs/ }).fill('8');
  await page.getByRole('textbox', { name: /^Memory \(MiB\)/ }).fill('16384');
  await page.getByRole('button', { name: 'Create', exact: true }).click();
  await expect(page).toHaveURL(/\/admin\/hypervisors$/);
  const row = page.getByTestId('record').filter({ hasText: name });
  await expect(row).toContainText('16,384');
  await expect(page.locator('body')).not.toContainText(key);

  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const shown = await admin.get(`/api/v3/admin/hypervisors/${name}`);
  expect(await shown.json()).toMatchObject({ ssh_key_set: true, vcpus: 8, memory_mib: 16384 });
  expect(await shown.text()).not.toContain(key);

  // Deleted from the row's menu, after a confirmation (the admin lists have no live events: the
  // list shows it once read again).
  await row.getByTestId('record-more').click();
  await page.locator('[data-action="delete"]').click();
  await page.getByTestId('confirm-action').click();
  await expect
    .poll(async () => (await admin.get(`/api/v3/admin/hypervisors/${name}`)).status())
    .toBe(404);
  await admin.dispose();
  await page.reload();
  await expect(page.getByTestId('record').filter({ hasText: 'local' }).first()).toBeVisible();
  await expect(row).toHaveCount(0);
});
