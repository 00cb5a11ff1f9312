/**
 * The videowall's access rule against a real QEMU (TCG) desktop and a real PostgreSQL: whoever
 * manages a deployment (its owner here, the seeded teacher) gets the thumbnail of a student's
 * desktop of that deployment, a browser-VNC ticket for it, and the console proxy accepts that
 * ticket (the proxy used to check the desktop's owner only). Another student gets 403 on both
 * calls. Deployment: Class B (student31-42) with the teacher as owner; one desktop is started.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eq } from 'drizzle-orm';
import { desktops } from '../../platform/db/schema.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import { studentName } from '../../seed/classes.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { userRow } from '../../../test/support/fixtures.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const PUBLIC_URL = 'http://vdi.test:8080';
const ORIGIN = 'http://vdi.test:8080';
const CLASS_B = 'default-class-b';

const until = untilWithin(60_000);

let t: TestApp;
let wsBase: string;
let deploymentId: string;
let desktopId: string;
const tokens: Record<string, string> = {};
const sockets: WebSocket[] = [];

const api = (who: string, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
  injectWithToken(t.app, tokens[who] ?? '', {
    method,
    url: `/api/v3${url}`,
    ...(payload ? { payload } : {}),
  });

/**
 * Opens a console websocket: 101 (the open socket) or the refusal status, and the first message
 * (QEMU's RFB banner). The listener is attached at once: the banner may come in the same chunk as
 * the 101 answer, before anybody could listen after `open`.
 */
function openConsole(
  url: string,
): Promise<{ status: number; ws: WebSocket; first: Promise<string> }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: { origin: ORIGIN } });
    sockets.push(ws);
    const first = new Promise<string>((resolveFirst, reject) => {
      const timer = setTimeout(() => reject(new Error('no RFB banner within 10 s')), 10_000);
      ws.once('message', (data: Buffer) => {
        clearTimeout(timer);
        resolveFirst(data.toString('latin1'));
      });
    });
    first.catch(() => undefined);
    ws.on('unexpected-response', (_req, res) =>
      resolve({ status: res.statusCode ?? 0, ws, first }),
    );
    ws.on('open', () => resolve({ status: 101, ws, first }));
    ws.on('error', () => resolve({ status: -1, ws, first }));
  });
}

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase(), {
    prepareImages: true,
    publicUrl: PUBLIC_URL,
  });
  await t.app.engine.reconcile();
  for (const name of ['teacher', studentName(31), studentName(32)])
    tokens[name] = await login(t.app, name);

  const created = await api('teacher', 'POST', '/deployments', {
    name: 'Videowall access',
    desktop_name: 'Videowall desktop',
    template_id: 'demo-template',
    allowed: { groups: [CLASS_B] },
    hardware: { memory: 0.5, vcpus: 1 },
    visible: true,
  });
  expect(created.statusCode, created.body).toBe(200);
  deploymentId = created.json<{ id: string }>().id;
  await until(
    async () =>
      (await t.app.deployments.counts([deploymentId])).get(deploymentId)?.creatingDesktops ?? 1,
    (n) => n === 0,
  );

  const student = await userRow(t.app, studentName(31));
  const rows = await t.app.desktops.table.list({ where: eq(desktops.userId, student.id) });
  const row = rows.find((r) => r.tag === deploymentId);
  if (!row) throw new Error('student31 has no desktop of the deployment');
  desktopId = row.id;
  await until(
    async () => (await t.app.desktops.byId(desktopId))?.state,
    (s) => s === 'stopped',
  );

  // The teacher starts the student's desktop (a deployment manager may act on it).
  const start = await api('teacher', 'GET', `/desktop/start/${desktopId}`);
  expect(start.statusCode, start.body).toBe(200);
  const started = await until(
    () => t.app.desktops.byId(desktopId),
    (r) => r?.state === 'started',
  );
  trackPid((started?.runtime as { pid: number }).pid);

  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  wsBase = address.replace('http', 'ws');
}, 180_000);

afterAll(async () => {
  for (const s of sockets) s.terminate();
  for (const d of await t.app.db.select().from(desktops))
    await t.app.hypervisor.stop(d.id).catch(() => undefined);
  await t.close();
  killTracked();
});

describe('videowall access to a deployment desktop', () => {
  it('gives the deployment owner the thumbnail of a student desktop', async () => {
    const res = await until(
      () => api('teacher', 'GET', `/desktop/${desktopId}/thumbnail`),
      (r) => r.statusCode !== 404, // no first screenshot yet
      30_000,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toContain('image/png');
    expect(res.rawPayload.subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('issues the deployment owner a console ticket that the VNC proxy accepts', async () => {
    const res = await api('teacher', 'GET', `/desktop/${desktopId}/viewer/browser-vnc`);
    expect(res.statusCode, res.body).toBe(200);
    const { url } = res.json<{ url: string }>();
    const { status, ws, first } = await openConsole(`${wsBase}${url}`);
    expect(status).toBe(101);
    expect(await first).toMatch(/^RFB 003\.00\d/);
    ws.close();
  });

  it('answers 403 to another student, for the thumbnail and the console ticket', async () => {
    const thumb = await api(studentName(32), 'GET', `/desktop/${desktopId}/thumbnail`);
    expect(thumb.statusCode, thumb.body).toBe(403);
    const viewer = await api(studentName(32), 'GET', `/desktop/${desktopId}/viewer/browser-vnc`);
    expect(viewer.statusCode, viewer.body).toBe(403);
  });

  it('still lets the desktop user open their own console', async () => {
    const res = await api(studentName(31), 'GET', `/desktop/${desktopId}/viewer/browser-vnc`);
    expect(res.statusCode, res.body).toBe(200);
    const { status, ws } = await openConsole(`${wsBase}${res.json<{ url: string }>().url}`);
    expect(status).toBe(101);
    ws.close();
  });
});
