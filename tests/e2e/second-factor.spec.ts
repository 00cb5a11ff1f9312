/**
 * A second factor through the real pages.
 * - Required by policy: an admin makes a category whose account policy requires one; its user
 *   logs in, is sent to the enrolment page, types the code an authenticator app would show for
 *   the secret on the page (computed here, RFC 6238), keeps the recovery codes shown once, lands
 *   on the desktops, logs out, and is asked for a code at the next login before the desktops;
 *   five wrong codes then lock the step.
 * - A passkey: with Chromium's virtual authenticator (CDP), a user adds a passkey from the
 *   profile (its first second factor: the recovery codes are shown once), logs out, and logs in
 *   with the password and the passkey; a user whose category requires a second factor enrols a
 *   passkey at the login instead of an app, keeps the recovery codes, and lands on the desktops.
 */
import { createHmac, randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { expect, test, type Portal } from './fixtures';
import { apiAs, apiToken } from './helpers';

/** The 6-digit TOTP code (HMAC-SHA-1, 30 s steps) of a base32 secret at a moment. */
function totp(secret: string, atMs: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret.replace(/=+$/, ''))
    bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from((bits.match(/.{8}/g) ?? []).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(atMs / 30_000)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = (mac[mac.length - 1] ?? 0) & 0x0f;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

interface Account {
  category: string;
  username: string;
  password: string;
}

/** A user of a new category (whose policy requires a second factor when `required`). */
async function newAccount(portal: Portal, prefix: string, required: boolean): Promise<Account> {
  const tag = randomUUID().slice(0, 6);
  const account = {
    category: `Two factor ${tag}`,
    username: `${prefix}-${tag}`,
    password: `Pass-${tag}-Secret!9`,
  };
  const admin = await apiAs(portal.url, await apiToken(portal.url, 'admin'));
  const category = await admin.post('/api/v3/admin/categories', {
    data: { name: account.category },
  });
  expect(category.status()).toBe(200);
  const categoryId = ((await category.json()) as { id: string }).id;
  const group = await admin.post('/api/v3/admin/groups', {
    data: { name: `Pupils ${tag}`, category: categoryId },
  });
  const groupId = ((await group.json()) as { id: string }).id;
  const user = await admin.post('/api/v3/admin/users', {
    data: {
      username: account.username,
      name: 'Two Factor Pupil',
      role: 'user',
      category: categoryId,
      group: groupId,
      password: account.password,
      password_reset_required: false,
    },
  });
  expect(user.status()).toBe(200);
  if (required) {
    const policy = await admin.put('/api/v3/admin/settings/second-factor', {
      data: { category: categoryId, role: 'all', required: true },
    });
    expect(policy.status()).toBe(200);
  }
  await admin.dispose();
  return account;
}

/** The login form with the account's category, username and password. */
async function logIn(page: Page, account: Account): Promise<void> {
  await page
    .getByRole('combobox', { name: 'Category', exact: true })
    .selectOption({ label: account.category });
  await page.locator('input[name=username]').fill(account.username);
  await page.locator('input[name=password]').fill(account.password);
  await page.getByTestId('login-submit').click();
}

test('a user whose category requires a second factor enrols, then is asked for a code', async ({
  page,
  portal,
}) => {
  const account = await newAccount(portal, 'otp', true);
  await page.goto('/login');
  await logIn(page, account);
  await expect(page).toHaveURL(/\/login\/second-factor\/enrol$/);
  const secret = (await page.getByTestId('copy-value').first().textContent()) ?? '';
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  await expect(page.getByTestId('copy-value').nth(1)).toContainText(`otpauth://totp/`);
  await page.getByRole('textbox', { name: 'Code', exact: true }).fill(totp(secret, Date.now()));
  await page.getByRole('button', { name: 'Turn on' }).click();
  // The ten recovery codes, shown once, then on to the desktops.
  await expect(page.getByTestId('form-outcome').getByTestId('copy-value')).toHaveText(
    /^([A-Z2-7]{5}-[A-Z2-7]{5}\n?){10}$/,
  );
  await page.getByTestId('form-continue').click();
  await expect(page).toHaveURL(/\/desktops$/);

  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
  await logIn(page, account);
  await expect(page).toHaveURL(/\/login\/second-factor$/);
  // The code of the next step: the current one was used by the enrolment.
  await page
    .getByRole('textbox', { name: 'Code', exact: true })
    .fill(totp(secret, Date.now() + 30_000));
  await page.getByRole('button', { name: 'Continue' }).click();
  await expect(page).toHaveURL(/\/desktops$/);

  // Five wrong codes lock the step: the sixth answer is a refusal, whatever the code.
  await page.getByTestId('logout').click();
  await logIn(page, account);
  await expect(page).toHaveURL(/\/login\/second-factor$/);
  const valid = new Set(
    [-30_000, 0, 30_000, 60_000].map((skew) => totp(secret, Date.now() + skew)),
  );
  const wrong = ['000000', '111111', '222222'].find((code) => !valid.has(code)) ?? '333333';
  const submit = async (code: string) => {
    await page.getByRole('textbox', { name: 'Code', exact: true }).fill(code);
    const answer = page.waitForResponse(
      (res) => res.request().method() === 'POST' && res.url().includes('second-factor'),
    );
    await page.getByRole('button', { name: 'Continue' }).click();
    return (await answer).status();
  };
  for (let attempt = 1; attempt <= 5; attempt++) {
    expect(await submit(wrong), `wrong code ${attempt}`).toBe(400);
    await expect(page.getByText('The code is not valid', { exact: false }).first()).toBeVisible();
  }
  expect(await submit(totp(secret, Date.now() + 60_000))).toBe(429);
  await expect(page.getByText(/Too many/).first()).toBeVisible();
  await expect(page).toHaveURL(/\/login\/second-factor$/);
});

test('a user adds a passkey from the profile, then logs in with the password and the passkey', async ({
  page,
  portal,
}) => {
  const account = await newAccount(portal, 'pk', false);
  // WebAuthn takes a domain, not an IP address, as its relying party: the page uses the portal's
  // loopback name (an origin the portal admits).
  const base = portal.url.replace('127.0.0.1', 'localhost');
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  });
  await page.goto(`${base}/login`);
  await logIn(page, account);
  await expect(page).toHaveURL(/\/desktops$/);

  await page.goto(`${base}/profile`);
  await page.getByRole('link', { name: 'Manage passkeys' }).click();
  await expect(page).toHaveURL(/\/profile\/passkeys$/);
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.getByTestId('passkey-create').click();
  // the first second factor's ten recovery codes, shown once
  await expect(page.getByTestId('passkey-recovery-codes').getByTestId('copy-value')).toHaveText(
    /^([A-Z2-7]{5}-[A-Z2-7]{5}\n?){10}$/,
  );
  await page.getByTestId('passkey-codes-done').click();
  await expect(page.getByRole('cell', { name: 'My passkey', exact: true })).toBeVisible();

  await page.getByTestId('logout').click();
  await expect(page).toHaveURL(/\/login$/);
  await logIn(page, account);
  await expect(page).toHaveURL(/\/login\/second-factor$/);
  await page.getByTestId('use-passkey').click();
  await expect(page).toHaveURL(/\/desktops$/);

  // A user whose category requires a second factor enrols a passkey at the login instead.
  const required = await newAccount(portal, 'pk-req', true);
  await page.getByTestId('logout').click();
  await logIn(page, required);
  await expect(page).toHaveURL(/\/login\/second-factor\/enrol$/);
  await page.getByTestId('enrol-passkey').click();
  await expect(page.getByTestId('passkey-enrolment-done').getByTestId('copy-value')).toHaveText(
    /^([A-Z2-7]{5}-[A-Z2-7]{5}\n?){10}$/,
  );
  await page.getByTestId('form-continue').click();
  await expect(page).toHaveURL(/\/desktops$/);
});
