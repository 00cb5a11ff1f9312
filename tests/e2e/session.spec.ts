import { expect, test } from './fixtures';
import { loginUi } from './helpers';

test('the renew prompt and then the expired-session modal appear', async ({ page }) => {
  await page.clock.install();
  await loginUi(page);
  await expect(page.getByTestId('record').first()).toBeVisible();
  const config = await page.evaluate(async () => {
    const token = decodeURIComponent(
      document.cookie.split('vdiportal_session=')[1]?.split(';')[0] ?? '',
    );
    const response = await fetch('/api/v3/user/config', {
      headers: { Authorization: `Bearer ${token}` },
    });
    return (await response.json()) as { session: { max_renew_time: number; max_time: number } };
  });
  const end = Math.min(config.session.max_renew_time, config.session.max_time) * 1000;
  const now = await page.evaluate(() => Date.now());

  await page.clock.fastForward(Math.max(0, end - now - 300_000) + 1000);
  const modal = page.getByRole('dialog');
  await expect(modal).toBeVisible();
  await expect(modal).toContainText(/about to expire/i);

  await page.clock.fastForward(300_000);
  await expect(modal).toContainText(/session has expired/i);
  await modal.getByRole('button', { name: /log out/i }).click();
  await expect(page).toHaveURL(/\/login$/);
});

test('a session cookie replaced by an expired token that cannot be renewed ends on the login page', async ({
  page,
  context,
}) => {
  await loginUi(page);
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const payload = Buffer.from(
    JSON.stringify({
      kid: 'isardvdi',
      session_id: 'gone',
      exp: Math.floor(Date.now() / 1000) - 60,
      data: { role_id: 'user' },
    }),
  ).toString('base64url');
  await context.addCookies([
    {
      name: 'vdiportal_session',
      value: `${header}.${payload}.invalid`,
      url: page.url(),
      sameSite: 'Strict',
    },
  ]);
  await page.goto('/desktops');
  await expect(page).toHaveURL(/\/login$/);
});
