/**
 * Browser hardening headers: a CSP that forbids <base> and any connection to another origin
 * (websockets included), no Referer from pages whose URL carries a token, and HSTS only when the
 * client reached the portal over https, which behind a proxy is known only when TRUST_PROXY lets
 * X-Forwarded-Proto count.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createTestDatabase, type TestApp } from '../../../test/support/helper.ts';

let direct: TestApp;
let proxied: TestApp;

beforeAll(async () => {
  const url = await createTestDatabase();
  direct = await buildTestApp(url);
  proxied = await buildTestApp(url, { trustProxy: true });
});
afterAll(async () => {
  await proxied.close();
  await direct.close();
});

const health = (t: TestApp, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: '/api/v3/health', headers });

describe('security headers', () => {
  it('sends a CSP with base-uri none and same-origin connections only', async () => {
    const csp = String((await health(direct)).headers['content-security-policy'] ?? '');
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values.join(' ')] as const;
      }),
    );
    expect(directives.get('base-uri')).toBe("'none'");
    expect(directives.get('connect-src')).toBe("'self'");
    expect(directives.get('object-src')).toBe("'none'");
    expect(directives.get('frame-ancestors')).toBe("'none'");
    expect(directives.get('script-src')).toBe("'self'");
  });

  it('sends no referrer and no cache on pages whose URL carries a token, origin-only elsewhere', async () => {
    const page = (url: string) =>
      direct.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
    for (const url of ['/reset-password?token=secret', '/verify-email?token=secret']) {
      const res = await page(url);
      expect([url, res.headers['referrer-policy']]).toEqual([url, 'no-referrer']);
      expect([url, res.headers['cache-control']]).toEqual([url, 'no-store']);
    }
    for (const url of ['/desktops', '/reset-passwords', '/api/v3/health']) {
      const res = await page(url);
      expect([url, res.headers['referrer-policy']]).toEqual([
        url,
        'strict-origin-when-cross-origin',
      ]);
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('sends HSTS when a trusted proxy says the client used https, and only then', async () => {
    const https = await health(proxied, { 'x-forwarded-proto': 'https' });
    expect(https.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect((await health(proxied)).headers['strict-transport-security']).toBeUndefined();
    const untrusted = await health(direct, { 'x-forwarded-proto': 'https' });
    expect(untrusted.headers['strict-transport-security']).toBeUndefined();
  });
});
