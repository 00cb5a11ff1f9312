/** Shared e2e helpers: UI login and API access with a token from a separate request context. */
import { expect, request, type APIRequestContext, type Page } from '@playwright/test';
import { DEMO_PASSWORD } from '../../playwright.config';

export { DEMO_PASSWORD };

/** Logs in through the login page and waits for the desktops page. */
export async function loginUi(
  page: Page,
  username = 'user',
  password = DEMO_PASSWORD,
): Promise<void> {
  await page.goto('/login');
  await page.locator('input[name=username]').fill(username);
  await page.locator('input[name=password]').fill(password);
  await page.getByTestId('login-submit').click();
  await expect(page).toHaveURL(/\/desktops$/);
}

/** Logs in through the API (form POST) and returns the raw JWT. */
export async function apiToken(
  baseURL: string,
  username = 'user',
  password = DEMO_PASSWORD,
  category = 'default',
): Promise<string> {
  const ctx = await request.newContext({ baseURL });
  const response = await ctx.post(`/authentication/login?provider=form&category_id=${category}`, {
    multipart: { username, password },
  });
  expect(response.status()).toBe(200);
  const token = (await response.text()).trim();
  await ctx.dispose();
  return token;
}

/** A request context sending the bearer token. */
export async function apiAs(baseURL: string, token: string): Promise<APIRequestContext> {
  return request.newContext({ baseURL, extraHTTPHeaders: { Authorization: `Bearer ${token}` } });
}

/** An HTTP answer of 400 or more seen by the page: `GET /api/v3/x -> 404`. */
export interface HttpProblem {
  method: string;
  path: string;
  status: number;
  /** True for a top-level document (a page load), false for fetches. */
  document: boolean;
}

/** The failing answers a page saw, and whether its requests have settled. */
export interface HttpTracker {
  /** What was recorded since the last call; starts afresh. */
  take: () => HttpProblem[];
  /**
   * Resolves once no request of the page (socket.io's long-lived transport aside) has been in
   * flight for `quietMs`, or after `timeoutMs`. Unlike Playwright's "networkidle" it does not
   * wait out a fixed 500 ms after the last answer.
   */
  quiet: (quietMs?: number, timeoutMs?: number) => Promise<void>;
}

/**
 * Records the page's failing HTTP answers (status >= 400) for documents and for `/api/v3` calls,
 * and counts its requests in flight.
 */
export function trackHttpProblems(page: Page): HttpTracker {
  let seen: HttpProblem[] = [];
  const inFlight = new Set<unknown>();
  let lastChange = Date.now();
  const counted = (url: string): boolean => !new URL(url).pathname.startsWith('/socket.io/');
  page.on('request', (request) => {
    if (!counted(request.url())) return;
    inFlight.add(request);
    lastChange = Date.now();
  });
  const done = (request: unknown): void => {
    if (inFlight.delete(request)) lastChange = Date.now();
  };
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  page.on('response', (response) => {
    const request = response.request();
    const url = new URL(response.url());
    const document = request.resourceType() === 'document' && request.frame() === page.mainFrame();
    if (response.status() < 400 || (!document && !url.pathname.startsWith('/api/v3/'))) return;
    seen.push({
      method: request.method(),
      path: url.pathname,
      status: response.status(),
      document,
    });
  });
  return {
    take: () => {
      const taken = seen;
      seen = [];
      return taken;
    },
    quiet: async (quietMs = 150, timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (inFlight.size === 0 && Date.now() - lastChange >= quietMs) return;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

export interface CanvasStats {
  width: number;
  height: number;
  nonBlack: number;
  hash: number;
}

/** Pixel statistics of the noVNC canvas (non-black pixel count and a content hash). */
export function canvasStats(page: Page): Promise<CanvasStats> {
  return page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('[data-testid="vnc-screen"] canvas');
    if (!canvas?.width || !canvas.height) return { width: 0, height: 0, nonBlack: 0, hash: 0 };
    const data = canvas.getContext('2d')?.getImageData(0, 0, canvas.width, canvas.height).data;
    if (!data) return { width: canvas.width, height: canvas.height, nonBlack: 0, hash: 0 };
    let nonBlack = 0;
    let hash = 0;
    for (let i = 0; i < data.length; i += 4) {
      const r = data[i] ?? 0;
      const g = data[i + 1] ?? 0;
      const b = data[i + 2] ?? 0;
      if (r + g + b > 48) nonBlack += 1;
      hash = (Math.imul(hash, 31) + r + (g << 8) + (b << 16)) >>> 0;
    }
    return { width: canvas.width, height: canvas.height, nonBlack, hash };
  });
}
