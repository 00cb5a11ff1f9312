/**
 * HTTP compression: brotli or gzip per Accept-Encoding (brotli preferred) for text bodies of at
 * least 1 KiB, API JSON (including the cached JSON string of the desktop list) and built SPA files
 * alike; identity without Accept-Encoding; small bodies and images as they are.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from 'node:zlib';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDesktops } from '../../seed/index.ts';
import { isCompressible, negotiateEncoding } from './compress.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';

const INDEX = `<!doctype html><html><head><title>portal</title></head><body>${'<p>page</p>'.repeat(200)}</body></html>`;
const SCRIPT = `export const words = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `word${i}`))};`;
const PRECOMPRESSED_SOURCE = `console.log(${JSON.stringify('y'.repeat(3000))});`;
/** A PNG signature followed by noise: an image body well above the threshold. */
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.alloc(4096, 7),
]);

let t: TestApp;
let dist: string;
let token: string;

function decoded(res: LightMyRequestResponse): string {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(res.rawPayload).toString('utf8');
  if (encoding === 'gzip') return gunzipSync(res.rawPayload).toString('utf8');
  if (encoding === undefined) return res.rawPayload.toString('utf8');
  throw new Error(`unexpected content-encoding ${String(encoding)}`);
}

beforeAll(async () => {
  dist = mkdtempSync(join(tmpdir(), 'vdi-dist-'));
  mkdirSync(join(dist, 'assets'));
  writeFileSync(join(dist, 'index.html'), INDEX);
  writeFileSync(join(dist, 'assets', 'app-1a2b3c.js'), SCRIPT);
  writeFileSync(join(dist, 'assets', 'logo-1a2b3c.png'), PNG);
  writeFileSync(join(dist, 'assets', 'pre-1a2b3c.js'), PRECOMPRESSED_SOURCE);
  // the build's own brotli file differs from the source, so the test sees which one was sent
  writeFileSync(
    join(dist, 'assets', 'pre-1a2b3c.js.br'),
    brotliCompressSync(Buffer.from('/* from the .br file */')),
  );
  t = await buildTestApp(await createTestDatabase(), { distDir: dist });
  await seedDesktops(t.app, 'user', 40);
  token = await login(t.app, 'user');
});
afterAll(async () => {
  await t.close();
  rmSync(dist, { recursive: true, force: true });
});

const list = (acceptEncoding?: string) =>
  injectWithToken(t.app, token, {
    method: 'GET',
    url: '/api/v3/user/desktops',
    headers: acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding },
  });

describe('API JSON', () => {
  it('sends the desktop list as identity without Accept-Encoding', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    const body = res.json<unknown[]>();
    expect(body).toHaveLength(43);
    expect(res.rawPayload.length).toBeGreaterThan(10 * 1024);
  });

  it.each([
    ['br', 'br'],
    ['gzip', 'gzip'],
    ['gzip, deflate, br', 'br'],
    ['gzip;q=1.0, br;q=0.5', 'gzip'],
    ['deflate, gzip', 'gzip'],
  ])('answers Accept-Encoding "%s" with %s that decodes to the same JSON', async (accept, want) => {
    const plain = await list();
    const res = await list(accept);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe(want);
    expect(res.headers.vary).toMatch(/accept-encoding/i);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.rawPayload.length).toBeLessThan(plain.rawPayload.length / 4);
    expect(JSON.parse(decoded(res))).toEqual(plain.json());
  });

  it('sends identity when only unsupported encodings are accepted', async () => {
    const res = await list('deflate');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.json<unknown[]>()).toHaveLength(43);
  });

  it('compresses an answer serialised by fastify from its response schema', async () => {
    const plain = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/images/desktops',
    });
    expect(plain.rawPayload.length).toBeGreaterThan(1024);
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/images/desktops',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decoded(res))).toEqual(plain.json());
  });

  it('compresses the OpenAPI document', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v3/openapi.json',
      headers: { 'accept-encoding': 'br' },
    });
    expect(res.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decoded(res))).toHaveProperty('openapi', '3.1.0');
  });

  it('leaves bodies under 1 KiB uncompressed', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/api/v3/nope',
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.json()).toHaveProperty('error', 'not_found');
  });
});

describe('built SPA files', () => {
  it('compresses assets on the fly and keeps them immutable', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/assets/app-1a2b3c.js',
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('br');
    expect(res.headers['cache-control']).toMatch(/immutable/);
    expect(decoded(res)).toBe(SCRIPT);
  });

  it('sends a prebuilt .br file as it is when the client accepts brotli', async () => {
    const br = await t.app.inject({
      method: 'GET',
      url: '/assets/pre-1a2b3c.js',
      headers: { 'accept-encoding': 'br' },
    });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(decoded(br)).toBe('/* from the .br file */');
    const gzip = await t.app.inject({
      method: 'GET',
      url: '/assets/pre-1a2b3c.js',
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(decoded(gzip)).toBe(PRECOMPRESSED_SOURCE);
  });

  it('compresses the index.html of a page route', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/desktops/x',
      headers: { accept: 'text/html', 'accept-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.headers['cache-control']).toBe('no-cache');
    expect(decoded(res)).toBe(INDEX);
    const root = await t.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html', 'accept-encoding': 'br' },
    });
    expect(root.headers['content-encoding']).toBe('br');
    expect(decoded(root)).toBe(INDEX);
  });

  it('never compresses images', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/assets/logo-1a2b3c.png',
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['content-encoding']).toBeUndefined();
    expect(res.rawPayload.equals(PNG)).toBe(true);
  });
});

describe('compressible content types', () => {
  it.each([
    ['application/json; charset=utf-8', true],
    ['application/problem+json', true],
    ['text/html; charset=utf-8', true],
    ['text/javascript', true],
    ['application/javascript', true],
    ['image/svg+xml', true],
    ['text/event-stream', false],
    ['image/png', false],
    ['image/jpeg', false],
    ['application/octet-stream', false],
    ['application/x-virt-viewer', false],
  ])('%s -> %s', (type, expected) => {
    expect(isCompressible(type)).toBe(expected);
  });
});

describe('negotiateEncoding (the cached desktop list picks its encoding with it)', () => {
  it.each([
    'br',
    'gzip',
    'BR',
    'gzip, deflate, br',
    'gzip, deflate, br, zstd',
    'gzip;q=1.0, br;q=0.5',
    'br;q=0.5, gzip;q=0.5',
    'br;q=0, gzip',
    'gzip;q=0, br;q=0',
    'x-gzip',
    '*',
    'br;q=0, *',
    'deflate',
    'identity',
    'deflate, gzip',
  ])('picks what the compression plugin picks for "%s"', async (accept) => {
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/images/desktops',
      headers: { 'accept-encoding': accept },
    });
    expect(res.statusCode).toBe(200);
    expect(negotiateEncoding(accept)).toBe(res.headers['content-encoding'] ?? null);
  });
});
