// Smoke from the URL `npm start` prints: every navbar entry of every demo role opens with an h1,
// no "not built" placeholder, no API answer >= 400 (but 401 before login), no page error.
import { chromium } from '@playwright/test';
const base = process.argv[2]; const password = process.argv[3];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
let bad = 0;
for (const role of ['admin', 'manager', 'advanced', 'user']) {
  const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 1366, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror ${e.message}`));
  page.on('response', (r) => { if (r.url().includes('/api/') && r.status() >= 400) problems.push(`${r.status()} ${r.url()}`); });
  await page.goto(base);
  await page.locator('input[name=username]').fill(role);
  await page.locator('input[name=password]').fill(password);
  await page.getByRole('button', { name: /log ?in|sign in/i }).first().click();
  await page.waitForURL(/desktops/, { timeout: 20000 });
  const nav = page.getByRole('navigation', { name: /main navigation/i });
  await nav.waitFor({ timeout: 15000 });
  // open every collapsed group (Administration) so its links are in the DOM
  for (const toggle of await nav.locator('[aria-expanded="false"]').all()) await toggle.click().catch(() => undefined);
  const hrefs = (await nav.locator('a[href]').evaluateAll((as) => [...new Set(as.map((a) => a.getAttribute('href')))])).filter((h) => h && h.startsWith('/'));
  if (hrefs.length === 0) problems.push('no navbar links');
  let ok = 0;
  for (const href of hrefs) {
    await page.goto(base.replace(/\/$/, '') + href);
    const h1 = page.locator('h1').first();
    try { await h1.waitFor({ timeout: 15000 }); ok++; } catch { problems.push(`no h1 at ${href}`); }
    const text = await page.locator('main').innerText().catch(() => '');
    if (/not built|coming soon|placeholder/i.test(text)) problems.push(`placeholder at ${href}`);
  }
  console.log(`${role}: ${ok}/${hrefs.length} navbar entries with an h1; problems: ${problems.length ? problems.join(' | ') : 'none'}`);
  bad += problems.length;
  await context.close();
}
await browser.close();
process.exit(bad ? 1 : 0);
