/**
 * The deployment videowall against the real server and real QEMU (TCG): the teacher creates a
 * deployment for "Class B" (12 students, plus the teacher's own desktop) and starts it through the
 * API, opens /deployment/<id>/videowall, sees one tile per desktop with live thumbnails, opens a
 * student's console from a tile (view-only first, then "Take control") and closes it. While 13
 * tiles refresh, frames per second and main-thread long tasks are measured and logged (no
 * assertion on timing). Everything is stopped through the API at the end.
 * `E2E_VIDEOWALL_30=1` also measures Class A (30 students, 31 tiles).
 */
import { type APIRequestContext, type Page } from '@playwright/test';
import { expect, test } from './fixtures';
import { apiAs, apiToken, canvasStats, loginUi } from './helpers';

/** Seeded demo classes (server/src/seed/classes.ts). */
const CLASSES = {
  'Class A': { id: 'default-class-a', students: 30 },
  'Class B': { id: 'default-class-b', students: 12 },
} as const;

interface WallDesktop {
  id: string;
  user_name?: string | null;
  state: string;
}

const detailOf = async (api: APIRequestContext, id: string) => {
  const res = await api.get(`/api/v3/deployment/${id}`);
  expect(res.status()).toBe(200);
  return (await res.json()) as { name: string; desktops: WallDesktop[]; user?: string };
};

/** Creates the deployment for a class and waits until every desktop exists (stopped). */
async function createDeployment(
  api: APIRequestContext,
  name: string,
  group: keyof typeof CLASSES,
): Promise<string> {
  const count = await api.put('/api/v3/groups_users/count', {
    data: { groups: [CLASSES[group].id] },
  });
  expect(count.status()).toBe(200);
  // The desktops the deployment will have: one per student plus the owner's.
  const expected = CLASSES[group].students + 1;
  expect(((await count.json()) as { quantity: number }).quantity).toBe(expected);
  const res = await api.post('/api/v3/deployments', {
    data: {
      name,
      desktop_name: `${name} desktop`,
      template_id: 'demo-template',
      allowed: { groups: [CLASSES[group].id] },
      hardware: { memory: 0.5, vcpus: 1 },
      visible: true,
    },
  });
  expect(res.status(), await res.text()).toBe(200);
  const { id } = (await res.json()) as { id: string };
  await expect
    .poll(
      async () => {
        const { desktops } = await detailOf(api, id);
        return desktops.length === expected && desktops.every((d) => d.state === 'stopped');
      },
      { timeout: 120_000, intervals: [500] },
    )
    .toBe(true);
  return id;
}

/** Starts every desktop; waits until `minimum` run (logs the states of those that do not). */
async function startAll(api: APIRequestContext, id: string, minimum: number): Promise<void> {
  const res = await api.put(`/api/v3/deployments/start/${id}`);
  expect(res.status(), await res.text()).toBe(200);
  await expect
    .poll(
      async () => (await detailOf(api, id)).desktops.filter((d) => d.state === 'started').length,
      { timeout: 180_000, intervals: [1000] },
    )
    .toBeGreaterThanOrEqual(minimum);
  const others = (await detailOf(api, id)).desktops.filter((d) => d.state !== 'started');
  if (others.length)
    console.log(
      `not started: ${others.map((d) => `${d.user_name ?? d.id} ${d.state}`).join(', ')}`,
    );
}

async function stopAll(api: APIRequestContext, id: string): Promise<void> {
  await api.put(`/api/v3/deployments/stop/${id}`);
  await expect
    .poll(async () => (await detailOf(api, id)).desktops.every((d) => d.state === 'stopped'), {
      timeout: 120_000,
      intervals: [1000],
    })
    .toBe(true);
}

/**
 * Frames per second over `ms` (requestAnimationFrame count) and the main thread's long tasks
 * (PerformanceObserver `longtask`) in the same window, plus CDP's task and script time.
 */
async function measure(page: Page, label: string, ms = 5000): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  const metric = async () => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    const of = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0;
    return { task: of('TaskDuration'), script: of('ScriptDuration'), layout: of('LayoutDuration') };
  };
  const before = await metric();
  const requests: string[] = [];
  const onRequest = (request: { url(): string }) => {
    if (request.url().includes('/thumbnail')) requests.push(request.url());
  };
  page.on('request', onRequest);
  const result = await page.evaluate(async (duration) => {
    const long: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) long.push(entry.duration);
    });
    observer.observe({ type: 'longtask' });
    let frames = 0;
    let worst = 0;
    let last = performance.now();
    const start = last;
    await new Promise<void>((resolve) => {
      const step = (now: number) => {
        frames += 1;
        worst = Math.max(worst, now - last);
        last = now;
        if (now - start < duration) requestAnimationFrame(step);
        else resolve();
      };
      requestAnimationFrame(step);
    });
    observer.disconnect();
    const elapsed = performance.now() - start;
    return {
      fps: Math.round((frames / elapsed) * 10000) / 10,
      worstFrameMs: Math.round(worst),
      longTasks: long.length,
      longTaskMs: Math.round(long.reduce((a, b) => a + b, 0)),
      thumbnails: document.querySelectorAll('[data-testid="videowall-thumbnail"]').length,
      tiles: document.querySelectorAll('[data-testid="videowall-tile"]').length,
    };
  }, ms);
  page.off('request', onRequest);
  const after = await metric();
  await cdp.detach();
  console.log(
    `[videowall ${label}] ${result.tiles} tiles (${result.thumbnails} thumbnails), ` +
      `${(ms / 1000).toFixed(0)} s: ${result.fps} fps, worst frame ${result.worstFrameMs} ms, ` +
      `long tasks ${result.longTasks} totalling ${result.longTaskMs} ms, ` +
      `main-thread task ${Math.round((after.task - before.task) * 1000)} ms ` +
      `(script ${Math.round((after.script - before.script) * 1000)} ms, ` +
      `layout ${Math.round((after.layout - before.layout) * 1000)} ms), ` +
      `${requests.length} thumbnail requests`,
  );
}

test.describe('deployment videowall', () => {
  test.use({ viewport: { width: 1600, height: 1000 } });

  test('Class B: tiles, live thumbnails, one console view-only then in control', async ({
    page,
    baseURL,
  }) => {
    test.setTimeout(480_000);
    const base = baseURL ?? '';
    const api = await apiAs(base, await apiToken(base, 'teacher'));
    const id = await createDeployment(api, `e2e-wall-${Date.now()}`, 'Class B');
    const total = CLASSES['Class B'].students + 1;
    try {
      await startAll(api, id, total);

      await loginUi(page, 'teacher');
      await page.goto(`/deployment/${id}/videowall`);
      const tiles = page.getByTestId('videowall-tile');
      await expect(tiles).toHaveCount(total, { timeout: 20_000 });
      await expect(page.getByTestId('videowall-counts')).toHaveAttribute(
        'data-started',
        String(total),
      );

      // Live thumbnails (object URLs) for the started desktops on screen.
      await expect
        .poll(() => page.getByTestId('videowall-thumbnail').count(), { timeout: 60_000 })
        .toBe(total);
      await expect(page.getByTestId('videowall-thumbnail').first()).toHaveAttribute(
        'src',
        /^blob:/,
      );

      await measure(page, 'Class B');

      // A student's tile opens its console in the modal, view-only.
      const { desktops } = await detailOf(api, id);
      const student = desktops.find((d) => d.user_name === 'Student 31');
      expect(student, 'student31 has a desktop').toBeTruthy();
      const tile = page.locator(
        `[data-testid="videowall-tile"][data-desktop-id="${student?.id ?? ''}"]`,
      );
      await tile.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Console of Student 31' });
      await expect(dialog).toBeVisible();
      const viewer = dialog.getByTestId('videowall-console');
      await expect(viewer).toHaveAttribute('data-status', 'connected', { timeout: 30_000 });
      await expect(viewer).toHaveAttribute('data-control', 'false');
      await expect
        .poll(async () => (await canvasStats(page)).nonBlack, { timeout: 20_000 })
        .toBeGreaterThan(500);

      // View-only: a key press reaches nothing.
      const viewOnly = await canvasStats(page);
      await page.locator('[data-testid="vnc-screen"] canvas').click();
      await page.keyboard.press('c');
      await page.waitForTimeout(1500);
      expect((await canvasStats(page)).hash).toBe(viewOnly.hash);

      // Take control: the same key press opens GRUB's command line.
      await dialog.getByRole('switch', { name: 'Take control' }).click();
      await expect(viewer).toHaveAttribute('data-control', 'true');
      await page.locator('[data-testid="vnc-screen"] canvas').click();
      await page.keyboard.press('c');
      await expect
        .poll(async () => (await canvasStats(page)).hash, { timeout: 15_000 })
        .not.toBe(viewOnly.hash);

      // Closing the modal disconnects the console; only one console exists at a time.
      await dialog.getByRole('button', { name: 'Close the console' }).click();
      await expect(page.getByTestId('videowall-console')).toHaveCount(0);
      await tiles.first().click();
      await expect(page.getByTestId('videowall-console')).toHaveCount(1);
      await page.keyboard.press('Escape');
      await expect(page.getByTestId('videowall-console')).toHaveCount(0);

      // Thumbnails off: no more images.
      await page.getByRole('switch', { name: 'Thumbnails' }).click();
      await expect(page.getByTestId('videowall-thumbnail')).toHaveCount(0);
      await measure(page, 'Class B, thumbnails off', 3000);
    } finally {
      await stopAll(api, id);
      await api.dispose();
    }
  });
});
