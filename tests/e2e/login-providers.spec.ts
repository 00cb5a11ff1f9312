/**
 * LDAP sign-in through the real login page: a private slapd (tests/support/slapd.ts) is the
 * directory of the demo category, mapped to its Class A group. A student the portal has never
 * seen types their directory username and password into the form, accepts the category's
 * disclaimer and lands on the desktops as a user of Class A. OpenID Connect sign-in through the
 * login page's button: a real provider (oidc-provider, tests/support/oidc-idp.ts) on loopback is
 * the demo category's; a person the portal has never seen signs in on the provider's own page and
 * comes back to the desktops; their logout ends the provider's session too, and a refused sign-in
 * comes back to the login page with its message. SAML sign-in the same way: a real identity
 * provider (samlify, tests/support/saml-idp.ts) on loopback, whose page posts the signed answer
 * back to the portal; an attribute whose values match the regexes of two categories' providers
 * shows the category choice (the same choice by an OpenID Connect claim is proven by the server's
 * oidc-login test). The directory and the providers are removed afterwards, so the other specs
 * of the worker's portal see the form as before.
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
import {
  OIDC_ACCOUNTS,
  OIDC_CLIENT_ID,
  OIDC_CLIENT_SECRET,
  startOidcIdp,
  type OidcIdp,
} from '../support/oidc-idp';
import { SAML_ACCOUNTS, startSamlIdp, type SamlIdp } from '../support/saml-idp';

let slapd: Slapd | undefined;
let directoryId: string | undefined;
let idp: OidcIdp | undefined;
let oidcProviderId: string | undefined;
let samlIdp: SamlIdp | undefined;
let samlProviderId: string | undefined;
let siblingProviderId: string | undefined;

test.afterAll(async ({ portal }) => {
  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  if (directoryId) await admin.delete(`/api/v3/admin/ldap-providers/${directoryId}`);
  if (oidcProviderId) await admin.delete(`/api/v3/admin/oidc-providers/${oidcProviderId}`);
  if (samlProviderId) await admin.delete(`/api/v3/admin/saml-providers/${samlProviderId}`);
  if (siblingProviderId) await admin.delete(`/api/v3/admin/saml-providers/${siblingProviderId}`);
  await admin.dispose();
  await slapd?.stop();
  await idp?.stop();
  await samlIdp?.stop();
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

test('a person signs in with OpenID Connect through the login page button', async ({
  page,
  portal,
}) => {
  idp = await startOidcIdp([new URL('/authentication/callback', portal.url).toString()]);
  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const created = await admin.post('/api/v3/admin/oidc-providers', {
    data: {
      category_id: 'default',
      label: 'School account',
      issuer: idp.issuer,
      client_id: OIDC_CLIENT_ID,
      client_secret: OIDC_CLIENT_SECRET,
      group_id: 'default-class-a',
      role: 'user',
    },
  });
  expect(created.status(), await created.text()).toBe(200);
  oidcProviderId = ((await created.json()) as { id: string }).id;
  await admin.dispose();

  const [person] = OIDC_ACCOUNTS;
  if (!person) throw new Error('no account at the test provider');
  await page.goto('/login');
  await page.getByTestId('login-oidc').click();
  // the provider's own sign-in page
  await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/interaction/`));
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // New accounts of the demo category accept its disclaimer first.
  await expect(page).toHaveURL(/\/disclaimer$/, { timeout: 15_000 });
  await page.getByRole('button', { name: 'Accept' }).click();
  await expect(page).toHaveURL(/\/desktops$/);

  const token = (await page.context().cookies()).find((c) => c.name === 'vdiportal_session');
  const me = await apiAs(portal.url, decodeURIComponent(token?.value ?? ''));
  const profile = await me.get('/api/v3/user');
  expect(await profile.json()).toMatchObject({
    username: person.username,
    name: person.name,
    provider: 'oidc',
    group_name: 'Class A',
  });
  await me.dispose();
});

test('a person signs in with SAML through the login page button', async ({ page, portal }) => {
  samlIdp = await startSamlIdp();
  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const created = await admin.post('/api/v3/admin/saml-providers', {
    data: {
      category_id: 'default',
      label: 'College account',
      idp_metadata_url: samlIdp.metadataUrl,
      sp_entity_id: new URL('/saml', portal.url).toString(),
      attr_username: 'uid',
      group_id: 'default-class-a',
      role: 'user',
    },
  });
  expect(created.status(), await created.text()).toBe(200);
  samlProviderId = ((await created.json()) as { id: string }).id;
  const metadata = await admin.get(`/authentication/saml/metadata?provider=${samlProviderId}`);
  samlIdp.trust(await metadata.text());
  await admin.dispose();

  const [person] = SAML_ACCOUNTS;
  if (!person) throw new Error('no account at the test identity provider');
  await page.goto('/login');
  await page.getByTestId('login-saml').click();
  // the identity provider's own sign-in page
  await expect(page).toHaveURL(new RegExp(`^${samlIdp.url}/sso\\?SAMLRequest=`));
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // its page posts the answer to the portal; new accounts of the demo category accept its
  // disclaimer first.
  await expect(page).toHaveURL(/\/disclaimer$/, { timeout: 15_000 });
  await page.getByRole('button', { name: 'Accept' }).click();
  await expect(page).toHaveURL(/\/desktops$/);

  const token = (await page.context().cookies()).find((c) => c.name === 'vdiportal_session');
  const me = await apiAs(portal.url, decodeURIComponent(token?.value ?? ''));
  const profile = await me.get('/api/v3/user');
  expect(await profile.json()).toMatchObject({
    username: person.username,
    name: person.name,
    provider: 'saml',
    group_name: 'Class A',
  });
  await me.dispose();
});

test('an OpenID Connect person logs out through the provider, and a SAML attribute matching two categories asks which', async ({
  page,
  portal,
}) => {
  if (!idp || !oidcProviderId) throw new Error('the sign-in test above configures the provider');
  if (!samlIdp || !samlProviderId)
    throw new Error('the SAML sign-in test above configures the provider');
  const [person] = OIDC_ACCOUNTS;
  if (!person) throw new Error('no account at the test provider');
  await page.goto('/login');
  await page.getByTestId('login-oidc').click();
  await page.getByLabel('Username').fill(person.username);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(/\/desktops$/, { timeout: 15_000 });
  // the logout goes through the provider's end-session page and back to the login page
  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(new RegExp(`^${idp.issuer}/session/end`));
  await page.getByRole('button', { name: 'Yes, sign me out' }).click();
  await expect(page).toHaveURL(/\/login$/);

  // a refused sign-in comes back to the login page, which says why
  await page.goto('/authentication/callback?state=not-a-state');
  await expect(page).toHaveURL(/\/login\?error=oidc_state_invalid$/);
  await expect(page.getByTestId('login-error')).toHaveText(
    'This sign-in has expired or was already used. Start again from the login page.',
  );

  // the identity provider's `groups` attribute names both the demo category and the second school
  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const own = await admin.put(`/api/v3/admin/saml-providers/${samlProviderId}`, {
    data: { category_attribute: 'groups', category_regex: '^college-lab$' },
  });
  expect(own.status(), await own.text()).toBe(200);
  // the second school's provider (another spec of this portal may have made a disabled one)
  const sso = {
    label: 'Second school account',
    enabled: true,
    idp_metadata_url: samlIdp.metadataUrl,
    sp_entity_id: new URL('/saml', portal.url).toString(),
    category_regex: '^cn=College Staff,',
    group_id: 'school2-default',
    role: 'user',
  };
  const listed = (await (await admin.get('/api/v3/admin/saml-providers')).json()) as {
    id: string;
    category_id: string;
  }[];
  const made = listed.find((p) => p.category_id === 'school2');
  const sibling = made
    ? await admin.put(`/api/v3/admin/saml-providers/${made.id}`, { data: sso })
    : await admin.post('/api/v3/admin/saml-providers', {
        data: { ...sso, category_id: 'school2' },
      });
  expect(sibling.status(), await sibling.text()).toBe(200);
  siblingProviderId = made?.id ?? ((await sibling.json()) as { id: string }).id;
  await admin.dispose();
  const [samlPerson] = SAML_ACCOUNTS;
  if (!samlPerson) throw new Error('no account at the test identity provider');
  await page.goto('/login');
  await page.getByTestId('login-saml').click();
  await page.getByLabel('Username').fill(samlPerson.username);
  await page.getByLabel('Password').fill(samlPerson.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Select a category' })).toBeVisible({
    timeout: 15_000,
  });
  await page.getByRole('button', { name: 'Second school' }).click();
  await expect(page).toHaveURL(/\/(desktops|disclaimer)$/, { timeout: 15_000 });
  if (page.url().endsWith('/disclaimer'))
    await page.getByRole('button', { name: 'Accept' }).click();
  await expect(page).toHaveURL(/\/desktops$/);
  const token = (await page.context().cookies()).find((c) => c.name === 'vdiportal_session');
  const me = await apiAs(portal.url, decodeURIComponent(token?.value ?? ''));
  expect(await (await me.get('/api/v3/user')).json()).toMatchObject({
    username: samlPerson.username,
    provider: 'saml',
    category_name: 'Second school',
  });
  await me.dispose();
});
