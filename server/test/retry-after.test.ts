/**
 * Every 429 the server can send carries `Retry-After`: the login ban, the media downloads beyond
 * a user's parallel limit, migration-code imports, wrong registration codes, and a console
 * upgrade beyond the proxy's limits. Each case drives the real limit until it answers 429.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from './support/helper.ts';
import { startMediaSource, type MediaSource } from './support/media-source.ts';
import { TicketStore } from '../src/platform/viewers/tickets.ts';
import { MAX_PER_DESKTOP, VNC_WS_PATH, VncProxy } from '../src/platform/viewers/vnc-proxy.ts';

let t: TestApp;
let source: MediaSource;

beforeAll(async () => {
  source = await startMediaSource();
  t = await buildTestApp(await createTestDatabase(), {
    mediaAllowedHosts: [source.host],
    mediaDownloadsPerUser: 3,
  });
});
afterAll(async () => {
  await t.close();
  await source.close();
});

interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  json(): unknown;
}

/** A 429 in our error shape whose Retry-After is a date in the future or a number of seconds. */
function expectRetryAfter(res: Answer, what: string) {
  expect(res.statusCode, what).toBe(429);
  expectErrorShape(res.json(), 'too_many_requests');
  const header = res.headers['retry-after'];
  expect(typeof header, `${what}: Retry-After`).toBe('string');
  const value = String(header);
  if (/^\d+$/.test(value)) expect(Number(value), what).toBeGreaterThan(0);
  else expect(Date.parse(value), what).toBeGreaterThan(Date.now() - 1000);
}

describe('every 429 carries Retry-After', () => {
  it('the login ban', async () => {
    let last: Answer | undefined;
    for (let i = 0; i < 11; i++) last = await loginRequest(t.app, 'manager', `wrong-${i}`);
    expectRetryAfter(last as Answer, 'login');
  });

  it('the fourth parallel media download of one user', async () => {
    const token = await login(t.app, 'advanced');
    const create = (n: number) =>
      injectWithToken(t.app, token, {
        method: 'POST',
        url: '/api/v3/media',
        payload: { name: `slow ${n}`, kind: 'iso', url: source.url('/grub.iso?rate=20000') },
      });
    for (const n of [1, 2, 3]) expect((await create(n)).statusCode).toBe(200);
    const fourth = await create(4);
    expectRetryAfter(fourth, 'media download');
    for (const row of await t.app.media.list({}))
      if (row.status === 'downloading')
        await injectWithToken(t.app, token, {
          method: 'POST',
          url: `/api/v3/media/abort/${row.id}`,
        });
  });

  it('migration-code imports past 5 a minute', async () => {
    const token = await login(t.app, 'user');
    let last: Answer | undefined;
    for (let i = 0; i < 6; i++)
      last = await injectWithToken(t.app, token, {
        method: 'POST',
        url: '/api/v3/user_migration/import',
        payload: { token: `wrong.code.${i}` },
      });
    expectRetryAfter(last as Answer, 'migration import');
  });

  it('wrong registration codes past 10 per address', async () => {
    const token = await t.app.tokens.signSpecial('register', 'newcomer', 600, {
      jti: 'jti-newcomer',
      category_id: 'default',
      username: 'newcomer',
      name: 'newcomer',
      email: 'newcomer@example.org',
      provider: 'local',
    });
    let last: Answer | undefined;
    for (let i = 0; i < 11; i++)
      last = await injectWithToken(t.app, token, {
        method: 'POST',
        url: '/api/v3/user/register',
        payload: { code: `GUESS-${i}`, password: 'Coded-pass-1', password_confirmation: 'x' },
      });
    expectRetryAfter(last as Answer, 'registration code');
  });

  it('a console upgrade beyond the proxy limit (a raw HTTP answer)', async () => {
    const tickets = new TicketStore();
    let release: () => void = () => undefined;
    const hold = new Promise<void>((r) => (release = r));
    const wss = new WebSocketServer({ noServer: true });
    const proxy = new VncProxy({
      tickets,
      log: { warn: () => undefined },
      originAllowed: () => true,
      // Every lookup waits until the end: the upgrades before the refused one hold their slots.
      target: async () => {
        await hold;
        return { ownerOk: false, running: false, port: 0 };
      },
    });
    const http: HttpServer = createHttpServer();
    http.on('upgrade', (req, socket, head) => proxy.handleUpgrade(req, socket, head, wss));
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    const address = http.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const sockets: WebSocket[] = [];
    try {
      const upgrade = () =>
        new Promise<{ status: number; retryAfter: string | undefined }>((resolve) => {
          const { ticket } = tickets.issue({
            userId: 'u1',
            desktopId: 'd1',
            sessionId: 's1',
            protocol: 'vnc',
          });
          const ws = new WebSocket(`ws://127.0.0.1:${port}${VNC_WS_PATH}?ticket=${ticket}`, {
            headers: { origin: 'http://portal.test' },
          });
          sockets.push(ws);
          ws.on('unexpected-response', (_req, res) =>
            resolve({
              status: res.statusCode ?? 0,
              retryAfter: res.headers['retry-after'],
            }),
          );
          ws.on('error', () => resolve({ status: -1, retryAfter: undefined }));
        });
      // The first MAX_PER_DESKTOP wait for their target; the next one is refused at once.
      for (let i = 0; i < MAX_PER_DESKTOP; i++) void upgrade();
      await new Promise((r) => setTimeout(r, 100));
      const refused = await upgrade();
      expect(refused.status).toBe(429);
      expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    } finally {
      release();
      for (const ws of sockets) ws.terminate();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
      wss.close();
    }
  });
});
