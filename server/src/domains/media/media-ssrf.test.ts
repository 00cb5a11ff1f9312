/**
 * Server-side request forgery through the media calls (POST /media, POST /media/download/{id}):
 * every URL that points inside (private ranges, loopback, link-local and cloud metadata, CGNAT,
 * IPv6 forms, integer, octal and hex spellings, names resolving to loopback, a redirect to
 * loopback) or that is not a plain http(s) URL answers 400 with its code, stores nothing, and
 * reaches nothing: listeners on the loopback addresses, on the port every URL names, count zero
 * connections; and the allowed source behind the redirect is the only one ever reached.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import { media } from '../../platform/db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { userRow } from '../../../test/support/fixtures.ts';
import { startMediaSource, type MediaSource } from '../../../test/support/media-source.ts';

let t: TestApp;
let source: MediaSource;
let token: string;
let accepted = 0;
const listeners: net.Server[] = [];
let P = 0;

/** A listener counting the connections it accepts, on `host` and the shared port. */
function listen(host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => {
      accepted++;
      socket.destroy();
    });
    server.once('error', reject);
    server.listen({ host, port, ipv6Only: host === '::1' }, () => {
      listeners.push(server);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : 0);
    });
  });
}

beforeAll(async () => {
  P = await listen('127.0.0.1', 0);
  await listen('127.0.0.2', P);
  await listen('::1', P);
  source = await startMediaSource();
  t = await buildTestApp(await createTestDatabase(), { mediaAllowedHosts: [source.host] });
  token = await login(t.app, 'advanced');
});
afterAll(async () => {
  await t.close();
  await source.close();
  await Promise.all(listeners.map((s) => new Promise((r) => s.close(r))));
});

const mediaRows = async () => JSON.stringify(await t.app.db.select().from(media).orderBy(media.id));

const post = (url: string) =>
  injectWithToken(t.app, token, {
    method: 'POST',
    url: '/api/v3/media',
    payload: { name: 'ssrf probe', kind: 'iso', url },
  });

describe('media URL checks (SSRF)', () => {
  it('refuses every inside address with media_url_not_valid, storing nothing and connecting nowhere', async () => {
    const urls = [
      `http://127.0.0.1:${P}/a.iso`,
      `http://127.0.0.2:${P}/a.iso`,
      `https://127.0.0.1:${P}/a.iso`,
      `http://2130706433:${P}/`,
      `http://0177.0.0.1:${P}/`,
      `http://0x7f.1:${P}/`,
      `http://127.1:${P}/`,
      `http://[::1]:${P}/`,
      `http://[::ffff:127.0.0.1]:${P}/`,
      `http://[::ffff:127.0.0.2]:${P}/`,
      `http://0.0.0.0:${P}/`,
      `http://[::]:${P}/`,
      `http://localhost:${P}/`,
      `http://localhost/`,
      'http://10.0.0.1/',
      'http://10.1.2.3/a.iso',
      'http://172.16.0.1/',
      'http://172.20.10.10/',
      'http://192.168.0.1/',
      'http://100.64.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://[fc00::1]/',
      'http://[fe80::1]/',
      'http://224.0.0.251/',
      'https://db/',
      'https://redis/',
      'https://127.0.0.1.nip.io/',
    ];
    const before = await mediaRows();
    for (const url of urls) {
      const res = await post(url);
      expect([url, res.statusCode]).toEqual([url, 400]);
      expectErrorShape(res.json(), 'bad_request');
      expect([url, res.json<{ description_code: string }>().description_code]).toEqual([
        url,
        'media_url_not_valid',
      ]);
    }
    expect(await mediaRows()).toBe(before);
    expect(accepted).toBe(0);
    // The answer never tells where an inside name points.
    const named = await post(`http://localhost:${P}/`);
    expect(named.json<{ description: string }>().description).not.toMatch(/127\.0\.0\.1|::1/);
  });

  it('refuses other schemes, credentials and other ports with media_url_bad_format', async () => {
    const urls = [
      'file:///etc/passwd',
      'ftp://example.org/a.iso',
      'gopher://example.org/',
      'data:application/octet-stream;base64,Q0QwMDE=',
      `http://user:secret@127.0.0.1:${P}/`,
      `http://${source.host}@example.org/`,
    ];
    const before = await mediaRows();
    for (const url of urls) {
      const res = await post(url);
      expect([url, res.statusCode]).toEqual([url, 400]);
      expect([url, res.json<{ description_code: string }>().description_code]).toEqual([
        url,
        'media_url_bad_format',
      ]);
    }
    // A public literal address on another port than its scheme's: refused for the port.
    const port = await post('http://93.184.216.34:22/');
    expect(port.statusCode).toBe(400);
    expect(port.json()).toMatchObject({ description_code: 'media_url_bad_format' });
    expect(await mediaRows()).toBe(before);
    expect(accepted).toBe(0);
  });

  it('refuses a redirect from the allowed source to loopback without connecting there', async () => {
    const before = await mediaRows();
    const reached = source.connections();
    for (const to of [
      `http://127.0.0.1:${P}/a.iso`,
      `http://[::1]:${P}/`,
      `http://localhost:${P}/`,
    ]) {
      const res = await post(source.url(`/redirect?to=${encodeURIComponent(to)}`));
      expect([to, res.statusCode]).toEqual([to, 400]);
      expect(res.json()).toMatchObject({ description_code: 'media_url_not_valid' });
    }
    expect(source.connections()).toBe(reached + 3);
    expect(await mediaRows()).toBe(before);
    expect(accepted).toBe(0);
  });

  it('checks a retried download again: a stored URL that now points inside is refused, unconnected', async () => {
    const owner = await userRow(t.app, 'advanced');
    await t.app.media.create({
      id: 'failed-inside',
      name: 'failed inside',
      kind: 'iso',
      status: 'downloadfailed',
      url: `http://127.0.0.1:${P}/a.iso`,
      userId: owner.id,
      categoryId: owner.categoryId,
      groupId: owner.groupId,
    });
    const res = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/api/v3/media/download/failed-inside',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ description_code: 'media_url_not_valid' });
    expect((await t.app.media.list({ where: eq(media.id, 'failed-inside') }))[0]?.status).toBe(
      'downloadfailed',
    );
    expect(accepted).toBe(0);
  });

  it('still downloads from the allowed source (the check refuses only what it must)', async () => {
    const res = await post(source.url('/grub.iso'));
    expect(res.statusCode, res.body).toBe(200);
  });
});
