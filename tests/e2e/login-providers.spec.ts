/**
 * LDAP sign-in through the real login page: a private slapd (tests/support/slapd.ts) is the
 * directory of the demo category, mapped to its Class A group. A student the portal has never
 * seen types their directory username and password into the form, accepts the category's
 * disclaimer and lands on the desktops as a user of Class A. The directory is removed afterwards,
 * so the other specs of the worker's portal see the form as before.
 */
import { expect, test } from './fixtures';
import { apiAs, apiToken } from './helpers';
import {
  LDAP_PEOPLE,
  LDAP_PEOPLE_LIST,
  LDAP_SERVICE_DN,
  LDAP_SERVICE_PASSWORD,
  startSlapd,
  type Slapd,
} from '../support/slapd';

let slapd: Slapd | undefined;
let directoryId: string | undefined;

test.afterAll(async ({ portal }) => {
  if (directoryId) {
    const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
    await admin.delete(`/api/v3/admin/ldap-providers/${directoryId}`);
    await admin.dispose();
  }
  await slapd?.stop();
});

test('a Class A student signs in with the directory through the login form', async ({
  page,
  portal,
}) => {
  slapd = await startSlapd();
  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const created = await admin.post('/api/v3/admin/ldap-providers', {
    data: {
      category_id: 'default',
      label: 'School directory',
      url: slapd.url,
      bind_dn: LDAP_SERVICE_DN,
      bind_password: LDAP_SERVICE_PASSWORD,
      search_base: `ou=class-a,${LDAP_PEOPLE}`,
      filter: '(uid={username})',
      group_id: 'default-class-a',
      role: 'user',
    },
  });
  expect(created.status()).toBe(200);
  directoryId = ((await created.json()) as { id: string }).id;
  await admin.dispose();

  const student = LDAP_PEOPLE_LIST.find((p) => p.ou === 'class-a');
  if (!student) throw new Error('no Class A student in the test directory');
  await page.goto('/login');
  await expect(page.getByTestId('login-ldap-hint')).toHaveText(
    'You can also sign in with your School directory account.',
  );
  await page.locator('input[name=username]').fill(student.uid);
  await page.locator('input[name=password]').fill(student.password);
  await page.getByTestId('login-submit').click();
  // New accounts of the demo category accept its disclaimer first.
  await expect(page).toHaveURL(/\/disclaimer$/, { timeout: 15_000 });
  await page.getByRole('button', { name: 'Accept' }).click();
  await expect(page).toHaveURL(/\/desktops$/);

  const token = (await page.context().cookies()).find((c) => c.name === 'vdiportal_session');
  expect(token).toBeDefined();
  const me = await apiAs(portal.url, decodeURIComponent(token?.value ?? ''));
  const profile = await me.get('/api/v3/user');
  expect(profile.status()).toBe(200);
  expect(await profile.json()).toMatchObject({
    username: student.uid,
    name: student.name,
    provider: 'ldap',
    group_name: 'Class A',
    role_name: 'User',
  });
  await me.dispose();
});
