/**
 * The direct-viewer page `/vw/<token>` (threat T36): its URL is a credential, so the SPA's HTML for
 * it is sent with `Referrer-Policy: no-referrer` (no Referer carries the token anywhere, the page's
 * own assets and API calls included) and `Cache-Control: no-store` (no cache keeps it), whatever
 * the token and however the page is asked for. Other pages keep the portal's policies.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestDatabase, type TestApp } from '../../../test/support/helper.ts';

const INDEX = '<!doctype html><html><head><title>portal</title></head><body></body></html>';
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
/** A token as the server makes them: 43 base64url characters. */
const TOKEN = 'Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5';

let t: TestApp;
let dist: string;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'vdi-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  t = await buildTestApp(await createTestDatabase(), { distDir: dist });
});
afterAll(async () => {
  await t.close();
  rmSync(dist, { recursive: true, force: true });
});

describe('the direct-viewer page', () => {
  it.each([`/vw/${TOKEN}`, `/vw/${TOKEN}?lang=en`, '/vw/unknown-link'])(
    'answers GET %s with the SPA, no-referrer and no-store',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url, headers: HTML });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toBe(INDEX);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-store');
      // The other hardening headers stay.
      expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  it('keeps no-referrer and no-store on HEAD, on a revalidation and compressed', async () => {
    const head = await t.app.inject({ method: 'HEAD', url: `/vw/${TOKEN}`, headers: HTML });
    expect(head.statusCode).toBe(200);
    expect(head.headers['referrer-policy']).toBe('no-referrer');
    expect(head.headers['cache-control']).toBe('no-store');

    const first = await t.app.inject({ method: 'GET', url: '/desktops', headers: HTML });
    const again = await t.app.inject({
      method: 'GET',
      url: `/vw/${TOKEN}`,
      headers: { ...HTML, 'if-none-match': String(first.headers.etag) },
    });
    expect(again.headers['referrer-policy']).toBe('no-referrer');
    expect(again.headers['cache-control']).toBe('no-store');

    const gzip = await t.app.inject({
      method: 'GET',
      url: `/vw/${TOKEN}`,
      headers: { ...HTML, 'accept-encoding': 'gzip' },
    });
    expect(gzip.statusCode).toBe(200);
    expect(gzip.headers['referrer-policy']).toBe('no-referrer');
    expect(gzip.headers['cache-control']).toBe('no-store');
  });

  it('also covers a /vw/ request that gets no page (not HTML)', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: `/vw/${TOKEN}`,
      headers: { accept: 'application/json' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('leaves the other pages with the portal policies', async () => {
    for (const url of ['/desktops', '/vw', '/vwx/abc', `/desktops/vw/${TOKEN}`]) {
      const res = await t.app.inject({ method: 'GET', url, headers: HTML });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['referrer-policy'], url).toBe('strict-origin-when-cross-origin');
      expect(res.headers['cache-control'], url).toBe('no-cache');
    }
  });
});
