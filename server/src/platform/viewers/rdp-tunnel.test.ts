/**
 * The RDP tunnel on a plain HTTP server against the guacd DOUBLE (tests/support/guacd-double.ts,
 * a Guacamole-protocol stand-in: guacd is not packaged here): the handshake it makes for the
 * desktop, the relay both ways, the ticket rules, the refusal of a desktop without an address,
 * an unreachable guacd, and the close of a console within a second of its session's end.
 * server/src/domains/desktops/rdp-console.test.ts covers the tunnel inside the portal.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import {
  startGuacdDouble,
  TEST_PATTERN,
  type GuacdDouble,
} from '../../../../tests/support/guacd-double.ts';
import { encode, parseInstructions, type Instruction } from './guacamole-protocol.ts';
import { RDP_WS_PATH, RdpTunnel, screenOf, type RdpTarget } from './rdp-tunnel.ts';
import { TicketStore } from './tickets.ts';

let http: HttpServer;
let base: string;
let guacd: GuacdDouble;
const guacdAddress = { host: '127.0.0.1', port: 0 };
const tickets = new TicketStore();
const wss = new WebSocketServer({ noServer: true });
const open: WebSocket[] = [];
const desktops = new Map<string, RdpTarget>();

const tunnel = new RdpTunnel({
  tickets,
  log: { warn: () => undefined },
  originAllowed: (req) => req.headers.origin === 'http://portal.test',
  guacd: guacdAddress,
  handshakeTimeoutMs: 3000,
  async target(desktopId) {
    await new Promise((r) => setTimeout(r, 5));
    return (
      desktops.get(desktopId) ?? {
        ownerOk: false,
        running: false,
        address: null,
        credentials: { username: '', password: '' },
      }
    );
  },
});

const portOf = (server: { address(): unknown }) => {
  const a = server.address() as { port?: number } | null;
  return a?.port ?? 0;
};

beforeAll(async () => {
  guacd = await startGuacdDouble();
  guacdAddress.port = guacd.port;
  http = createHttpServer();
  http.on('upgrade', (req, socket, head) => tunnel.handleUpgrade(req, socket, head, wss));
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  base = `ws://127.0.0.1:${portOf(http)}${RDP_WS_PATH}`;
});

afterAll(async () => {
  for (const ws of open) ws.terminate();
  await new Promise((r) => http.close(r));
  await guacd.stop();
  wss.close();
});

beforeEach(() => {
  guacdAddress.port = guacd.port;
  desktops.set('d1', {
    ownerOk: true,
    running: true,
    address: '10.20.0.7',
    credentials: { username: 'isard', password: 'pa,ss;1.' },
  });
});

const ticketFor = (desktopId = 'd1', sessionId = 's1', protocol: 'rdp' | 'vnc' = 'rdp') =>
  tickets.issue({ userId: 'u1', desktopId, protocol, sessionId }).ticket;

interface Console {
  status: number;
  ws: WebSocket;
  /** Every instruction received so far. */
  received: Instruction[];
  /** Waits for an instruction with this opcode, or that passes `test` (5 s). */
  waitFor(opcode: string, test?: (i: Instruction) => boolean): Promise<Instruction>;
  closed: Promise<number>;
}

function openConsole(ticket: string, query = 'width=800&height=600&dpi=120'): Promise<Console> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${base}?ticket=${ticket}&${query}`, 'guacamole', {
      headers: { origin: 'http://portal.test' },
    });
    open.push(ws);
    const received: Instruction[] = [];
    const waiters: (() => void)[] = [];
    ws.on('message', (data: Buffer) => {
      received.push(...parseInstructions(data.toString('utf8')).instructions);
      for (const w of waiters.splice(0)) w();
    });
    const closed = new Promise<number>((r) => ws.once('close', () => r(Date.now())));
    const waitFor = async (opcode: string, test = (_i: Instruction) => true) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const found = received.find((i) => i.opcode === opcode && test(i));
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`no ${opcode} after 5 s`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    };
    const console = (status: number): Console => ({ status, ws, received, waitFor, closed });
    ws.on('unexpected-response', (_req, res) => resolve(console(res.statusCode ?? 0)));
    ws.on('open', () => resolve(console(101)));
    ws.on('error', () => resolve(console(-1)));
  });
}

describe('RdpTunnel against the guacd double', () => {
  it('makes the handshake for the desktop (its address, port 3389, guest credentials, the page size) and relays both ways', async () => {
    const before = guacd.sessions.length;
    const c = await openConsole(ticketFor());
    expect(c.status).toBe(101);
    expect(c.ws.protocol).toBe('guacamole');
    // The tunnel's UUID first, then what guacd draws after `ready`.
    await c.waitFor('sync');
    expect(c.received[0]?.opcode).toBe('');
    expect(c.received[0]?.args[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(c.received.map((i) => i.opcode)).not.toContain('ready');
    const size = c.received.find((i) => i.opcode === 'size');
    expect(size?.args).toEqual(['0', String(TEST_PATTERN.width), String(TEST_PATTERN.height)]);
    expect(c.received.filter((i) => i.opcode === 'cfill')).toHaveLength(4);

    const session = guacd.sessions[before];
    expect(session?.problems).toEqual([]);
    expect(session?.select).toEqual(['rdp']);
    expect(session?.size).toEqual(['800', '600', '120']);
    expect(session?.image).toContain('image/png');
    expect(session?.args).toMatchObject({
      VERSION_1_5_0: 'VERSION_1_5_0',
      hostname: '10.20.0.7',
      port: '3389',
      username: 'isard',
      password: 'pa,ss;1.',
      security: 'any',
      'ignore-cert': 'true',
      width: '800',
      height: '600',
      dpi: '120',
      'resize-method': 'display-update',
      // Never taken from the client: no gateway, no program.
      'gateway-hostname': '',
      'initial-program': '',
    });

    // The page's pings are answered by the tunnel; its instructions reach guacd.
    c.ws.send(encode('', 'ping', 12345));
    const pong = await c.waitFor('', (i) => i.args[0] === 'ping');
    expect(pong.args).toEqual(['ping', '12345']);
    c.ws.send(encode('key', 65, 1));
    c.ws.send(encode('mouse', 10, 20, 1));
    const deadline = Date.now() + 3000;
    while ((session?.after.length ?? 0) < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(session?.after).toEqual([
      { opcode: 'key', args: ['65', '1'] },
      { opcode: 'mouse', args: ['10', '20', '1'] },
    ]);
    c.ws.close();
    await c.closed;
  });

  it('refuses a missing, used or VNC ticket and a foreign origin, before guacd is dialled', async () => {
    const before = guacd.sessions.length;
    expect((await openConsole('not-a-ticket')).status).toBe(401);
    const ticket = ticketFor();
    const first = await openConsole(ticket);
    expect(first.status).toBe(101);
    expect((await openConsole(ticket)).status).toBe(401);
    expect((await openConsole(ticketFor('d1', 's1', 'vnc'))).status).toBe(401);
    const foreign = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${base}?ticket=${ticketFor()}`, 'guacamole', {
        headers: { origin: 'http://evil.test' },
      });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
    });
    expect(foreign).toBe(403);
    await first.waitFor('sync');
    first.ws.close();
    expect(guacd.sessions.length - before).toBe(1);
  });

  it('refuses a desktop without an address with the viewer_no_address error, and one that is not running', async () => {
    const before = guacd.sessions.length;
    desktops.set('d2', {
      ownerOk: true,
      running: true,
      address: null,
      credentials: { username: 'u', password: 'p' },
    });
    const c = await openConsole(ticketFor('d2'));
    const error = await c.waitFor('error');
    expect(error.args).toEqual(['viewer_no_address', String(0x0204)]);
    await c.closed;
    desktops.set('d3', {
      ownerOk: true,
      running: false,
      address: '10.20.0.8',
      credentials: { username: 'u', password: 'p' },
    });
    const stopped = await openConsole(ticketFor('d3'));
    expect((await stopped.waitFor('error')).args[0]).toBe('viewer_not_started');
    expect(guacd.sessions.length).toBe(before);
  });

  it('says rdp_service_not_running when guacd cannot be reached', async () => {
    const probe = createTcpServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    guacdAddress.port = portOf(probe);
    await new Promise((r) => probe.close(r));
    const c = await openConsole(ticketFor());
    expect((await c.waitFor('error')).args).toEqual(['rdp_service_not_running', String(0x0207)]);
    await c.closed;
  });

  it('closes the console within a second of its session ending, and the guacd connection with it', async () => {
    const before = guacd.sessions.length;
    const ending = await openConsole(ticketFor('d1', 'ending'));
    const staying = await openConsole(ticketFor('d1', 'staying'));
    await ending.waitFor('sync');
    await staying.waitFor('sync');
    expect(tunnel.sessions()).toEqual(new Set(['ending', 'staying']));
    const started = Date.now();
    tunnel.closeSession('ending');
    expect((await ending.closed) - started).toBeLessThan(1000);
    expect(ending.received.some((i) => i.opcode === 'disconnect')).toBe(true);
    expect(staying.ws.readyState).toBe(WebSocket.OPEN);
    const deadline = Date.now() + 1000;
    while (!guacd.sessions[before]?.closed && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 10));
    expect(guacd.sessions[before]?.closed).toBe(true);
    expect(guacd.sessions[before + 1]?.closed).toBe(false);
    // Unused tickets of the ended session are gone too.
    const unused = ticketFor('d1', 'ending2');
    tunnel.closeSession('ending2');
    expect((await openConsole(unused)).status).toBe(401);
    tunnel.closeDesktop('d1');
    await staying.closed;
    expect(tunnel.count('d1')).toBe(0);
  });
});

describe('what the page may choose', () => {
  it('bounds the screen and takes only a well-formed layout and time zone', () => {
    const q = (text: string) => screenOf(new URLSearchParams(text));
    expect(q('width=800&height=600&dpi=120&layout=de-de-qwertz&timezone=Europe/Madrid')).toEqual({
      width: 800,
      height: 600,
      dpi: 120,
      layout: 'de-de-qwertz',
      timezone: 'Europe/Madrid',
    });
    expect(q('width=99999&height=1&dpi=x&layout=../../etc&timezone=a;b')).toEqual({
      width: 7680,
      height: 200,
      dpi: 96,
      layout: 'en-us-qwerty',
      timezone: null,
    });
    expect(q('')).toMatchObject({ width: 1024, height: 768, dpi: 96 });
  });
});
