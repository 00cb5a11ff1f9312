/**
 * The built SPA: `/` and page routes that match no file get index.html (no-cache), files are served
 * with their cache policy (hashed assets immutable), /api and /authentication always answer JSON;
 * `/login` and an anonymous visit to a guarded page get the login page drawn at build time, in the
 * visitor's language.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUTHORIZATION_COOKIE, SESSION_COOKIE } from '../../../../common/entry-paths.ts';
import {
  CATEGORY_OPTIONS,
  LANGUAGE_COOKIE,
  prerenderedLoginFile,
} from '../../../../common/prerendered-login.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addCategory } from '../../../test/support/fixtures.ts';

const INDEX = `<!doctype html><html><head><title>portal</title></head><body><div id="root"></div>${'<!-- padding -->'.repeat(100)}</body></html>`;
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;
const HTML = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

let t: TestApp;
let dist: string;

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'vdi-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(join(dist, 'assets', 'app-1a2b3c.js'), SCRIPT);
  t = await buildTestApp(await createTestDatabase(), { distDir: dist });
});
afterAll(async () => {
  await t.close();
  rmSync(dist, { recursive: true, force: true });
});

describe('SPA history fallback', () => {
  it.each(['/', '/desktops', '/desktops/x', '/desktops/x/', '/assets/', '/login?next=%2Fdesktops'])(
    'answers GET %s from a browser with index.html, 200 and no-cache',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url, headers: HTML });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.body).toBe(INDEX);
      expect(res.headers['content-security-policy']).toMatch(/default-src 'self'/);
    },
  );

  it('answers GET / with index.html whatever the Accept header', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/', headers: { accept: '*/*' } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(INDEX);
  });

  it('answers HEAD on a page route with the headers and no body', async () => {
    const res = await t.app.inject({ method: 'HEAD', url: '/desktops/x', headers: HTML });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toBe('');
  });

  it('revalidates index.html with its ETag', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/desktops', headers: HTML });
    const etag = first.headers.etag;
    expect(etag).toMatch(/^".+"$/);
    const again = await t.app.inject({
      method: 'GET',
      url: '/desktops/other',
      headers: { ...HTML, 'if-none-match': String(etag) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('does not answer a page for a request that does not accept HTML, nor for other methods', async () => {
    const json = await t.app.inject({
      method: 'GET',
      url: '/desktops/x',
      headers: { accept: 'application/json' },
    });
    expect(json.statusCode).toBe(404);
    expectErrorShape(json.json(), 'not_found');
    const post = await t.app.inject({ method: 'POST', url: '/desktops/x', headers: HTML });
    expect(post.statusCode).toBe(404);
    expectErrorShape(post.json(), 'not_found');
  });

  it.each(['/api/v3/nope', '/api/v3/desktops/x/y/z', '/authentication/nope', '/api'])(
    'answers %s with a 404 JSON error even for a browser',
    async (url) => {
      const res = await t.app.inject({ method: 'GET', url, headers: HTML });
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expectErrorShape(res.json(), 'not_found');
    },
  );

  it('keeps answering the API with JSON', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v3/health', headers: HTML });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });
});

describe('built files', () => {
  it('serves hashed assets as immutable', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/assets/app-1a2b3c.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.body).toBe(SCRIPT);
  });

  it('serves other files with no-cache', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(res.body).toContain('<svg');
  });

  it('answers a missing asset with 404 JSON, not the page', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/assets/missing-000.js' });
    expect(res.statusCode).toBe(404);
    expectErrorShape(res.json(), 'not_found');
  });

  it('refuses paths that leave dist/', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/assets/..%2f..%2fpackage.json' });
    expect(res.statusCode).toBeGreaterThanOrEqual(400);
    expect(res.body).not.toContain('"dependencies"');
  });
});

describe('the login page drawn at build time', () => {
  const page = (language: string) =>
    `<!doctype html><html lang="${language}"><body><div id="static-login">${language}</div></body></html>`;
  beforeAll(() => {
    mkdirSync(join(dist, 'prerendered'));
    for (const language of ['en', 'es', 'zh_Hans'])
      writeFileSync(join(dist, prerenderedLoginFile(language)), page(language));
  });

  it.each([
    ['es-ES,es;q=0.9,en;q=0.8', undefined, 'es'],
    ['zh-CN,zh;q=0.9', undefined, 'zh_Hans'],
    ['ja,ko;q=0.5', undefined, 'en'], // no page in either: English
    [undefined, undefined, 'en'],
    ['es', `other=1; ${LANGUAGE_COOKIE}=en`, 'en'], // the chosen language wins over the browser's
    ['es', `${LANGUAGE_COOKIE}=klingon`, 'es'], // not an offered language: the browser's
    ['es', `${LANGUAGE_COOKIE}=%E0%A4%A`, 'es'], // not even a URI component
  ])(
    'answers /login (Accept-Language %s, cookie %s) with the page in %s',
    async (acceptLanguage, cookie, language) => {
      const res = await t.app.inject({
        method: 'GET',
        url: '/login?error=x',
        headers: {
          ...HTML,
          ...(acceptLanguage ? { 'accept-language': acceptLanguage } : {}),
          ...(cookie ? { cookie } : {}),
        },
      });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(String(res.headers.vary)).toMatch(/cookie, accept-language/);
      expect(res.body).toBe(page(language));
    },
  );

  it('revalidates the page with its own ETag', async () => {
    const headers = { ...HTML, 'accept-language': 'es' };
    const first = await t.app.inject({ method: 'GET', url: '/login', headers });
    const again = await t.app.inject({
      method: 'GET',
      url: '/login',
      headers: { ...headers, 'if-none-match': String(first.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const index = await t.app.inject({ method: 'GET', url: '/signup', headers });
    expect(index.body).toBe(INDEX);
    expect(index.headers.etag).not.toBe(first.headers.etag);
  });

  it.each([
    ['/', undefined, 'es'],
    ['/desktops', undefined, 'es'],
    ['/deployment/x/edit', 'authorization=', 'es'], // an empty cookie is no session
    ['/', `${SESSION_COOKIE}=a.b.c`, null],
    ['/desktops', `${AUTHORIZATION_COOKIE}=a.b.c`, null],
    ['/signup', undefined, null], // a page without login
    ['/error/404', undefined, null],
    ['/no-such-page', undefined, null], // not guarded: the application says it is not found
  ])(
    'answers %s (cookie %s) with the drawn login page in %s, else index.html',
    async (url, cookie, language) => {
      const res = await t.app.inject({
        method: 'GET',
        url,
        headers: { ...HTML, 'accept-language': 'es', ...(cookie ? { cookie } : {}) },
      });
      expect(res.statusCode).toBe(200);
      expect(String(res.headers.vary)).toMatch(/cookie, accept-language/);
      expect(res.body).toBe(language ? page(language) : INDEX);
    },
  );

  it('fills the category choice of a portal with several categories, and revalidates it', async () => {
    writeFileSync(
      join(dist, prerenderedLoginFile('en', true)),
      `<html><body><select name="category">${CATEGORY_OPTIONS}</select></body></html>`,
    );
    const before = await t.app.inject({ method: 'GET', url: '/login', headers: HTML });
    await addCategory(t.app, 'zz<b>&"q"');
    const choice = await t.app.inject({ method: 'GET', url: '/', headers: HTML });
    const options = (await t.app.users.categories())
      .map(({ id, name }) =>
        [id, name].map((text) => text.replace('<b>&"q"', '&lt;b&gt;&amp;&quot;q&quot;')),
      )
      .map(([id, name]) => `<option value="${id}">${name}</option>`)
      .join('');
    expect(options).toContain('<option value="zz&lt;b&gt;&amp;&quot;q&quot;">');
    expect(choice.body).toBe(
      `<html><body><select name="category">${options}</select></body></html>`,
    );
    const again = await t.app.inject({
      method: 'GET',
      url: '/',
      headers: { ...HTML, 'if-none-match': String(choice.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    // the options changed: so did the page
    expect(choice.headers.etag).not.toBe(before.headers.etag);
  });

  it('draws the login page without the choice when the categories cannot be read', async () => {
    const down = vi
      .spyOn(t.app.users, 'categories')
      .mockRejectedValue(
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      );
    try {
      const res = await t.app.inject({ method: 'GET', url: '/login', headers: HTML });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(page('en'));
    } finally {
      down.mockRestore();
    }
  });
});
