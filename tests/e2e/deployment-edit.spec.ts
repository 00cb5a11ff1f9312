/**
 * The deployment edit form against the real server: the teacher's deployment (made through the
 * API with its own hardware, viewers and credentials) opens in the generated edit form with those
 * values, one hardware value changed and saved leaves every other setting as it was.
 */
import { expect, test } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';

interface DeploymentInfo {
  name: string;
  description?: string | null;
  hardware: Record<string, unknown>;
  guest_properties: {
    credentials?: { username?: string; password?: string };
    viewers?: Record<string, unknown>;
    fullscreen?: boolean;
  };
}

/** The user id a login token names. */
function userIdOf(token: string): string {
  const payload = token.split('.')[1] ?? '';
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {
    data: { user_id: string };
  };
  return claims.data.user_id;
}

test('the deployment edit form opens with the stored settings and saves one change only', async ({
  page,
  baseURL,
}) => {
  test.setTimeout(180_000);
  const base = baseURL ?? '';
  const token = await apiToken(base, 'teacher');
  const api = await apiAs(base, token);
  const name = `Edit check ${Date.now()}`;
  const created = await api.post('/api/v3/deployments', {
    data: {
      name,
      desktop_name: 'Edit check desktop',
      template_id: 'demo-template',
      allowed: { users: [userIdOf(token)] },
      hardware: { memory: 1, vcpus: 2 },
      guest_properties: {
        fullscreen: false,
        credentials: { username: 'student', password: 'class-secret' },
        viewers: { browser_vnc: { options: null }, file_spice: { options: null } },
      },
      visible: false,
    },
  });
  expect(created.status(), await created.text()).toBe(200);
  const { id } = (await created.json()) as { id: string };
  const infoOf = async (): Promise<DeploymentInfo> => {
    const res = await api.get(`/api/v3/deployment/info/${id}`);
    expect(res.status()).toBe(200);
    return (await res.json()) as DeploymentInfo;
  };
  const before = await infoOf();
  expect(before.hardware).toMatchObject({ vcpus: 2, memory: 1 });

  await loginUi(page, 'teacher');
  await page.goto(`/deployment/${id}/edit`);
  const vcpus = page.getByRole('textbox', { name: 'vCPUs' });
  await expect(vcpus).toHaveValue('2', { timeout: 20_000 });
  await expect(page.getByRole('textbox', { name: 'Memory' })).toHaveValue('1');
  await expect(page.getByRole('textbox', { name: 'Name', exact: true })).toHaveValue(name);
  await expect(page.getByRole('textbox', { name: 'Username' })).toHaveValue('student');
  await expect(page.getByRole('checkbox', { name: 'Browser VNC' })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: 'SPICE file' })).toBeChecked();

  await vcpus.fill('3');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await expect(page).toHaveURL(/\/deployments$/, { timeout: 30_000 });

  const after = await infoOf();
  // "No GPU" may be stored explicitly once the form has saved the hardware.
  const noGpu = { vgpus: null };
  const { reservables, ...hardware } = after.hardware;
  const { reservables: reservablesBefore, ...hardwareBefore } = before.hardware;
  expect(hardware).toEqual({ ...hardwareBefore, vcpus: 3 });
  expect(reservables ?? noGpu).toEqual(reservablesBefore ?? noGpu);
  expect(after.guest_properties).toEqual(before.guest_properties);
  expect(after.name).toBe(before.name);
  expect(after.description ?? null).toBe(before.description ?? null);

  expect((await api.delete(`/api/v3/deployments/${id}/permanent`)).status()).toBe(200);
  await api.dispose();
});
