/**
 * Console access paths against one real QEMU (TCG) desktop and a real PostgreSQL:
 * - the SPICE CONNECT tunnel needs the credential of the downloaded .vv (bound to user, session,
 *   desktop and SPICE port, consumed by one SPICE session) and answers alike whatever the port;
 * - every .vv carries a fresh SPICE password and the PUBLIC_URL address, never the Host header;
 * - the VNC websocket checks the exact origin, keeps its per-desktop limit under concurrent
 *   upgrades and closes within 1 s of a revocation.
 */
import { connect as tcpConnect, createServer, type Server, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { constants as cryptoConstants, createPublicKey, publicEncrypt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eq } from 'drizzle-orm';
import { desktops, users } from '../../platform/db/schema.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import { parseIni } from '../../platform/viewers/viewer-files.ts';
import {
  buildTestApp,
  createTestDatabase,
  decodePayload,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { sleep, until } from '../../../test/support/wait.ts';
import { byteReader } from '../../../../tests/support/byte-reader.ts';

const DEMO_TEMPLATE_ID = 'demo-template';
/** The portal's configured public address: deliberately not the address the tests connect to. */
const PUBLIC_URL = 'http://vdi.test:8080';
const PORTAL_ORIGIN = 'http://vdi.test:8080';
/** A short channel window so the test can watch it end. */
const CHANNEL_WINDOW_MS = 1500;

interface ConnectAnswer {
  status: number;
  headers: Record<string, string>;
  socket: Socket;
  /** Reads exactly n more bytes of what the tunnel sends (rejects after 5 s or at its end). */
  read(n: number): Promise<Buffer>;
}

let t: TestApp;
let port: number;
let wsBase: string;
let userToken: string;
let desktopId: string;
let spicePort: number;
let vncPort: number;
let freePort: number;
const sockets: (Socket | WebSocket)[] = [];

/** Sends `CONNECT target` on a raw socket and reads the status line and headers. */
async function proxyConnect(
  target: string,
  headers: Record<string, string> = {},
  localAddress = '127.0.0.1',
): Promise<ConnectAnswer> {
  const socket = tcpConnect({ host: '127.0.0.1', port, localAddress });
  sockets.push(socket);
  const read = byteReader(socket);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${extra}\r\n`);
  let head = '';
  while (!head.endsWith('\r\n\r\n')) head += (await read(1)).toString('latin1');
  const [statusLine = '', ...lines] = head.slice(0, -4).split('\r\n');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers: Object.fromEntries(
      lines.map((l) => [
        l.slice(0, l.indexOf(':')).toLowerCase(),
        l.slice(l.indexOf(':') + 1).trim(),
      ]),
    ),
    socket,
    read,
  };
}

const basic = (user: string, secret: string) =>
  `Basic ${Buffer.from(`${user}:${secret}`).toString('base64')}`;

/** The CA certificate and server subject of the last downloaded .vv (the SPICE port is TLS only). */
let spiceTls = { ca: '', hostSubject: '' };

/**
 * Starts TLS inside an open tunnel, as remote-viewer does: the server certificate must chain to the
 * .vv's CA and carry its host subject.
 */
async function overTls(tunnel: ConnectAnswer): Promise<ConnectAnswer> {
  const secure = tlsConnect({
    socket: tunnel.socket,
    ca: spiceTls.ca,
    checkServerIdentity: (_host, cert) =>
      `CN=${cert.subject.CN}` === spiceTls.hostSubject
        ? undefined
        : new Error(`unexpected SPICE server subject CN=${cert.subject.CN}`),
  });
  await new Promise<void>((resolve, reject) => {
    secure.once('secureConnect', resolve);
    secure.once('error', reject);
  });
  return { ...tunnel, read: byteReader(secure), socket: secure };
}

/**
 * Links a SPICE channel through an open tunnel (inside TLS): sends the link message, reads QEMU's link reply
 * (magic "REDQ" and its RSA key) and, with a password, the ticket encrypted with that key. Answers
 * the magic and the link result (0 = accepted, 7 = permission denied).
 */
async function spiceLink(
  plain: ConnectAnswer,
  password: string | undefined,
  channelType = 1,
): Promise<{ magic: string; result?: number }> {
  const tunnel = await overTls(plain);
  const mess = Buffer.alloc(18);
  mess.writeUInt32LE(0, 0); // connection id: a new session
  mess.writeUInt8(channelType, 4);
  mess.writeUInt8(0, 5);
  mess.writeUInt32LE(0, 6); // no common capabilities: the server asks for the SPICE ticket at once
  mess.writeUInt32LE(0, 10);
  mess.writeUInt32LE(18, 14);
  const header = Buffer.alloc(16);
  header.write('REDQ', 0, 'latin1');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(2, 8);
  header.writeUInt32LE(mess.length, 12);
  tunnel.socket.write(Buffer.concat([header, mess]));
  const replyHeader = await tunnel.read(16);
  const magic = replyHeader.subarray(0, 4).toString('latin1');
  const reply = await tunnel.read(replyHeader.readUInt32LE(12));
  if (password === undefined) return { magic };
  const key = createPublicKey({ key: reply.subarray(4, 166), format: 'der', type: 'spki' });
  tunnel.socket.write(
    publicEncrypt(
      { key, padding: cryptoConstants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' },
      Buffer.from(`${password}\0`, 'latin1'),
    ),
  );
  return { magic, result: (await tunnel.read(4)).readUInt32LE(0) };
}

interface VvFile {
  proxy: URL;
  password: string;
  host: string;
  port: number;
}

async function downloadVv(token = userToken, host = 'evil.example:6666'): Promise<VvFile> {
  const res = await injectWithToken(t.app, token, {
    method: 'GET',
    url: `/api/v3/desktop/${desktopId}/viewer/file-spice`,
    headers: { host },
  });
  expect(res.statusCode, res.body).toBe(200);
  const ini = parseIni(res.json<{ content: string }>().content);
  // The SPICE port speaks TLS only: no plain port, every channel secured, and the CA to check.
  expect(ini.port).toBeUndefined();
  expect(ini['secure-channels']).toContain('main');
  spiceTls = { ca: (ini.ca ?? '').replaceAll('\\n', '\n'), hostSubject: ini['host-subject'] ?? '' };
  return {
    proxy: new URL(ini.proxy ?? ''),
    password: ini.password ?? '',
    host: ini.host ?? '',
    port: Number(ini['tls-port']),
  };
}

/** The Proxy-Authorization header of a .vv's proxy URL (what remote-viewer sends). */
const authOf = (vv: VvFile) => ({
  'Proxy-Authorization': basic(vv.proxy.username, vv.proxy.password),
});

async function vncUrl(token = userToken): Promise<string> {
  const res = await injectWithToken(t.app, token, {
    method: 'GET',
    url: `/api/v3/desktop/${desktopId}/viewer/browser-vnc`,
  });
  expect(res.statusCode, res.body).toBe(200);
  return `${wsBase}${res.json<{ url: string }>().url}`;
}

/** Opens a console websocket: 101 (the open socket) or the refusal status. */
function openConsole(
  url: string,
  origin: string | undefined,
): Promise<{ status: number; ws: WebSocket }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, origin === undefined ? {} : { headers: { origin } });
    sockets.push(ws);
    ws.on('unexpected-response', (_req, res) => resolve({ status: res.statusCode ?? 0, ws }));
    ws.on('open', () => resolve({ status: 101, ws }));
    ws.on('error', () => resolve({ status: -1, ws }));
  });
}

const closed = (socket: Socket | WebSocket) =>
  new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));

async function userIdOf(uid: string): Promise<string> {
  const row = (await t.app.db.select().from(users).where(eq(users.uid, uid)))[0];
  if (!row) throw new Error(`no user ${uid}`);
  return row.id;
}

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase(), {
    prepareImages: true,
    publicUrl: PUBLIC_URL,
    spiceChannelWindowMs: CHANNEL_WINDOW_MS,
  });
  await t.app.engine.reconcile();
  userToken = await login(t.app, 'user');
  const created = await injectWithToken(t.app, userToken, {
    method: 'POST',
    url: '/api/v3/persistent_desktop',
    payload: {
      template_id: DEMO_TEMPLATE_ID,
      name: 'Console hardening',
      hardware: { memory: 0.5, vcpus: 1 },
    },
  });
  expect(created.statusCode, created.body).toBe(200);
  desktopId = created.json<{ id: string }>().id;
  await until(
    async () => (await t.app.desktops.byId(desktopId))?.state,
    (s) => s === 'stopped',
  );
  const start = await injectWithToken(t.app, userToken, {
    method: 'GET',
    url: `/api/v3/desktop/start/${desktopId}`,
  });
  expect(start.statusCode, start.body).toBe(200);
  const row = await until(
    () => t.app.desktops.byId(desktopId),
    (r) => r?.state === 'started',
  );
  const rt = row?.runtime as { pid: number; spicePort: number; vncPort: number };
  trackPid(rt.pid);
  spicePort = rt.spicePort;
  vncPort = rt.vncPort;
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = Number(new URL(address).port);
  wsBase = address.replace('http', 'ws');
  // A port nothing listens on: bind one, note it, close it.
  const probe: Server = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const a = probe.address();
  freePort = typeof a === 'object' && a ? a.port : 1;
  await new Promise((r) => probe.close(r));
});

afterAll(async () => {
  for (const s of sockets) {
    if (s instanceof WebSocket) s.terminate();
    else s.destroy();
  }
  for (const d of await t.app.db.select().from(desktops))
    await t.app.hypervisor.stop(d.id).catch(() => undefined);
  await t.close();
  killTracked();
});

describe('SPICE tunnel (HTTP CONNECT)', () => {
  it('answers 407 to a CONNECT without the .vv credential, alike for a live SPICE port, another live port, a free port and a foreign host', async () => {
    for (const target of [
      `127.0.0.1:${spicePort}`,
      `127.0.0.1:${vncPort}`,
      `127.0.0.1:${freePort}`,
      'example.com:443',
    ]) {
      const attempts: Record<string, string>[] = [
        {},
        { 'Proxy-Authorization': basic('nobody', 'wrong') },
        { 'Proxy-Authorization': 'Bearer x' },
      ];
      for (const headers of attempts) {
        const answer = await proxyConnect(target, headers);
        expect(answer.status, `${target} ${JSON.stringify(headers)}`).toBe(407);
        expect(answer.headers['proxy-authenticate']).toMatch(/^Basic realm=/);
        answer.socket.destroy();
      }
    }
  });

  it('puts a fresh SPICE password and tunnel credential in every .vv, with the PUBLIC_URL proxy and not the Host header', async () => {
    const startPassword = (
      (await t.app.desktops.byId(desktopId))?.runtime as { spicePassword: string }
    ).spicePassword;
    const first = await downloadVv();
    const second = await downloadVv();
    for (const vv of [first, second]) {
      expect(vv.proxy.protocol).toBe('http:');
      expect(vv.proxy.hostname).toBe('vdi.test');
      expect(vv.proxy.port).toBe('8080');
      expect(vv.proxy.username.length).toBeGreaterThanOrEqual(16);
      expect(vv.proxy.password.length).toBeGreaterThanOrEqual(43);
      expect(vv.proxy.username).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(vv.proxy.password).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(vv.host).toBe('127.0.0.1');
      expect(vv.port).toBe(spicePort);
      expect(vv.password).not.toBe(startPassword);
    }
    expect(second.password).not.toBe(first.password);
    expect(second.proxy.username).not.toBe(first.proxy.username);
    expect(second.proxy.password).not.toBe(first.proxy.password);

    // The older file is dead: its credential is replaced and QEMU refuses its password.
    const old = await proxyConnect(`127.0.0.1:${spicePort}`, authOf(first));
    expect(old.status).toBe(407);
    old.socket.destroy();
    const tunnel = await proxyConnect(`127.0.0.1:${spicePort}`, authOf(second));
    expect(tunnel.status).toBe(200);
    expect(await spiceLink(tunnel, first.password)).toEqual({ magic: 'REDQ', result: 7 });
    tunnel.socket.destroy();
    const again = await proxyConnect(`127.0.0.1:${spicePort}`, authOf(second));
    expect(again.status).toBe(200);
    expect(await spiceLink(again, second.password)).toEqual({ magic: 'REDQ', result: 0 });
    again.socket.destroy();
  });

  it('accepts a credential for one SPICE session only: its channels from the same client within the window, then nothing', async () => {
    const vv = await downloadVv();
    const auth = authOf(vv);
    // Another desktop's port, any live or free port: the same 403, and the credential stays unused.
    for (const target of [
      `127.0.0.1:${vncPort}`,
      `127.0.0.1:${freePort}`,
      `10.0.0.1:${spicePort}`,
    ]) {
      const refused = await proxyConnect(target, auth);
      expect(refused.status, target).toBe(403);
      refused.socket.destroy();
    }
    const main = await proxyConnect(`127.0.0.1:${spicePort}`, auth);
    expect(main.status).toBe(200);
    expect(await spiceLink(main, vv.password)).toEqual({ magic: 'REDQ', result: 0 });
    // Another client (another source address) cannot ride on the same credential.
    const thief = await proxyConnect(`127.0.0.1:${spicePort}`, auth, '127.0.0.2');
    expect(thief.status).toBe(407);
    thief.socket.destroy();
    // The same client opens its other channels (display) during the window.
    const display = await proxyConnect(`localhost:${spicePort}`, auth);
    expect(display.status).toBe(200);
    expect((await spiceLink(display, undefined, 2)).magic).toBe('REDQ');
    display.socket.destroy();
    await sleep(CHANNEL_WINDOW_MS + 200);
    const late = await proxyConnect(`127.0.0.1:${spicePort}`, auth);
    expect(late.status).toBe(407);
    late.socket.destroy();
    main.socket.destroy();
  });

  it('closes an open SPICE tunnel within 1 s of logout and refuses its credential afterwards', async () => {
    const token = await login(t.app, 'user');
    const vv = await downloadVv(token);
    const tunnel = await proxyConnect(`127.0.0.1:${spicePort}`, authOf(vv));
    expect(tunnel.status).toBe(200);
    expect(await spiceLink(tunnel, vv.password)).toEqual({ magic: 'REDQ', result: 0 });
    // An open tunnel counts as a viewer: the idle manager keeps the guest running for it.
    const watching = t.app.idle.viewers(desktopId);
    expect(watching).toBeGreaterThanOrEqual(1);
    const gone = closed(tunnel.socket);
    const started = Date.now();
    await injectWithToken(t.app, token, { method: 'POST', url: '/authentication/logout' });
    const elapsed = (await gone) - started;
    console.info(`SPICE tunnel close after logout: ${elapsed} ms`);
    expect(elapsed).toBeLessThan(1000);
    await until(
      async () => t.app.idle.viewers(desktopId),
      (n) => n === watching - 1,
      2000,
    );
    const after = await proxyConnect(`127.0.0.1:${spicePort}`, authOf(vv));
    expect(after.status).toBe(407);
    after.socket.destroy();
  });
});

describe('VNC console websocket', () => {
  it("accepts only the portal's own origin (scheme, host and port), never a missing or null one", async () => {
    const hostOrigin = `http://127.0.0.1:${port}`;
    for (const origin of [
      `https://127.0.0.1:${port}`, // the request's host with another scheme
      hostOrigin, // the Host header's origin is not the portal's configured one
      'https://vdi.test:8080',
      'http://vdi.test:8081',
      'http://vdi.test',
      'http://evil.test:8080',
      'null',
      undefined,
    ]) {
      const { status } = await openConsole(await vncUrl(), origin);
      expect(status, String(origin)).toBe(403);
    }
    const { status, ws } = await openConsole(await vncUrl(), PORTAL_ORIGIN);
    expect(status).toBe(101);
    ws.close();
  });

  it('closes an open console within 1 s of logout, session revocation, the user being disabled and the desktop changing owner', async () => {
    const userId = await userIdOf('user');
    const otherId = await userIdOf('advanced');
    const timings: Record<string, number> = {};
    const measure = async (name: string, token: string, revoke: () => Promise<unknown>) => {
      const { status, ws } = await openConsole(await vncUrl(token), PORTAL_ORIGIN);
      expect(status, name).toBe(101);
      await sleep(200);
      expect(ws.readyState, name).toBe(WebSocket.OPEN);
      const gone = closed(ws);
      const started = Date.now();
      await revoke();
      timings[name] = (await Promise.race([gone, sleep(5000).then(() => Infinity)])) - started;
    };

    const a = await login(t.app, 'user');
    await measure('logout', a, () =>
      injectWithToken(t.app, a, { method: 'POST', url: '/authentication/logout' }),
    );
    const b = await login(t.app, 'user');
    await measure('session revoked', b, () =>
      t.app.sessions.revoke(String(decodePayload(b).session_id)),
    );
    const c = await login(t.app, 'user');
    await measure('user disabled', c, () => t.app.users.update(userId, { active: false }));
    await t.app.users.update(userId, { active: true });
    const d = await login(t.app, 'user');
    await measure('desktop owner changed', d, () =>
      t.app.desktops.update(desktopId, { userId: otherId }),
    );
    await t.app.desktops.update(desktopId, { userId });
    userToken = await login(t.app, 'user');

    console.info('console close after revocation (ms):', JSON.stringify(timings));
    for (const [name, ms] of Object.entries(timings)) expect(ms, name).toBeLessThan(1000);
  });

  it('opens at most 4 consoles on one desktop under 12 simultaneous upgrades and answers 429 to the rest', async () => {
    const urls: string[] = [];
    for (let i = 0; i < 12; i++) urls.push(await vncUrl());
    const results = await Promise.all(urls.map((u) => openConsole(u, PORTAL_ORIGIN)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 101)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(8);
    for (const r of results) r.ws.terminate();
    await until(
      async () => t.app.viewers.vnc.count(desktopId),
      (n) => n === 0,
      5000,
    );
    // The slots are free again once those sockets are gone.
    const { status, ws } = await openConsole(await vncUrl(), PORTAL_ORIGIN);
    expect(status).toBe(101);
    ws.close();
  });
});
