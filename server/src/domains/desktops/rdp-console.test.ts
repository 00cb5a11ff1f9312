/**
 * Browser RDP and the `.rdp` files inside the portal, with one real QEMU (TCG) desktop and the
 * guacd DOUBLE (tests/support/guacd-double.ts: a Guacamole-protocol stand-in, guacd is not
 * packaged here) in guacd's place. Desktops have no network yet, so the test writes the desktop's
 * address and RDP viewers into its row directly.
 * - without an address the RDP viewers are refused (`viewer_no_address`), and so is a tunnel
 *   whose desktop lost its address after the ticket was issued;
 * - with one, `browser-rdp` gives the `/rdp` page and a single-use ticket; the tunnel makes the
 *   handshake with the desktop's address and guest credentials and relays guacd's drawing;
 * - the `.rdp` files carry the desktop's address and guest credentials;
 * - the console closes within 1 s of logout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { desktops } from '../../platform/db/schema.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import { parseInstructions, type Instruction } from '../../platform/viewers/guacamole-protocol.ts';
import { RDP_WS_PATH } from '../../platform/viewers/rdp-tunnel.ts';
import { parseRdp } from '../../platform/viewers/viewer-files.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { sleep, until } from '../../../test/support/wait.ts';
import { startGuacdDouble, type GuacdDouble } from '../../../../tests/support/guacd-double.ts';

const PUBLIC_URL = 'http://vdi.test:8080';
const ADDRESS = '10.55.0.9';
const CREDENTIALS = { username: 'student', password: 'Gu3st pass;word' };

let t: TestApp;
let guacd: GuacdDouble;
let wsBase: string;
let userToken: string;
let desktopId: string;
const sockets: WebSocket[] = [];

/** Writes the desktop's address (null: none) into its runtime, as the network will. */
async function setAddress(ip: string | null): Promise<void> {
  const row = await t.app.desktops.byId(desktopId);
  if (!row) throw new Error('no desktop');
  await t.app.desktops.update(desktopId, { runtime: { ...row.runtime, ip } });
}

async function viewer(kind: string, token = userToken) {
  return injectWithToken(t.app, token, {
    method: 'GET',
    url: `/api/v3/desktop/${desktopId}/viewer/${kind}`,
  });
}

interface Console {
  status: number;
  ws: WebSocket;
  received: Instruction[];
  waitFor(opcode: string): Promise<Instruction>;
  closed: Promise<number>;
}

function openConsole(url: string): Promise<Console> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${wsBase}${url}&width=1024&height=700&dpi=96`, 'guacamole', {
      headers: { origin: PUBLIC_URL },
    });
    sockets.push(ws);
    const received: Instruction[] = [];
    ws.on('message', (data: Buffer) => {
      received.push(...parseInstructions(data.toString('utf8')).instructions);
    });
    const closed = new Promise<number>((r) => ws.once('close', () => r(Date.now())));
    const waitFor = async (opcode: string) =>
      (await until(
        async () => received.find((i) => i.opcode === opcode),
        (found) => !!found,
        5000,
      )) as Instruction;
    const answer = (status: number): Console => ({ status, ws, received, waitFor, closed });
    ws.on('unexpected-response', (_req, res) => resolve(answer(res.statusCode ?? 0)));
    ws.on('open', () => resolve(answer(101)));
    ws.on('error', () => resolve(answer(-1)));
  });
}

beforeAll(async () => {
  guacd = await startGuacdDouble();
  t = await buildTestApp(await createTestDatabase(), {
    prepareImages: true,
    publicUrl: PUBLIC_URL,
    guacd: { host: '127.0.0.1', port: guacd.port },
  });
  await t.app.engine.reconcile();
  userToken = await login(t.app, 'user');
  const created = await injectWithToken(t.app, userToken, {
    method: 'POST',
    url: '/api/v3/persistent_desktop',
    payload: { template_id: 'demo-template', name: 'RDP console', hardware: { memory: 0.5 } },
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
  trackPid((row?.runtime as { pid: number }).pid);
  // The RDP viewers and guest credentials, written as the edit form would (the wireguard
  // network they need is not modelled yet).
  await t.app.desktops.update(desktopId, {
    guestProperties: {
      ...row?.guestProperties,
      credentials: CREDENTIALS,
      viewers: { browser_vnc: {}, browser_rdp: {}, file_rdpvpn: {}, file_rdpgw: {} },
    },
  });
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  wsBase = address.replace('http', 'ws');
});

afterAll(async () => {
  for (const ws of sockets) ws.terminate();
  for (const d of await t.app.db.select().from(desktops))
    await t.app.hypervisor.stop(d.id).catch(() => undefined);
  await t.close();
  await guacd.stop();
  killTracked();
});

describe('browser RDP and .rdp files', () => {
  it('refuses every RDP viewer while the desktop has no address', async () => {
    await setAddress(null);
    for (const kind of ['browser-rdp', 'file-rdpvpn', 'file-rdpgw']) {
      const res = await viewer(kind);
      expect(res.statusCode, kind).toBe(409);
      expect(res.json<{ description_code: string }>().description_code).toBe('viewer_no_address');
    }
  });

  it('opens the browser RDP viewer through guacd with the desktop address and guest credentials', async () => {
    await setAddress(ADDRESS);
    const res = await viewer('browser-rdp');
    expect(res.statusCode, res.body).toBe(200);
    const answer = res.json<{ kind: string; protocol: string; viewer: string; url: string }>();
    expect(answer).toMatchObject({ kind: 'browser', protocol: 'rdp', viewer: '/rdp' });
    expect(answer.url.startsWith(`${RDP_WS_PATH}?ticket=`)).toBe(true);
    const before = guacd.sessions.length;
    const c = await openConsole(answer.url);
    expect(c.status).toBe(101);
    expect((await c.waitFor('sync')).args).toHaveLength(1);
    const seen = guacd.sessions[before];
    expect(seen?.problems).toEqual([]);
    expect(seen?.args).toMatchObject({
      hostname: ADDRESS,
      port: '3389',
      username: CREDENTIALS.username,
      password: CREDENTIALS.password,
      width: '1024',
      height: '700',
    });
    // The ticket opened one console: a second use is refused.
    expect((await openConsole(answer.url)).status).toBe(401);
    c.ws.close();
    await c.closed;
  });

  it('refuses the tunnel of a desktop that lost its address after the ticket was issued', async () => {
    await setAddress(ADDRESS);
    const { url } = (await viewer('browser-rdp')).json<{ url: string }>();
    await setAddress(null);
    const before = guacd.sessions.length;
    const c = await openConsole(url);
    expect(c.status).toBe(101);
    expect((await c.waitFor('error')).args[0]).toBe('viewer_no_address');
    await c.closed;
    expect(guacd.sessions.length).toBe(before);
  });

  it('writes the .rdp files from the desktop address and guest credentials', async () => {
    await setAddress(ADDRESS);
    const vpn = await viewer('file-rdpvpn');
    expect(vpn.statusCode, vpn.body).toBe(200);
    const vpnFile = vpn.json<{ ext: string; mime: string; content: string }>();
    expect(vpnFile).toMatchObject({ ext: 'rdp', mime: 'application/x-rdp' });
    expect(parseRdp(vpnFile.content)).toMatchObject({
      'full address': ADDRESS,
      username: CREDENTIALS.username,
      password: CREDENTIALS.password,
      gatewayhostname: '',
    });
    const gw = await viewer('file-rdpgw');
    expect(gw.statusCode, gw.body).toBe(200);
    const gwFile = parseRdp(gw.json<{ content: string }>().content);
    expect(gwFile).toMatchObject({
      'full address': ADDRESS,
      gatewayhostname: 'vdi.test:8080',
      username: CREDENTIALS.username,
    });
    expect(gwFile.gatewayaccesstoken).toMatch(/^[\w-]{43}$/);
  });

  it('closes the console within 1 s of logout', async () => {
    await setAddress(ADDRESS);
    const token = await login(t.app, 'user');
    const { url } = (await viewer('browser-rdp', token)).json<{ url: string }>();
    const before = guacd.sessions.length;
    const c = await openConsole(url);
    await c.waitFor('sync');
    const started = Date.now();
    await injectWithToken(t.app, token, { method: 'POST', url: '/authentication/logout' });
    const elapsed = (await Promise.race([c.closed, sleep(5000).then(() => Infinity)])) - started;
    console.info(`RDP console close after logout: ${elapsed} ms`);
    expect(elapsed).toBeLessThan(1000);
    await until(
      async () => guacd.sessions[before]?.closed,
      (done) => done === true,
      2000,
    );
  });
});
