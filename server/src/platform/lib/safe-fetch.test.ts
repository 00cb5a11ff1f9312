/**
 * The SSRF matrix of the media fetcher, on real sockets: every refused URL is refused with its
 * code before any connection. Two counters prove it: accepts on listeners bound to the loopback
 * addresses (127.0.0.1, 127.0.0.2, ::1) on the port every URL names, and every call that would
 * open a TCP connection in this process (net.Socket#connect).
 */
import http from 'node:http';
import net from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  allowedHostKeys,
  MediaUrlError,
  openUrl,
  systemResolver,
  type FetchPolicy,
  type Resolver,
} from './safe-fetch.ts';

interface Counter {
  port: number;
  accepts(): number;
  reset(): void;
  close(): Promise<void>;
}

/** Listeners on 127.0.0.1, 127.0.0.2 and ::1, one port, counting the connections they accept. */
async function countingListeners(): Promise<Counter> {
  let accepted = 0;
  const servers: net.Server[] = [];
  const listen = (host: string, port: number) =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer((socket) => {
        accepted++;
        socket.destroy();
      });
      server.once('error', reject);
      server.listen({ host, port, ipv6Only: host === '::1' }, () => {
        servers.push(server);
        const addr = server.address();
        resolve(typeof addr === 'object' && addr ? addr.port : 0);
      });
    });
  const port = await listen('127.0.0.1', 0);
  await listen('127.0.0.2', port);
  await listen('::1', port);
  return {
    port,
    accepts: () => accepted,
    reset: () => {
      accepted = 0;
    },
    close: () =>
      Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r())))).then(
        () => undefined,
      ),
  };
}

const ISO_BODY = Buffer.alloc(40_000, 7);

/** The source the tests may reach (named in allowedHosts): ISO bytes, redirects, errors, a hang. */
function sourceServer(): Promise<{ server: http.Server; port: number; requests: () => number }> {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? '/', 'http://source');
    const chain = /^\/chain\/(\d+)$/.exec(url.pathname);
    if (url.pathname === '/iso') {
      res.writeHead(200, { 'content-length': ISO_BODY.length });
      res.end(ISO_BODY);
    } else if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      res.end();
    } else if (chain) {
      const left = Number(chain[1]);
      if (left === 0) res.end('done');
      else {
        res.writeHead(301, { location: `/chain/${left - 1}` });
        res.end();
      }
    } else if (url.pathname === '/missing') {
      res.writeHead(404);
      res.end();
    } else if (url.pathname === '/broken') {
      res.writeHead(500);
      res.end();
    } else if (url.pathname === '/hang') {
      // never answers
    } else {
      res.writeHead(400);
      res.end();
    }
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve({
        server,
        port: typeof addr === 'object' && addr ? addr.port : 0,
        requests: () => requests,
      });
    }),
  );
}

/** A resolver answering from a table (several answers per name), the system one otherwise. */
function stubResolver(table: Record<string, string[][]>): Resolver & { calls: () => number } {
  const seen = new Map<string, number>();
  let calls = 0;
  const resolver = async (hostname: string): Promise<LookupAddress[]> => {
    calls++;
    const answers = table[hostname];
    if (!answers) return [...(await systemResolver(hostname))];
    const n = seen.get(hostname) ?? 0;
    seen.set(hostname, n + 1);
    const pick = answers[Math.min(n, answers.length - 1)] ?? [];
    return pick.map((address) => ({ address, family: net.isIP(address) }));
  };
  return Object.assign(resolver, { calls: () => calls });
}

let listeners: Counter;
let source: Awaited<ReturnType<typeof sourceServer>>;
let P = 0;
const connects = vi.spyOn(net.Socket.prototype, 'connect');

beforeAll(async () => {
  listeners = await countingListeners();
  P = listeners.port;
  source = await sourceServer();
});
afterAll(async () => {
  connects.mockRestore();
  await listeners.close();
  await new Promise<void>((r) => source.server.close(() => r()));
});
afterEach(() => {
  connects.mockClear();
  listeners.reset();
});

const policy = (overrides: Partial<FetchPolicy> = {}): FetchPolicy => ({
  allowedHosts: [],
  connectTimeoutMs: 2000,
  stallTimeoutMs: 2000,
  resolve: stubResolver({
    'internal.test': [['10.0.0.5']],
    'mixed.test': [['93.184.216.34', '127.0.0.1']],
    'metadata.test': [['fd00:ec2::254']],
    'public.test': [['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']],
    'nowhere.test': [[]],
  }),
  ...overrides,
});

/** The code openUrl refuses with (null when it opened). */
async function refusal(url: string, p: FetchPolicy = policy()): Promise<string | null> {
  try {
    const opened = await openUrl(url, p);
    opened.response.destroy();
    return null;
  } catch (err) {
    if (err instanceof MediaUrlError) return err.code;
    throw err;
  }
}

describe('safe fetch: refused before any connection', () => {
  const notValid = () => [
    `http://127.0.0.1:${P}/x.iso`,
    `http://127.0.0.2:${P}/x.iso`,
    `http://127.1:${P}/`,
    `http://2130706433:${P}/`,
    `http://0177.0.0.1:${P}/`,
    `http://0x7f.1:${P}/`,
    `http://0x7f000001:${P}/`,
    `http://%31%32%37.0.0.1:${P}/`,
    `http://[::1]:${P}/`,
    `http://[::ffff:127.0.0.1]:${P}/`,
    `http://[::ffff:7f00:2]:${P}/`,
    `http://[::127.0.0.1]:${P}/`,
    `http://0.0.0.0:${P}/`,
    `http://0:${P}/`,
    `http://[::]:${P}/`,
    `http://localhost:${P}/`,
    `http://LOCALHOST.:${P}/`,
    `http://10.0.0.1:${P}/`,
    `http://10.255.255.254/`,
    `http://172.16.0.1/`,
    `http://172.31.255.254/`,
    `http://192.168.1.1/`,
    `http://100.64.0.1/`,
    `http://100.127.255.254/`,
    `http://169.254.169.254/latest/meta-data/`,
    `http://169.254.1.1/`,
    `http://[fd00:ec2::254]/`,
    `http://[fc00::1]/`,
    `http://[fe80::1]/`,
    `http://224.0.0.1/`,
    `http://255.255.255.255/`,
    `http://240.0.0.1/`,
    `http://[ff02::1]/`,
    `http://[64:ff9b::7f00:1]/`,
    `http://[2002:7f00:1::1]/`,
    `https://internal.test/`,
    `https://mixed.test/`,
    `https://metadata.test/`,
    `https://nowhere.test/`,
    `https://does-not-exist.invalid/`,
  ];
  const badFormat = () => [
    'file:///etc/passwd',
    'ftp://example.com/x.iso',
    'gopher://example.com/',
    'data:text/plain,CD001',
    'javascript:alert(1)',
    `http://user:pass@127.0.0.1:${P}/`,
    'http://user@public.test/',
    'https://public.test:22/',
    'http://93.184.216.34:8080/',
    'https://public.test:80/', // only the scheme's own default port
    'http://public.test:443/',
    'not a url',
    'http://',
  ];

  it('answers media_url_not_valid for every non-public address, spelling and name', async () => {
    for (const url of notValid())
      expect([url, await refusal(url)]).toEqual([url, 'media_url_not_valid']);
    expect(listeners.accepts()).toBe(0);
    expect(connects).not.toHaveBeenCalled();
  });

  it('answers media_url_bad_format for other schemes, credentials and ports', async () => {
    for (const url of badFormat())
      expect([url, await refusal(url)]).toEqual([url, 'media_url_bad_format']);
    expect(listeners.accepts()).toBe(0);
    expect(connects).not.toHaveBeenCalled();
  });

  it('refuses a name whose answer turns private between the check and the connection (rebinding)', async () => {
    const resolve = stubResolver({ 'rebind.test': [['93.184.216.34'], ['127.0.0.1']] });
    const code = await refusal(`http://rebind.test:${P}/x.iso`, policy({ resolve, ports: [P] }));
    expect(code).toBe('media_url_not_valid');
    expect(resolve.calls()).toBe(2); // checked, then resolved again at connect time and refused
    expect(listeners.accepts()).toBe(0);
  });

  it('refuses when the connect-time answer mixes a public and a private address', async () => {
    const resolve = stubResolver({
      'flip.test': [['93.184.216.34'], ['93.184.216.34', '127.0.0.2']],
    });
    expect(await refusal(`http://flip.test:${P}/`, policy({ resolve, ports: [P] }))).toBe(
      'media_url_not_valid',
    );
    expect(listeners.accepts()).toBe(0);
  });
});

describe('safe fetch: allowed hosts and redirects', () => {
  const trusted = () => policy({ allowedHosts: [`127.0.0.1:${source.port}`] });
  const at = (path: string) => `http://127.0.0.1:${source.port}${path}`;

  it('opens a named host:port and hands over the body with its length', async () => {
    const opened = await openUrl(at('/iso'), trusted());
    expect(opened.contentLength).toBe(ISO_BODY.length);
    const chunks: Buffer[] = [];
    opened.response.on('data', (chunk: Buffer) => chunks.push(chunk));
    await new Promise((resolve) => opened.response.once('end', resolve));
    expect(Buffer.concat(chunks).equals(ISO_BODY)).toBe(true);
  });

  it('admits only the named port: a host entry without a port admits 80 and 443 only', async () => {
    expect(allowedHostKeys('127.0.0.1')).toEqual(['127.0.0.1:80', '127.0.0.1:443']);
    expect(allowedHostKeys('LocalHost:8080')).toEqual(['localhost:8080']);
    expect(() => allowedHostKeys('http://x/')).toThrow();
    const before = source.requests();
    expect(await refusal(at('/iso'), policy({ allowedHosts: ['127.0.0.1'] }))).toBe(
      'media_url_not_valid',
    );
    expect(
      await refusal(at('/iso'), policy({ allowedHosts: [`127.0.0.1:${source.port + 1}`] })),
    ).toBe('media_url_not_valid');
    expect(source.requests()).toBe(before);
  });

  it('connects a named host name to the address its lookup answered', async () => {
    const resolve = stubResolver({ 'mirror.test': [['127.0.0.1']] });
    const opened = await openUrl(
      `http://mirror.test:${source.port}/iso`,
      policy({ allowedHosts: [`mirror.test:${source.port}`], resolve }),
    );
    expect(opened.response.statusCode).toBe(200);
    opened.response.destroy();
  });

  it('re-checks every redirect: to loopback, to ::1, to a name, to file: are refused unconnected', async () => {
    const targets: [string, string][] = [
      [`http://127.0.0.1:${P}/`, 'media_url_not_valid'],
      [`http://127.0.0.2:${P}/`, 'media_url_not_valid'],
      [`http://[::1]:${P}/`, 'media_url_not_valid'],
      [`http://localhost:${P}/`, 'media_url_not_valid'],
      ['http://169.254.169.254/latest/meta-data/', 'media_url_not_valid'],
      ['file:///etc/passwd', 'media_url_bad_format'],
    ];
    for (const [to, code] of targets)
      expect(await refusal(at(`/redirect?to=${encodeURIComponent(to)}`), trusted())).toBe(code);
    expect(listeners.accepts()).toBe(0);
  });

  it('follows five redirects and refuses the sixth', async () => {
    const opened = await openUrl(at('/chain/5'), trusted());
    expect(opened.response.statusCode).toBe(200);
    opened.response.destroy();
    expect(await refusal(at('/chain/6'), trusted())).toBe('media_url_not_valid');
  });

  it('maps 404 to media_url_not_found and other errors to media_url_not_valid', async () => {
    expect(await refusal(at('/missing'), trusted())).toBe('media_url_not_found');
    expect(await refusal(at('/broken'), trusted())).toBe('media_url_not_valid');
  });

  it('gives up on a connection that is not established within the connect timeout', async () => {
    // The connection's own lookup never answers: the socket never connects.
    const started = Date.now();
    const code = await refusal('http://silent.test/a.iso', {
      ...policy({ allowedHosts: ['silent.test'] }),
      resolve: () => new Promise<LookupAddress[]>(() => undefined),
      connectTimeoutMs: 300,
    });
    expect(code).toBe('media_url_not_valid');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('gives up on a server that accepts but never answers, after the stall timeout', async () => {
    const started = Date.now();
    expect(await refusal(at('/hang'), { ...trusted(), stallTimeoutMs: 300 })).toBe(
      'media_url_not_valid',
    );
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
