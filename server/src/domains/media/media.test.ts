/**
 * Media against a real PostgreSQL and real downloads from a local source (named in
 * MEDIA_ALLOWED_HOSTS): progress pushed over socket.io, the format check, abort, retry, a restart
 * in the middle of a download, the size cap and quota, the download limits, the quota race, and
 * every media call's roles, ownership and input checks.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { and, eq } from 'drizzle-orm';
import { io as connect, type Socket } from 'socket.io-client';
import { buildApp } from '../../app.ts';
import { media } from '../../platform/db/schema.ts';
import { demoHardware, seedIfEmpty } from '../../seed/index.ts';
import type {
  DesktopHardware,
  DesktopMediaRef,
  Media,
  MediaDesktop,
} from '../../../../src/generated/types.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  testConfig,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';
import {
  addDesktop,
  addTemplate,
  addUser,
  loginTo,
  userRow,
} from '../../../test/support/fixtures.ts';
import {
  GRUB_ISO,
  startMediaSource,
  type MediaSource,
} from '../../../test/support/media-source.ts';
import { sleep, until } from '../../../test/support/wait.ts';

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

let t: TestApp;
let source: MediaSource;
let base: string;
let advanced: string;
let advancedId: string;
let manager: string;
let userToken: string;
const sockets: Socket[] = [];
let serial = 0;

beforeAll(async () => {
  source = await startMediaSource();
  t = await buildTestApp(await createTestDatabase(), { mediaAllowedHosts: [source.host] });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  advanced = await login(t.app, 'advanced');
  advancedId = (await userRow(t.app, 'advanced')).id;
  manager = await login(t.app, 'manager');
  userToken = await login(t.app, 'user');
});
afterAll(async () => {
  for (const s of sockets) s.close();
  await t.close();
  await source.close();
});

const api = (token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  injectWithToken(t.app, token, { method, url: `/api/v3${url}`, ...(payload ? { payload } : {}) });

/** POST /media; answers the response and the id of the medium it made (if any). */
async function create(
  token: string,
  path: string,
  extra: Record<string, unknown> = {},
): Promise<{
  status: number;
  body: Record<string, unknown>;
  id: string | undefined;
  name: string;
}> {
  const name = `medium ${++serial}`;
  const res = await api(token, 'POST', '/media', {
    name,
    kind: 'iso',
    url: path.startsWith('http') ? path : source.url(path),
    ...extra,
  });
  const row = (await t.app.media.list({ where: eq(media.name, name) }))[0];
  return { status: res.statusCode, body: res.json(), id: row?.id, name };
}

const rowOf = (id: string) => t.app.media.get(id);
const statusOf = async (id: string) => (await rowOf(id))?.status ?? 'gone';
const waitStatus = (id: string, wanted: readonly string[], ms?: number) =>
  until(
    () => statusOf(id),
    (s) => wanted.includes(s),
    ms,
  );
const filesOf = (id: string) =>
  readdirSync(join(t.config.dataDir, 'media')).filter((f) => f.startsWith(id));
const mediaRows = async () => JSON.stringify(await t.app.db.select().from(media).orderBy(media.id));

function socketOf(token: string): Promise<Socket> {
  const s = connect(base, {
    path: '/api/v3/socket.io',
    transports: ['websocket'],
    reconnection: false,
    forceNew: true,
    auth: { jwt: token },
    extraHeaders: { origin: base },
  });
  sockets.push(s);
  return new Promise((resolve, reject) => {
    s.once('connect', () => resolve(s));
    s.once('connect_error', reject);
  });
}

describe('media downloads', () => {
  it('downloads the grub ISO for real, pushing progress at least every second, and ends downloaded', async () => {
    const s = await socketOf(advanced);
    const events: { at: number; event: string; item: Media }[] = [];
    for (const event of ['media_add', 'media_update'])
      s.on(event, (item: Media) => events.push({ at: Date.now(), event, item }));
    // About 3 s at 1.6 MB/s.
    const started = Date.now();
    const made = await create(advanced, '/grub.iso?rate=1600000');
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toEqual({});
    const id = made.id ?? '';
    await waitStatus(id, ['downloaded']);
    const seconds = (Date.now() - started) / 1000;
    await until(
      async () => events.at(-1)?.item.status,
      (st) => st === 'downloaded',
      3000,
    );
    const row = await rowOf(id);
    expect(row?.size).toBe(GRUB_ISO.length);
    expect(row?.path).toBe(t.app.mediaService.fileOf({ id, kind: 'iso' }));
    expect(sha(readFileSync(row?.path ?? ''))).toBe(sha(GRUB_ISO));
    expect(filesOf(id)).toEqual([`${id}.iso`]);

    const mine = events.filter((e) => e.item.id === id);
    expect(mine[0]?.event).toBe('media_add');
    const progress = mine.filter(
      (e) => e.item.status === 'downloading' && e.event === 'media_update',
    );
    expect(progress.length).toBeGreaterThanOrEqual(Math.floor(seconds) - 1);
    const gaps = progress.slice(1).map((e, i) => e.at - (progress[i]?.at ?? e.at));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(1100);
    const received = progress.map((e) => Number(e.item.progress?.received ?? 0));
    expect(received.every((r, i) => i === 0 || r >= (received[i - 1] ?? 0))).toBe(true);
    expect(received.at(-1)).toBeGreaterThan(0);
    const versions = mine.map((e) => e.item.version ?? 0);
    expect(versions.every((v, i) => i === 0 || v > (versions[i - 1] ?? 0))).toBe(true);
    const last = mine.at(-1)?.item;
    expect(last).toMatchObject({ status: 'downloaded', progress: { total_percent: 100 } });

    const list = (await api(advanced, 'GET', '/media')).json<Media[]>();
    expect(list.find((m) => m.id === id)).toMatchObject({
      status: 'downloaded',
      type: 'isos',
      user_name: 'Demo Advanced',
      editable: true,
    });
  });

  it('downloads the grub floppy image as a floppy', async () => {
    const made = await create(advanced, '/grub-floppy.img', { kind: 'floppy' });
    expect(made.status).toBe(200);
    await waitStatus(made.id ?? '', ['downloaded']);
    expect(filesOf(made.id ?? '')).toEqual([`${made.id}.img`]);
  });

  it('ends downloadfailedinvalidformat for a web page, or an ISO sent as a floppy, keeping no file', async () => {
    const page = await create(advanced, '/page.html');
    const asFloppy = await create(advanced, '/grub.iso', { kind: 'floppy' });
    for (const { id } of [page, asFloppy]) {
      await waitStatus(id ?? '', ['downloadfailedinvalidformat']);
      expect(filesOf(id ?? '')).toEqual([]);
      expect((await rowOf(id ?? ''))?.path).toBeNull();
    }
    // The medium can be deleted from that state.
    expect((await api(advanced, 'DELETE', `/media/${page.id}`)).statusCode).toBe(200);
  });

  it('aborts a running download: the partial file and the medium go, the socket says so', async () => {
    const s = await socketOf(advanced);
    const made = await create(advanced, '/grub.iso?rate=200000');
    const id = made.id ?? '';
    await until(
      async () => Number((await rowOf(id))?.progress?.received ?? 0),
      (r) => r > 0,
    );
    expect(filesOf(id)).toEqual([`${id}.iso.part`]);
    const deleted = new Promise<unknown>((resolve) =>
      s.on('media_delete', (p: { id: string }) => {
        if (p.id === id) resolve(p);
      }),
    );
    const res = await api(advanced, 'POST', `/media/abort/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(await rowOf(id)).toBeUndefined();
    expect(filesOf(id)).toEqual([]);
    expect(await deleted).toMatchObject({ id });
    expect(t.app.mediaService.activeDownloads(advancedId)).toBe(0);
    expect((await api(advanced, 'POST', `/media/abort/${id}`)).statusCode).toBe(404);
  });

  it('retries a failed download (and only a failed one)', async () => {
    source.cutNext();
    const made = await create(advanced, '/flaky.iso');
    const id = made.id ?? '';
    await waitStatus(id, ['downloadfailed']);
    expect(filesOf(id)).toEqual([]);
    const retried = await api(advanced, 'POST', `/media/download/${id}`);
    expect(retried.statusCode, retried.body).toBe(200);
    await waitStatus(id, ['downloaded']);
    expect((await rowOf(id))?.size).toBe(GRUB_ISO.length);
    const again = await api(advanced, 'POST', `/media/download/${id}`);
    expect(again.statusCode).toBe(428);
    expect(again.json()).toMatchObject({ description_code: 'media_should_not_be_downloading' });
  });

  it('refuses a medium beyond the size cap before downloading, and stops an unsized one at the cap', async () => {
    const saved = t.app.config.mediaMaxBytes;
    t.app.config.mediaMaxBytes = 1024 * 1024;
    try {
      const before = await mediaRows();
      const sized = await create(advanced, '/grub.iso');
      expect(sized.status).toBe(400);
      expect(sized.body).toMatchObject({ description_code: 'media_too_large' });
      expect(await mediaRows()).toBe(before);
      const unsized = await create(advanced, '/unsized.iso');
      expect(unsized.status).toBe(200);
      await waitStatus(unsized.id ?? '', ['downloadfailed']);
      expect(filesOf(unsized.id ?? '')).toEqual([]);
    } finally {
      t.app.config.mediaMaxBytes = saved;
    }
  });

  it('a failed download keeps why it failed, in the list its owner reads, until a download succeeds', async () => {
    const failureOf = async (id: string) =>
      (await api(advanced, 'GET', '/media')).json<Media[]>().find((m) => m.id === id)?.failure;
    const page = await create(advanced, '/page.html');
    await waitStatus(page.id ?? '', ['downloadfailedinvalidformat']);
    expect(await failureOf(page.id ?? '')).toBe('invalid_format');
    const saved = t.app.config.mediaMaxBytes;
    t.app.config.mediaMaxBytes = 1024 * 1024;
    try {
      const unsized = await create(advanced, '/unsized.iso');
      await waitStatus(unsized.id ?? '', ['downloadfailed']);
      expect(await failureOf(unsized.id ?? '')).toBe('too_large');
    } finally {
      t.app.config.mediaMaxBytes = saved;
    }
    source.cutNext();
    const flaky = await create(advanced, '/flaky.iso');
    await waitStatus(flaky.id ?? '', ['downloadfailed']);
    expect(await failureOf(flaky.id ?? '')).toEqual(expect.any(String));
    expect((await api(advanced, 'POST', `/media/download/${flaky.id}`)).statusCode).toBe(200);
    await waitStatus(flaky.id ?? '', ['downloaded']);
    expect(await failureOf(flaky.id ?? '')).toBeNull();
  });

  it('downloads again at once after a failure, while the failed download still gives its lease back', async () => {
    // The lease's release takes 500 ms, as on a loaded machine: the failure shows before it ends.
    const hold = t.app.work.hold.bind(t.app.work);
    const slowRelease = vi.spyOn(t.app.work, 'hold').mockImplementation(async (name) => {
      const held = await hold(name);
      return (
        held && {
          signal: held.signal,
          release: async () => {
            await sleep(500);
            await held.release();
          },
        }
      );
    });
    try {
      source.cutNext();
      const made = await create(advanced, '/flaky.iso?again=1');
      await waitStatus(made.id ?? '', ['downloadfailed']);
      const again = await api(advanced, 'POST', `/media/download/${made.id}`);
      expect(again.statusCode, again.body).toBe(200);
      await waitStatus(made.id ?? '', ['downloaded']);
    } finally {
      slowRelease.mockRestore();
    }
  });

  it('refuses a medium beyond the media_size quota', async () => {
    const owner = await addUser(t.app, {
      username: 'small-quota',
      role: 'advanced',
      categoryId: 'default',
      groupId: 'default-advanced',
    });
    await t.app.users.update(owner.id, { quota: { media_size: 0.001 } });
    const token = await loginTo(t.app, 'small-quota', 'default');
    const made = await create(token, '/grub.iso');
    expect(made.status).toBe(428);
    expect(made.body).toMatchObject({ description_code: 'media_size_user_quota_exceeded' });
    expect(made.id).toBeUndefined();
  });

  it('runs at most 3 downloads per user and 10 in all (429 beyond)', async () => {
    const tokens = [advanced];
    for (const n of [1, 2, 3]) {
      await addUser(t.app, {
        username: `parallel-${n}`,
        role: 'advanced',
        categoryId: 'default',
        groupId: 'default-advanced',
      });
      tokens.push(await loginTo(t.app, `parallel-${n}`, 'default'));
    }
    const ids: string[] = [];
    const slow = '/grub.iso?rate=50000';
    const [first = '', second = '', third = '', fourth = ''] = tokens;
    for (const token of [first, first, first]) {
      const made = await create(token, slow);
      expect(made.status).toBe(200);
      ids.push(made.id ?? '');
    }
    const refused = await create(first, slow);
    expect(refused.status).toBe(429);
    expectErrorShape(refused.body, 'too_many_requests');
    expect(refused.body).toMatchObject({
      description_code: 'media_downloads_limit',
      params: { scope: 'user', limit: 3 },
    });
    expect(refused.id).toBeUndefined();
    for (const token of [second, second, second, third, third, third, fourth]) {
      const made = await create(token, slow);
      expect(made.status).toBe(200);
      ids.push(made.id ?? '');
    }
    expect(t.app.mediaService.activeDownloads()).toBe(10);
    const full = await create(fourth, slow);
    expect(full.status).toBe(429);
    expect(full.body).toMatchObject({ params: { scope: 'server', limit: 10 } });
    for (const [i, id] of ids.entries()) {
      const owner = tokens[Math.min(3, Math.floor(i / 3))] ?? '';
      expect((await api(owner, 'POST', `/media/abort/${id}`)).statusCode).toBe(200);
    }
    expect(t.app.mediaService.activeDownloads()).toBe(0);
  });

  it('admits exactly one of 20 parallel creates on the last media quota unit', async () => {
    const owner = await addUser(t.app, {
      username: 'last-unit',
      role: 'advanced',
      categoryId: 'default',
      groupId: 'default-advanced',
    });
    await t.app.users.update(owner.id, { quota: { isos: 1 } });
    const token = await loginTo(t.app, 'last-unit', 'default');
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api(token, 'POST', '/media', {
          name: `race ${i}`,
          kind: 'iso',
          url: source.url('/grub.iso'),
        }),
      ),
    );
    const statuses = results.map((r) => r.statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 428)).toHaveLength(19);
    for (const r of results.filter((x) => x.statusCode === 428))
      expect(r.json()).toMatchObject({ description_code: 'media_new_user_quota_exceeded' });
    const rows = await t.app.media.list({ where: eq(media.userId, owner.id) });
    expect(rows).toHaveLength(1);
    await waitStatus(rows[0]?.id ?? '', ['downloaded']);
    const check = await api(token, 'GET', '/media/new/check_quota');
    expect(check.statusCode).toBe(428);
    expect(check.json()).toMatchObject({ description_code: 'media_new_user_quota_exceeded' });
    expect((await api(advanced, 'GET', '/media/new/check_quota')).json()).toEqual({});
  });
});

describe('a restart in the middle of a download', () => {
  it('ends the download failed (never stuck) and removes the partial file', async () => {
    const config = testConfig({
      databaseUrl: await createTestDatabase(),
      mediaAllowedHosts: [source.host],
    });
    const first = await buildApp(config);
    await seedIfEmpty(first, { password: TEST_PASSWORD });
    const token = (
      await first.inject({
        method: 'POST',
        url: '/authentication/login?provider=form&category_id=default',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ username: 'advanced', password: TEST_PASSWORD }).toString(),
      })
    ).body;
    const res = await first.inject({
      method: 'POST',
      url: '/api/v3/media',
      headers: { authorization: `Bearer ${token}` },
      payload: { name: 'cut by a restart', kind: 'iso', url: source.url('/grub.iso?rate=100000') },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [row] = await first.media.list({ where: eq(media.name, 'cut by a restart') });
    const id = row?.id ?? '';
    await until(
      async () => Number((await first.media.get(id))?.progress?.received ?? 0),
      (r) => r > 0,
    );
    await first.close();

    // A crash leaves rows in download states and partial files: the next boot settles them.
    const second = await buildApp(config);
    expect((await second.media.get(id))?.status).toBe('downloadfailed');
    const owner = row?.userId ?? '';
    const crashed = { userId: owner, categoryId: 'default', groupId: 'default-advanced' };
    await second.media.create({
      id: 'crash-a',
      name: 'crash a',
      kind: 'iso',
      status: 'downloading',
      ...crashed,
    });
    await second.media.create({
      id: 'crash-b',
      name: 'crash b',
      kind: 'iso',
      status: 'downloadaborting',
      ...crashed,
    });
    const dir = join(config.dataDir, 'media');
    writeFileSync(join(dir, 'crash-a.iso.part'), 'partial');
    writeFileSync(join(dir, 'crash-b.iso.part'), 'partial');
    await second.close();

    const third = await buildApp(config);
    try {
      expect((await third.media.get(id))?.status).toBe('downloadfailed');
      expect((await third.media.get('crash-a'))?.status).toBe('downloadfailed');
      expect(await third.media.get('crash-b')).toBeUndefined();
      expect(readdirSync(dir).filter((f) => f.endsWith('.part'))).toEqual([]);
    } finally {
      await third.close();
      rmSync(config.dataDir, { recursive: true, force: true });
    }
  });
});

describe('media calls: roles, ownership and input', () => {
  let foreign: string;
  let downloaded: string;

  beforeAll(async () => {
    const made = await create(advanced, '/grub.iso');
    downloaded = made.id ?? '';
    await waitStatus(downloaded, ['downloaded']);
    // Somebody else's medium: the admin's demo ISO.
    foreign = 'demo-iso';
  });

  const idRoutes = (id: string): ['GET' | 'POST' | 'DELETE', string][] => [
    ['POST', `/media/download/${id}`],
    ['POST', `/media/abort/${id}`],
    ['GET', `/media/desktops/${id}`],
    ['DELETE', `/media/${id}`],
  ];

  it('refuses the role user on every media call but its own list (media are for advanced and above)', async () => {
    const before = await mediaRows();
    const calls: ['GET' | 'POST' | 'DELETE', string, object?][] = [
      ['GET', '/media/new/check_quota'],
      ['POST', '/media', { name: 'by user', kind: 'iso', url: source.url('/grub.iso') }],
      ['POST', '/desktop/from/media', { media_id: downloaded, name: 'From media' }],
      ...idRoutes(downloaded),
    ];
    for (const [method, url, payload] of calls) {
      const res = await api(userToken, method, url, payload);
      expect([url, res.statusCode]).toEqual([url, 403]);
      expectErrorShape(res.json(), 'forbidden');
    }
    expect((await api(userToken, 'GET', '/media')).json()).toEqual([]);
    expect(await mediaRows()).toBe(before);
  });

  it("answers 403 on somebody else's medium and 404 on an unknown one, changing nothing", async () => {
    const other = await addUser(t.app, {
      username: 'other-advanced',
      role: 'advanced',
      categoryId: 'default',
      groupId: 'default-advanced',
    });
    expect(other.id).not.toBe(advancedId);
    const token = await loginTo(t.app, 'other-advanced', 'default');
    const before = await mediaRows();
    for (const [id, status] of [
      [downloaded, 403],
      [foreign, 403],
      ['no-such-media', 404],
    ] as const) {
      for (const [method, url] of idRoutes(id)) {
        const res = await api(token, method, url);
        expect([method, url, res.statusCode]).toEqual([method, url, status]);
        expectErrorShape(res.json(), status === 403 ? 'forbidden' : 'not_found');
      }
    }
    const desktop = await api(token, 'POST', '/desktop/from/media', {
      media_id: downloaded,
      name: 'Not mine',
    });
    expect(desktop.statusCode).toBe(403);
    expect(desktop.json()).toMatchObject({ description_code: 'media_not_allowed' });
    expect((await api(token, 'GET', '/media')).json()).toEqual([]);
    expect(await mediaRows()).toBe(before);
  });

  it('lists shared media to the others without their source URL, and to their owner with it', async () => {
    const mine = (await api(advanced, 'GET', '/media_allowed')).json() as Media[];
    expect(mine.find((item) => item.id === downloaded)?.url).toBe(source.url('/grub.iso'));
    const shared = (await api(userToken, 'GET', '/media_allowed')).json() as Media[];
    const demo = shared.find((item) => item.id === foreign);
    expect(demo, 'the demo ISO is shared with everyone').toBeDefined();
    expect(demo).not.toHaveProperty('url');
    expect(demo?.editable).toBe(false);
  });

  it("lets a manager manage the media of the category's advanced users, not an admin's", async () => {
    expect((await api(manager, 'GET', `/media/desktops/${downloaded}`)).statusCode).toBe(200);
    expect((await api(manager, 'GET', `/media/desktops/${foreign}`)).statusCode).toBe(403);
  });

  it('answers the documented codes to bad input, never a 500', async () => {
    // [body, status, description_code, field errors the answer carries]
    const cases: [object, number, string, Record<string, string>?][] = [
      [{ name: 'valid name', kind: 'iso' }, 400, 'bad_request', { '/url': 'required' }],
      [
        { name: 'valid name', kind: 'iso', url: 'ftp://example.com/a.iso' },
        400,
        'media_url_bad_format',
        { '/url': 'pattern' },
      ],
      [{ name: 'valid name', kind: 'iso', url: 'not a url' }, 400, 'media_url_bad_format'],
      [
        { name: 'valid name', kind: 'dvd', url: source.url('/grub.iso') },
        400,
        'bad_request',
        { '/kind': 'enum' },
      ],
      [
        { name: 'x'.repeat(51), kind: 'iso', url: source.url('/grub.iso') },
        400,
        'bad_request',
        { '/name': 'maxLength' },
      ],
      [
        { name: 'valid name', kind: 'iso', url: 'http://user:pw@example.com/a.iso' },
        400,
        'media_url_bad_format',
      ],
      [
        { name: 'valid name', kind: 'iso', url: source.url('/missing.iso') },
        404,
        'media_url_not_found',
      ],
      [
        { name: 'valid name', kind: 'iso', url: `http://127.0.0.1:${source.port + 1}/` },
        400,
        'media_url_not_valid',
      ],
      [
        {
          name: 'valid name',
          kind: 'iso',
          url: source.url('/grub.iso'),
          allowed: { users: ['nobody'] },
        },
        404,
        'not_found',
      ],
    ];
    const before = await mediaRows();
    for (const [payload, status, code, errors] of cases) {
      const res = await api(advanced, 'POST', '/media', payload);
      const label = JSON.stringify(payload);
      expect([label, res.statusCode]).toEqual([label, status]);
      const body = res.json<{ description_code: string; errors?: Record<string, string> }>();
      expect([label, body.description_code]).toEqual([label, code]);
      if (errors) expect(body.errors).toMatchObject(errors);
    }
    expect(await mediaRows()).toBe(before);
    const name = (await rowOf(downloaded))?.name ?? '';
    const dup = await api(advanced, 'POST', '/media', {
      name,
      kind: 'iso',
      url: source.url('/grub.iso'),
    });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ description_code: 'duplicated_name' });
    for (const url of ['/media/desktops/%00', '/media/download/x%20y']) {
      const res = await api(advanced, url.includes('desktops') ? 'GET' : 'POST', url);
      expect(res.statusCode).toBeLessThan(500);
    }
  });

  it('lists the desktops and templates using a medium, then deletes it: file gone, lists cleaned', async () => {
    const made = await create(advanced, '/grub.iso');
    const id = made.id ?? '';
    await waitStatus(id, ['downloaded']);
    const owner = await userRow(t.app, 'advanced');
    const isos: [DesktopMediaRef, DesktopMediaRef] = [{ id }, { id: 'demo-iso' }];
    const hardware: DesktopHardware = { ...demoHardware(), isos };
    const desktopId = await addDesktop(t.app, owner, 'Uses the medium', { hardware });
    await addTemplate(t.app, owner, {
      id: `tpl-${id}`,
      name: 'Template with the medium',
      hardware,
    });
    const using = await api(advanced, 'GET', `/media/desktops/${id}`);
    expect(using.statusCode).toBe(200);
    expect(using.json<MediaDesktop[]>()).toEqual([
      {
        id: desktopId,
        name: 'Uses the medium',
        kind: 'desktop',
        status: 'stopped',
        user: owner.id,
        user_name: 'Demo Advanced',
      },
      expect.objectContaining({ id: `tpl-${id}`, kind: 'template', user: owner.id }),
    ]);
    const file = (await rowOf(id))?.path ?? '';
    expect(existsSync(file)).toBe(true);
    const res = await api(advanced, 'DELETE', `/media/${id}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toBeNull();
    expect(existsSync(file)).toBe(false);
    expect((await rowOf(id))?.status).toBe('deleted');
    expect((await t.app.desktops.byId(desktopId))?.hardware.isos).toEqual([{ id: 'demo-iso' }]);
    expect((await t.app.templates.get(`tpl-${id}`))?.hardware.isos).toEqual([{ id: 'demo-iso' }]);
    expect((await api(advanced, 'GET', '/media')).json<Media[]>().some((m) => m.id === id)).toBe(
      false,
    );
    expect((await api(advanced, 'DELETE', `/media/${id}`)).statusCode).toBe(404);
  });

  it('refuses to delete or retry a downloading medium (428) and to abort a downloaded one', async () => {
    const made = await create(advanced, '/grub.iso?rate=100000');
    const id = made.id ?? '';
    for (const [method, url] of [
      ['DELETE', `/media/${id}`],
      ['POST', `/media/download/${id}`],
    ] as const) {
      const res = await api(advanced, method, url);
      expect(res.statusCode).toBe(428);
      expect(res.json()).toMatchObject({ description_code: 'media_should_not_be_downloading' });
    }
    expect((await api(advanced, 'POST', `/media/abort/${id}`)).statusCode).toBe(200);
    const done = await api(advanced, 'POST', `/media/abort/${downloaded}`);
    expect(done.statusCode).toBe(428);
    expect(await rowOf(downloaded)).toMatchObject({ status: 'downloaded' });
    const owned = await t.app.media.list({
      where: and(eq(media.userId, advancedId), eq(media.id, id)),
    });
    expect(owned).toEqual([]);
  });
});
