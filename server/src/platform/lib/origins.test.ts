import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/config.ts';
import {
  forwardedOrigin,
  normalizeOrigin,
  originAllowed,
  ownOrigins,
  publicAddress,
  type OriginSettings,
} from './origins.ts';

const request = (headers: Record<string, string>, encrypted = false) =>
  ({ headers, socket: { encrypted } }) as unknown as IncomingMessage;

const settings = (overrides: Partial<OriginSettings> = {}): OriginSettings => ({
  publicUrl: undefined,
  host: '0.0.0.0',
  allowedOrigins: [],
  trustProxy: false,
  ...overrides,
});

describe('PUBLIC_URL', () => {
  it('takes an http(s) origin and refuses anything else', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://VDI.example.org' }).publicUrl).toBe(
      'https://vdi.example.org',
    );
    expect(loadConfig({ PUBLIC_URL: 'http://10.0.0.5:8080/' }).publicUrl).toBe(
      'http://10.0.0.5:8080',
    );
    expect(loadConfig({}).publicUrl).toBeUndefined();
    for (const bad of [
      'ftp://vdi.example.org',
      'vdi.example.org',
      'https://vdi.example.org/portal',
      'https://user:pw@vdi.example.org',
      'https://vdi.example.org/?x=1',
      'https://vdi.example.org:99999',
    ])
      expect(() => loadConfig({ PUBLIC_URL: bad }), bad).toThrow(/invalid environment/);
  });
});

describe('the portal origin', () => {
  it('is PUBLIC_URL when set, else HOST and the listening port (loopback names for a wildcard HOST)', () => {
    expect(ownOrigins(settings({ publicUrl: 'https://vdi.example.org' }), 8080)).toEqual([
      'https://vdi.example.org',
    ]);
    expect(ownOrigins(settings(), 8080)).toEqual([
      'http://localhost:8080',
      'http://127.0.0.1:8080',
      'http://[::1]:8080',
    ]);
    expect(ownOrigins(settings({ host: '127.0.0.1' }), 9000)[0]).toBe('http://127.0.0.1:9000');
    expect(ownOrigins(settings({ host: '10.1.2.3' }), 80)).toEqual(['http://10.1.2.3']);
    expect(publicAddress(settings({ publicUrl: 'https://vdi.example.org' }), 8080)).toEqual({
      protocol: 'https',
      hostname: 'vdi.example.org',
      port: 443,
    });
    expect(publicAddress(settings({ host: '127.0.0.1' }), 8191)).toEqual({
      protocol: 'http',
      hostname: '127.0.0.1',
      port: 8191,
    });
  });

  it('accepts only the same scheme, host and port, or an ALLOWED_ORIGINS entry; never a missing or null Origin', () => {
    const s = settings({
      publicUrl: 'https://vdi.example.org',
      allowedOrigins: ['https://admin.example.org'],
    });
    const allowed = (origin: string | undefined, extra: Record<string, string> = {}) =>
      originAllowed(
        request({ host: 'vdi.example.org', ...(origin === undefined ? {} : { origin }), ...extra }),
        s,
        8080,
      );
    expect(allowed('https://vdi.example.org')).toBe(true);
    expect(allowed('https://VDI.example.org:443')).toBe(true);
    expect(allowed('https://admin.example.org')).toBe(true);
    for (const bad of [
      undefined,
      '',
      'null',
      'http://vdi.example.org',
      'https://vdi.example.org:8443',
      'https://evil.example.org',
      'https://vdi.example.org.evil.example',
      'https://vdi.example.org/',
      'https://vdi.example.org/path',
      'wss://vdi.example.org',
    ])
      expect(allowed(bad), String(bad)).toBe(false);
    // Without TRUST_PROXY the Host header and forwarded headers never widen the set.
    expect(allowed('http://vdi.example.org', { 'x-forwarded-proto': 'http' })).toBe(false);
  });

  it('adds the forwarded origin only with TRUST_PROXY', () => {
    const headers = {
      host: 'internal:8080',
      origin: 'https://portal.example.org',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'portal.example.org',
    };
    expect(forwardedOrigin(request(headers))).toBe('https://portal.example.org');
    expect(originAllowed(request(headers), settings({ trustProxy: true }), 8080)).toBe(true);
    expect(originAllowed(request(headers), settings({ trustProxy: false }), 8080)).toBe(false);
    // The proxy's scheme counts: an https page is not the http origin.
    expect(
      originAllowed(
        request({ ...headers, origin: 'http://portal.example.org' }),
        settings({ trustProxy: true }),
        8080,
      ),
    ).toBe(false);
    // No forwarded headers: the connection's scheme and the Host header.
    expect(forwardedOrigin(request({ host: 'vdi.lan:8080' }))).toBe('http://vdi.lan:8080');
    expect(forwardedOrigin(request({ host: 'vdi.lan' }, true))).toBe('https://vdi.lan');
  });

  it('normalises origins', () => {
    expect(normalizeOrigin('HTTP://Example.org:80')).toBe('http://example.org');
    expect(normalizeOrigin('null')).toBeUndefined();
    expect(normalizeOrigin('javascript:alert(1)')).toBeUndefined();
  });
});
