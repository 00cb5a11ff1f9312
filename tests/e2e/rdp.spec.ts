/**
 * The browser RDP viewer end to end, against a guacd DOUBLE (tests/support/guacd-double.ts: a
 * Guacamole-protocol stand-in that checks the handshake and draws a test pattern; guacd is not
 * packaged here). This file's portal runs on a PostgreSQL of its own, so the test can write what
 * the portal cannot produce yet: desktops have no network, so the test gives a running desktop
 * an address, guest credentials and the RDP viewers in its row. Then `user` opens the desktop
 * from its card with "Browser (RDP)": the `/rdp` page connects through the portal's tunnel, the
 * canvas shows the double's four-colour pattern, and the double saw the desktop's address and
 * guest credentials. The same page without its cookie says so.
 */
import pg from 'pg';
import { test as base, expect } from './fixtures';
import { apiAs, apiToken, loginUi } from './helpers';
import { startPostgres, type PgCluster } from '../support/postgres';
import { startGuacdDouble, TEST_PATTERN, type GuacdDouble } from '../support/guacd-double';

const ADDRESS = '10.55.0.21';
const CREDENTIALS = { username: 'student', password: 'rdp-Guest-1' };

const test = base.extend<object, { database: PgCluster; guacd: GuacdDouble }>({
  database: [
    async ({ browserName: _browserName }, use) => {
      const cluster = await startPostgres();
      await use(cluster);
      cluster.stop();
    },
    { scope: 'worker' },
  ],
  guacd: [
    async ({ browserName: _browserName }, use) => {
      const double = await startGuacdDouble();
      await use(double);
      await double.stop();
    },
    { scope: 'worker' },
  ],
  portalEnv: [
    async ({ database, guacd }, use) =>
      use({
        DATABASE_URL: database.url,
        GUACD_HOST: '127.0.0.1',
        GUACD_PORT: String(guacd.port),
      }),
    { scope: 'worker' },
  ],
});

/** The colour of the RDP canvas at a point of the remote screen (its default layer). */
function pixelAt(
  page: import('@playwright/test').Page,
  x: number,
  y: number,
): Promise<number[] | null> {
  return page.evaluate(
    ([px, py]) => {
      const canvases = [
        ...document.querySelectorAll<HTMLCanvasElement>('[data-testid="rdp-screen"] canvas'),
      ];
      // The default layer: the largest canvas of the display.
      const canvas = canvases.sort((a, b) => b.width * b.height - a.width * a.height)[0];
      const data = canvas?.getContext('2d')?.getImageData(px ?? 0, py ?? 0, 1, 1).data;
      return data ? [data[0] ?? 0, data[1] ?? 0, data[2] ?? 0] : null;
    },
    [x, y],
  );
}

test('the browser RDP viewer renders the guacd double through the portal tunnel', async ({
  page,
  baseURL,
  database,
  guacd,
}) => {
  test.setTimeout(120_000);
  const base = baseURL ?? '';
  const api = await apiAs(base, await apiToken(base));

  // The /rdp page opened without the viewer cookie says it does not know the desktop.
  await page.goto('/rdp');
  await expect(page.getByTestId('rdp-viewer')).toHaveAttribute('data-status', 'cookieNotSet');
  await expect(page.getByTestId('rdp-message')).toContainText('open the desktop');

  // A running desktop (real QEMU).
  const name = `e2e-rdp-${Date.now()}`;
  const created = await api.post('/api/v3/persistent_desktop', {
    data: { template_id: 'demo-template', name, hardware: { memory: 0.5 } },
  });
  expect(created.status(), await created.text()).toBe(200);
  const { id } = (await created.json()) as { id: string };
  const stateOf = async () => {
    const list = (await (await api.get('/api/v3/user/desktops')).json()) as {
      id: string;
      state: string;
      ip?: string;
    }[];
    return list.find((d) => d.id === id);
  };
  await expect.poll(async () => (await stateOf())?.state, { timeout: 30_000 }).toBe('stopped');
  const start = await api.get(`/api/v3/desktop/start/${id}`);
  expect(start.status(), await start.text()).toBe(200);
  await expect.poll(async () => (await stateOf())?.state, { timeout: 60_000 }).toBe('started');

  // What the networks will give it: an address, guest credentials, the RDP viewers.
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(
      `UPDATE desktops SET
         runtime = runtime || jsonb_build_object('ip', $2::text),
         guest_properties = guest_properties || jsonb_build_object(
           'credentials', $3::jsonb,
           'viewers', '{"browser_vnc":{},"browser_rdp":{},"file_rdpvpn":{}}'::jsonb)
       WHERE id = $1`,
      [id, ADDRESS, JSON.stringify(CREDENTIALS)],
    );
  } finally {
    await client.end();
  }
  await expect.poll(async () => (await stateOf())?.ip, { timeout: 10_000 }).toBe(ADDRESS);

  // Open it from its card with the browser RDP viewer.
  await loginUi(page);
  await page.getByTestId('resource-filter').fill(name);
  const card = page.locator(`[data-testid="record"][data-record-id="${id}"]`);
  await expect(card).toHaveAttribute('data-state', 'started');
  await card.getByTestId('desktop-open-with').click();
  const popupPromise = page.context().waitForEvent('page');
  await page.getByTestId('open-viewer-browser-rdp').click();
  const viewer = await popupPromise;
  await viewer.waitForURL(/\/rdp$/);
  await expect(viewer.getByTestId('rdp-viewer')).toHaveAttribute('data-status', 'connected', {
    timeout: 20_000,
  });
  await expect(viewer.getByRole('heading', { level: 1 })).toHaveText(name);

  // The display draws on animation frames, which a tab in the background does not get.
  await viewer.bringToFront();
  // The double's test pattern is on the canvas: four quadrants of known colours.
  const { width, height, quadrants } = TEST_PATTERN;
  const points: [number, number, readonly number[]][] = [
    [width / 4, height / 4, quadrants.topLeft],
    [(3 * width) / 4, height / 4, quadrants.topRight],
    [width / 4, (3 * height) / 4, quadrants.bottomLeft],
    [(3 * width) / 4, (3 * height) / 4, quadrants.bottomRight],
  ];
  for (const [x, y, colour] of points)
    await expect.poll(() => pixelAt(viewer, x, y), { timeout: 10_000 }).toEqual([...colour]);

  // The double saw the desktop's address and guest credentials in a correct handshake.
  const session = guacd.sessions.find((s) => s.args?.hostname === ADDRESS);
  expect(session?.problems).toEqual([]);
  expect(session?.args).toMatchObject({
    hostname: ADDRESS,
    port: '3389',
    username: CREDENTIALS.username,
    password: CREDENTIALS.password,
    security: 'any',
    'ignore-cert': 'true',
  });
  // The page sent its own screen size.
  expect(Number(session?.size?.[0])).toBeGreaterThan(0);

  // Keys typed on the page reach guacd.
  await viewer.locator('[data-testid="rdp-screen"]').click();
  await viewer.keyboard.press('a');
  await expect
    .poll(() => session?.after.some((i) => i.opcode === 'key' && i.args[0] === '97'))
    .toBe(true);

  await viewer.getByTestId('rdp-disconnect').click();
  await expect(viewer.getByTestId('rdp-viewer')).toHaveAttribute('data-status', 'disconnected');
});
