/**
 * The download and console limits of two portal nodes on one PostgreSQL: counted in the database,
 * so the two nodes together admit what one node admits (3 downloads per user and, here, 4 in all;
 * 4 consoles per desktop), whichever node each request reaches.
 */
import { createServer as createTcpServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import WebSocket from 'ws';
import { media } from '../../platform/db/schema.ts';
import { VNC_WS_PATH } from '../../platform/viewers/vnc-proxy.ts';
import type { Desktop } from '../../../../src/generated/types.ts';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addUser } from '../../../test/support/fixtures.ts';
import { startMediaSource, type MediaSource } from '../../../test/support/media-source.ts';
import { until } from '../../../test/support/wait.ts';
import { MEDIA_DOWNLOAD_SLOT } from './media-downloads.ts';

let source: MediaSource;
let a: TestApp;
let b: TestApp;
const bases = new Map<TestApp, string>();
let serial = 0;

beforeAll(async () => {
  source = await startMediaSource();
  const url = await createTestDatabase();
  const options = { mediaAllowedHosts: [source.host], mediaDownloadsTotal: 4 };
  a = await buildTestApp(url, { ...options, nodeName: 'node-a' });
  b = await buildTestApp(url, { ...options, nodeName: 'node-b' });
  for (const t of [a, b]) {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address();
    bases.set(t, `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`);
  }
  await addUser(a.app, {
    username: 'second-advanced',
    role: 'advanced',
    categoryId: 'default',
    groupId: 'default-advanced',
  });
});
afterAll(async () => {
  await a.close();
  await b.close();
  await source.close();
});

/** POST /media of a slow download on a node; answers the status and the medium's id. */
async function download(t: TestApp, token: string) {
  const name = `cluster medium ${++serial}`;
  const res = await injectWithToken(t.app, token, {
    method: 'POST',
    url: '/api/v3/media',
    payload: { name, kind: 'iso', url: source.url('/grub.iso?rate=50000') },
  });
  const row = (await t.app.media.list({ where: eq(media.name, name) }))[0];
  return { status: res.statusCode, body: res.json<Record<string, unknown>>(), id: row?.id ?? '' };
}

describe('limits counted across two nodes', () => {
  it('admits 3 downloads of a user and 4 in all over both nodes', async () => {
    const first = await login(a.app, 'advanced');
    const second = await login(b.app, 'second-advanced');
    const started: { t: TestApp; token: string; id: string }[] = [];
    for (const t of [a, b, a]) {
      const made = await download(t, first);
      expect(made.status, JSON.stringify(made.body)).toBe(200);
      started.push({ t, token: first, id: made.id });
    }
    for (const t of [a, b]) {
      const refused = await download(t, first);
      expect(refused.status).toBe(429);
      expect(refused.body).toMatchObject({
        description_code: 'media_downloads_limit',
        params: { scope: 'user', limit: 3 },
      });
    }
    const fourth = await download(b, second);
    expect(fourth.status).toBe(200);
    started.push({ t: b, token: second, id: fourth.id });
    const full = await download(a, second);
    expect(full.status).toBe(429);
    expect(full.body).toMatchObject({ params: { scope: 'server', limit: 4 } });
    expect(await a.app.slots.count(MEDIA_DOWNLOAD_SLOT)).toBe(4);
    // Each node runs its own downloads: the slots come back as they stop.
    for (const { t, token, id } of started) {
      const res = await injectWithToken(t.app, token, {
        method: 'POST',
        url: `/api/v3/media/abort/${id}`,
      });
      expect(res.statusCode).toBe(200);
    }
    expect(await b.app.slots.count(MEDIA_DOWNLOAD_SLOT)).toBe(0);
    expect((await download(b, first)).status).toBe(200);
  });

  it('admits 4 consoles of a desktop over both nodes', async () => {
    // A TCP echo server stands in for the desktop's VNC listener; the reconcilers stop first (a
    // "started" desktop without a QEMU process would be marked failed under the test).
    await a.app.engine.close();
    await b.app.engine.close();
    const listener: Server = createTcpServer((sock) => sock.pipe(sock));
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const addr = listener.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    const token = await login(a.app, 'user');
    const claims = decodePayload(token);
    const target = (
      await injectWithToken(a.app, token, { method: 'GET', url: '/api/v3/user/desktops' })
    ).json<Desktop[]>()[0];
    const id = target?.id ?? '';
    await a.app.desktops.update(id, {
      state: 'started',
      runtime: { vncPort: port, spicePort: port },
    });
    const sockets: WebSocket[] = [];
    /** Opens a console served by node t: answers 'open' or the refusal's HTTP status. */
    const openConsole = async (t: TestApp): Promise<'open' | number> => {
      const { ticket } = t.app.viewers.tickets.issue({
        userId: String(claims.sub),
        sessionId: String(claims.session_id),
        desktopId: id,
        protocol: 'vnc',
      });
      const base = bases.get(t) ?? '';
      const ws = new WebSocket(`${base.replace('http', 'ws')}${VNC_WS_PATH}?ticket=${ticket}`, {
        headers: { origin: base },
      });
      sockets.push(ws);
      return new Promise((resolve, reject) => {
        ws.once('open', () => resolve('open'));
        ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        ws.once('error', reject);
      });
    };
    try {
      expect([await openConsole(a), await openConsole(b), await openConsole(a)]).toEqual([
        'open',
        'open',
        'open',
      ]);
      expect(await openConsole(b)).toBe('open');
      expect(await openConsole(a)).toBe(429);
      expect(await openConsole(b)).toBe(429);
      // One console closed on node B: node A may open one again.
      const closing = sockets[1];
      closing?.close();
      await until(
        () => a.app.slots.count('vnc-console'),
        (n) => n === 3,
        2000,
        10,
      );
      expect(await openConsole(a)).toBe('open');
    } finally {
      for (const ws of sockets) ws.terminate();
      await a.app.desktops.update(id, { state: 'stopped', runtime: {} });
      await new Promise((resolve) => listener.close(resolve));
    }
  });
});

describe('media settled across two nodes', () => {
  it('leaves a download another node runs to it, and fails one whose node is gone', async () => {
    const token = await login(a.app, 'advanced');
    const running = await download(a, token);
    expect(running.status).toBe(200);
    // A medium left downloading by a node that died: nobody holds its lease.
    const left = (
      await a.app.database.query<{ id: string }>(
        "SELECT id FROM media WHERE status = 'downloaded' LIMIT 1",
      )
    )[0];
    expect(left).toBeDefined();
    await a.app.database.query("UPDATE media SET status = 'downloading' WHERE id = $1", [left?.id]);
    // What node B does at boot (and, as the leader, every half lease).
    await b.app.mediaService.settle();
    expect((await a.app.media.get(running.id))?.status).toBe('downloading');
    expect(await a.app.media.get(left?.id ?? '')).toMatchObject({
      status: 'downloadfailed',
      failure: 'incomplete',
    });
    await injectWithToken(a.app, token, {
      method: 'POST',
      url: `/api/v3/media/abort/${running.id}`,
    });
  });
});
