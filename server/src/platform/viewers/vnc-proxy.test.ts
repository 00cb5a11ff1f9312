/**
 * The VNC proxy's limits and revocation on a plain HTTP server, with a TCP echo server standing in
 * for the VNC listeners (the per-user limit needs more running desktops than a test should start;
 * server/src/domains/desktops/consoles-hardening.test.ts covers the proxy against a real QEMU).
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { TicketStore } from './tickets.ts';
import { MAX_PER_DESKTOP, MAX_PER_USER, VNC_WS_PATH, VncProxy } from './vnc-proxy.ts';

let http: HttpServer;
let echo: TcpServer;
let base: string;
let echoPort: number;
const tickets = new TicketStore();
const wss = new WebSocketServer({ noServer: true });
const open: WebSocket[] = [];
/** Target lookups take this long, as a database read would: upgrades overlap while they wait. */
const LOOKUP_MS = 30;
/** When set, lookups wait for it instead (a test holds an upgrade in flight). */
let hold: Promise<unknown> | undefined;

const proxy = new VncProxy({
  tickets,
  log: { warn: () => undefined },
  originAllowed: (req) => req.headers.origin === 'http://portal.test',
  async target() {
    await (hold ?? new Promise((r) => setTimeout(r, LOOKUP_MS)));
    return { ownerOk: true, running: true, port: echoPort };
  },
});

const portOf = (server: HttpServer | TcpServer) => {
  const a = server.address();
  return typeof a === 'object' && a ? a.port : 0;
};

beforeAll(async () => {
  echo = createTcpServer((socket) => socket.pipe(socket));
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  echoPort = portOf(echo);
  http = createHttpServer();
  http.on('upgrade', (req, socket, head) => proxy.handleUpgrade(req, socket, head, wss));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `ws://127.0.0.1:${portOf(http)}${VNC_WS_PATH}`;
});

afterAll(async () => {
  for (const ws of open) ws.terminate();
  await new Promise((r) => http.close(r));
  await new Promise((r) => echo.close(r));
  wss.close();
});

function ticketFor(userId: string, desktopId: string, sessionId: string | undefined): string {
  return tickets.issue({ userId, desktopId, protocol: 'vnc', ...(sessionId ? { sessionId } : {}) })
    .ticket;
}

function connect(ticket: string): Promise<{ status: number; ws: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base}?ticket=${ticket}`, {
      headers: { origin: 'http://portal.test' },
    });
    open.push(ws);
    ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, ws }));
    ws.on('open', () => resolve({ status: 101, ws }));
    ws.on('error', () => resolve({ status: -1, ws }));
  });
}

const closeAll = async (list: { ws: WebSocket }[]) => {
  for (const { ws } of list) ws.terminate();
  const end = Date.now() + 3000;
  while (['d1', 'd2', 'd3'].some((d) => proxy.count(d) > 0) && Date.now() < end)
    await new Promise((r) => setTimeout(r, 20));
};

describe('VncProxy', () => {
  it('holds 4 per desktop and 10 per user when 15 upgrades of one user on 3 desktops arrive together', async () => {
    const requests = ['d1', 'd2', 'd3'].flatMap((d) =>
      Array.from({ length: 5 }, () => ({ desktop: d, ticket: ticketFor('u1', d, 's1') })),
    );
    const results = await Promise.all(requests.map((r) => connect(r.ticket)));
    const opened = results.filter((r) => r.status === 101);
    expect(opened).toHaveLength(MAX_PER_USER);
    expect(results.filter((r) => r.status === 429)).toHaveLength(15 - MAX_PER_USER);
    for (const d of ['d1', 'd2', 'd3']) {
      const n = requests.filter((r, i) => r.desktop === d && results[i]?.status === 101).length;
      expect(n, d).toBeLessThanOrEqual(MAX_PER_DESKTOP);
    }
    // Another user still gets a console on a desktop with a free slot.
    const free = ['d1', 'd2', 'd3'].find((d) => proxy.count(d) < MAX_PER_DESKTOP) ?? 'd1';
    const other = await connect(ticketFor('u2', free, 's2'));
    expect(other.status).toBe(101);
    await closeAll([...results, other]);
  });

  it('refuses a ticket that belongs to no session, and closes the consoles of an ended session at once', async () => {
    expect((await connect(ticketFor('u1', 'd1', undefined))).status).toBe(401);
    const a = await connect(ticketFor('u1', 'd1', 'ending'));
    const b = await connect(ticketFor('u1', 'd2', 'staying'));
    expect([a.status, b.status]).toEqual([101, 101]);
    const closedAt = new Promise<number>((r) => a.ws.once('close', () => r(Date.now())));
    const started = Date.now();
    proxy.closeSession('ending');
    expect((await closedAt) - started).toBeLessThan(1000);
    expect(b.ws.readyState).toBe(WebSocket.OPEN);
    // Unused tickets of the ended session are gone too.
    const unused = ticketFor('u1', 'd3', 'ending2');
    proxy.closeSession('ending2');
    expect((await connect(unused)).status).toBe(401);
    await closeAll([a, b]);
  });

  it('frees the slot of an upgrade refused after the lookup', async () => {
    // A session ends while its upgrade waits for the lookup: refused, and the slot is free again.
    let release: (value?: unknown) => void = () => undefined;
    hold = new Promise((r) => (release = r));
    const pending = connect(ticketFor('u3', 'd1', 's3'));
    const end = Date.now() + 3000;
    while (proxy.count('d1') === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 5));
    expect(proxy.count('d1')).toBe(1);
    proxy.closeSession('s3');
    expect(proxy.count('d1')).toBe(0);
    release();
    hold = undefined;
    expect((await pending).status).toBe(403);
    expect(proxy.count('d1')).toBe(0);
  });
});
