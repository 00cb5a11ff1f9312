/**
 * Desktop lifecycle against real QEMU (TCG) and a real PostgreSQL: the state/action table, quotas,
 * ownership on every desktop route and on the VNC proxy, a QEMU killed from outside, and a server
 * restart in the middle of a start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eq } from 'drizzle-orm';
import WebSocket from 'ws';
import { operations } from '../../../../src/generated/api.ts';
import { stateActions } from '../../../../src/generated/actions.ts';
import { buildApp } from '../../app.ts';
import { desktops, users } from '../../platform/db/schema.ts';
import { killTracked, trackPid } from '../../platform/hypervisor/test-support.ts';
import { offeredActions } from '../../../../common/state-actions.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { untilWithin } from '../../../test/support/wait.ts';

const DEMO_TEMPLATE_ID = 'demo-template';

const until = untilWithin(15_000);

describe('desktop lifecycle (real QEMU)', () => {
  let t: TestApp;
  let dbUrl: string;
  let userToken: string;
  let otherToken: string;

  const stateOf = async (id: string) => (await t.app.desktops.byId(id))?.state;
  let listenedAt: string | undefined;
  /** The app's address, listening from the first test that opens a websocket on. */
  const listening = async () => (listenedAt ??= await t.app.listen({ port: 0, host: '127.0.0.1' }));
  const createDesktop = async (name: string, token = userToken) => {
    const res = await injectWithToken(t.app, token, {
      method: 'POST',
      url: '/api/v3/persistent_desktop',
      payload: { template_id: DEMO_TEMPLATE_ID, name, hardware: { memory: 0.5, vcpus: 1 } },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { id } = res.json<{ id: string }>();
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
    return id;
  };
  const action = (id: string, a: string, token = userToken) =>
    injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/desktop/${a}/${id}` });
  const startAndWait = async (id: string) => {
    expect((await action(id, 'start')).statusCode).toBe(200);
    await until(
      () => stateOf(id),
      (s) => s === 'started',
    );
    const row = await t.app.desktops.byId(id);
    const pid = (row?.runtime as { pid?: number }).pid;
    if (pid) trackPid(pid);
    return row;
  };

  beforeAll(async () => {
    dbUrl = await createTestDatabase();
    // A long shutdown grace: the table test leaves desktops in shutting-down without a VM.
    t = await buildTestApp(dbUrl, { prepareImages: true, shutdownGraceMs: 600_000 });
    // buildTestApp prepares images at ready time; make sure the template disk exists before creating desktops.
    await t.app.engine.reconcile();
    userToken = await login(t.app, 'user');
    otherToken = await login(t.app, 'advanced');
  });
  afterAll(async () => {
    for (const d of await t.app.db.select().from(desktops))
      await t.app.hypervisor.stop(d.id).catch(() => undefined);
    await t.close();
    killTracked();
  });

  it('creates a desktop from the demo template, starts it, and stops it (graceful then forced)', async () => {
    const id = await createDesktop('Lifecycle one');
    const row = await startAndWait(id);
    const rt = row?.runtime as { vncPort: number; spicePort: number };
    expect(rt.vncPort).toBeGreaterThan(0);
    const stop1 = await action(id, 'stop');
    expect(stop1.json()).toEqual({ status: 'shutting-down' });
    const stop2 = await action(id, 'stop');
    expect(stop2.json()).toEqual({ status: 'stopping' });
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
    expect(await t.app.hypervisor.status(id)).toBe('absent');
  });

  it('answers a browser console asked for while the desktop starts at once, and its websocket reaches QEMU once it runs; a stopped one at once with 409', async () => {
    const id = await createDesktop('Lifecycle viewer');
    const viewer = () =>
      injectWithToken(t.app, userToken, {
        method: 'GET',
        url: `/api/v3/desktop/${id}/viewer/browser-vnc`,
      });
    const refused = await viewer();
    expect(refused.statusCode, refused.body).toBe(409);
    expectErrorShape(refused.json(), 'conflict');
    expect(refused.json<{ description_code: string }>().description_code).toBe(
      'viewer_not_started',
    );
    const start = await action(id, 'start');
    expect(start.json()).toEqual({ status: 'starting' });
    const answer = await viewer();
    expect(answer.statusCode, answer.body).toBe(200);
    expect(await stateOf(id)).toBe('starting');
    const { url, values } = answer.json<{ url: string; values: { password: string } }>();
    expect(url).toMatch(/^\/api\/v3\/viewer\/vnc\?ticket=/);
    // Upgraded while QEMU boots: the proxy waits for it, then QEMU's RFB greeting comes through.
    const address = await listening();
    const greeting = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(`${address.replace('http', 'ws')}${url}`, {
        headers: { origin: address },
      });
      ws.once('message', (data: Buffer) => {
        resolve(data.toString('latin1'));
        ws.close();
      });
      ws.once('unexpected-response', (_req, res) => reject(new Error(String(res.statusCode))));
      ws.once('error', reject);
    });
    expect(greeting).toMatch(/^RFB 003\.00\d\n/);
    await until(
      () => stateOf(id),
      (s) => s === 'started',
    );
    const runtime = (await t.app.desktops.byId(id))?.runtime;
    if (runtime?.pid) trackPid(runtime.pid);
    // The password the console was given is the one QEMU runs with.
    expect(runtime?.vncPassword).toBe(values.password);
    await action(id, 'stop');
    await action(id, 'stop');
    await until(
      () => stateOf(id),
      (s) => s === 'stopped',
    );
  });

  it('answers every state/action pair as the generated table says (allowed 200, refused 428 with the code)', async () => {
    const id = await createDesktop('State table');
    const verbs: [string, readonly string[], string][] = [
      ['start', ['start', 'create'], 'unable_to_start_desktop_from'],
      ['stop', ['stop', 'forceStop'], 'unable_to_stop_desktop_from'],
      ['reset', ['reset'], 'unable_to_reset_desktop_from'],
      ['updating', ['updating'], 'unable_to_update_desktop_from'],
    ];
    for (const state of stateActions.desktops.states) {
      for (const [verb, accepted, code] of verbs) {
        // Put the desktop in `state` without a VM; allowed actions that need a VM are exercised elsewhere.
        await t.app.db.update(desktops).set({ state, runtime: {} }).where(eq(desktops.id, id));
        const offered = offeredActions('desktops', { state, type: 'persistent' }).some((a) =>
          accepted.includes(a),
        );
        const res = await action(id, verb);
        if (offered) {
          expect(res.statusCode, `${verb} in ${state}: ${res.body}`).not.toBe(428);
          if (res.statusCode !== 200)
            expect(res.statusCode, `${verb} in ${state}: ${res.body}`).toBeLessThan(500);
        } else {
          expect(res.statusCode, `${verb} in ${state}`).toBe(428);
          expectErrorShape(res.json(), 'precondition_required');
          expect(res.json().description_code).toBe(code);
        }
        if (offered && verb === 'start') {
          // A real start: let it finish, then force the VM off before the next pair.
          await until(
            () => stateOf(id),
            (s) => s === 'started' || s === 'failed',
            15_000,
          );
          await action(id, 'stop');
          await action(id, 'stop');
          await until(
            () => stateOf(id),
            (s) => s === 'stopped',
            15_000,
          );
        }
      }
    }
    await t.app.db
      .update(desktops)
      .set({ state: 'stopped', runtime: {} })
      .where(eq(desktops.id, id));
  });

  it('stores an uploaded card image re-encoded as WebP (random name, nosniff) and resets GPU-only video without a GPU', async () => {
    const id = await createDesktop('Card image');
    // 1x1 PNG
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const put = (payload: Record<string, unknown>) =>
      injectWithToken(t.app, userToken, { method: 'PUT', url: `/api/v3/domain/${id}`, payload });
    const ok = await put({
      image: { type: 'user', file: { data: png, filename: '../../etc/passwd.png' } },
    });
    expect(ok.statusCode, ok.body).toBe(200);
    const image = ok.json<{ image: { url: string; id: string } }>().image;
    expect(image.id).toMatch(/^[A-Za-z0-9_-]{43}\.webp$/);
    const served = await t.app.inject({ method: 'GET', url: image.url });
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/webp');
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    expect(served.rawPayload.subarray(8, 12).toString('latin1')).toBe('WEBP');
    const html = await put({
      image: {
        type: 'user',
        file: { data: Buffer.from('<svg onload=alert(1)>').toString('base64'), filename: 'x.png' },
      },
    });
    expect(html.statusCode).toBe(415);
    expect(html.json().description_code).toBe('card_image_unsupported_format');
    const traversal = await t.app.inject({
      method: 'GET',
      url: '/api/v3/images/desktops/user/..%2F..%2Fkeys%2Fjwt.key',
    });
    // The file name's parameter schema refuses anything that could leave the cards directory.
    expect(traversal.statusCode).toBe(400);
    expect(traversal.body).not.toContain('BEGIN');

    const video = await put({ hardware: { videos: ['none'] } });
    expect(video.statusCode, video.body).toBe(200);
    const info = await injectWithToken(t.app, userToken, {
      method: 'GET',
      url: `/api/v3/domain/info/${id}`,
    });
    expect(info.json().hardware.videos).toEqual(['default']);
  });

  it('refuses a new desktop beyond the quota with desktop_new_user_quota_exceeded', async () => {
    const owner = (await t.app.db.select().from(users).where(eq(users.uid, 'user')))[0];
    if (!owner) throw new Error('no user');
    const count = (await t.app.db.select().from(desktops).where(eq(desktops.userId, owner.id)))
      .length;
    await t.app.db
      .update(users)
      .set({ quota: { desktops: count } })
      .where(eq(users.id, owner.id));
    const res = await injectWithToken(t.app, userToken, {
      method: 'POST',
      url: '/api/v3/persistent_desktop',
      payload: { template_id: DEMO_TEMPLATE_ID, name: 'Over quota' },
    });
    expect(res.statusCode).toBe(428);
    expect(res.json().description_code).toBe('desktop_new_user_quota_exceeded');
    const check = await injectWithToken(t.app, userToken, {
      method: 'GET',
      url: '/api/v3/desktops/new/check_quota',
    });
    expect(check.json().description_code).toBe('desktop_new_user_quota_exceeded');
    await t.app.db.update(users).set({ quota: null }).where(eq(users.id, owner.id));
  });

  it('answers 403 to another user on every desktop route with an id, and on the VNC proxy', async () => {
    const id = await createDesktop('Private desktop');
    const routes = Object.values(operations).filter(
      (o) => o.resource === 'desktops' && o.path.includes('{id}') && o.base === 'api',
    );
    expect(routes.length).toBeGreaterThan(8);
    for (const op of routes) {
      const url = `/api/v3${op.path.replace('{id}', id).replace('{action}', 'start').replace('{viewer}', 'browser-vnc')}`;
      const bodies: Record<string, unknown> = {
        update: { name: 'Stolen desk' },
        updateReservables: { reservables: { vgpus: null } },
      };
      const res = await injectWithToken(t.app, otherToken, {
        method: op.method,
        url,
        ...(op.body === 'json' ? { payload: bodies[op.name] ?? {} } : {}),
      });
      expect(res.statusCode, `${op.method} ${url}`).toBe(403);
      expectErrorShape(res.json(), 'forbidden');
    }
    expect(await stateOf(id)).toBe('stopped');

    // VNC proxy: a ticket minted for the owner stops working once the desktop belongs to someone else.
    await startAndWait(id);
    const viewer = await injectWithToken(t.app, userToken, {
      method: 'GET',
      url: `/api/v3/desktop/${id}/viewer/browser-vnc`,
    });
    expect(viewer.statusCode, viewer.body).toBe(200);
    const { url } = viewer.json<{ url: string }>();
    const advanced = (await t.app.db.select().from(users).where(eq(users.uid, 'advanced')))[0];
    await t.app.db
      .update(desktops)
      .set({ userId: advanced?.id ?? '' })
      .where(eq(desktops.id, id));
    const address = await listening();
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${address.replace('http', 'ws')}${url}`, {
        headers: { origin: address },
      });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => resolve(101));
      ws.on('error', () => resolve(-1));
    });
    expect(status).toBe(403);
  });

  it('turns a desktop whose QEMU is killed from outside into failed within 10 s', async () => {
    const id = await createDesktop('Killed desktop');
    const row = await startAndWait(id);
    const pid = (row?.runtime as { pid: number }).pid;
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    await until(
      () => stateOf(id),
      (s) => s === 'failed',
      10_000,
    );
    expect(Date.now() - killedAt).toBeLessThan(10_000);
    expect((await t.app.desktops.byId(id))?.detail).toBeTruthy();
  });

  it('settles a start interrupted by a server restart as started or failed, never stuck', async () => {
    const id = await createDesktop('Restart desktop');
    expect((await action(id, 'start')).statusCode).toBe(200);
    const config = t.config;
    await t.app.close();
    t.app = await buildApp({ ...config });
    await until(
      () => stateOf(id),
      (s) => s === 'started' || s === 'failed',
      20_000,
    );
    const row = await t.app.desktops.byId(id);
    const pid = (row?.runtime as { pid?: number }).pid;
    if (pid) trackPid(pid);
    expect(['started', 'failed']).toContain(row?.state);
    userToken = await login(t.app, 'user');
  });
});
