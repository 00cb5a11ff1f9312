import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildApp } from '../../app.ts';
import { seedIfEmpty } from '../../seed/index.ts';
import { loadMigrations } from './migrate.ts';
import { Desktop } from '../../../../src/generated/validators.js';
import {
  buildTestApp,
  injectWithToken,
  login,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';

// The embedded default: no DATABASE_URL, PGlite under DATA_DIR/db.
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(undefined);
});
afterAll(async () => t.close());

describe('app on embedded PGlite', () => {
  it('migrates, seeds, logs in and lists the demo desktops', async () => {
    expect(t.app.database.kind).toBe('pglite');
    expect(existsSync(join(t.config.dataDir, 'db'))).toBe(true);
    // The token key is in the database, not in a file of the data directory.
    expect(existsSync(join(t.config.dataDir, 'keys', 'jwt.key'))).toBe(false);
    expect(await t.app.database.query('SELECT id FROM signing_keys')).toEqual([{ id: 'initial' }]);
    const token = await login(t.app, 'user', TEST_PASSWORD);
    const res = await injectWithToken(t.app, token, {
      method: 'GET',
      url: '/api/v3/user/desktops',
    });
    expect(res.statusCode).toBe(200);
    const list = res.json() as unknown[];
    expect(list).toHaveLength(3);
    for (const d of list) expect(Desktop(d)).toBe(true);
    expect((await t.app.inject({ method: 'GET', url: '/api/v3/health' })).json()).toEqual({
      status: 'ok',
      database: true,
      node: t.config.nodeName,
    });
    const tpl = await t.app.database.query<{ disk_path: string }>(
      'SELECT disk_path FROM templates',
    );
    expect(tpl[0]?.disk_path).toBe(join(t.config.dataDir, 'images', 'demo-template.qcow2'));
  });

  it('lists each desktop as its events carry it, from the one JSON text PGlite answers', async () => {
    const owner = (
      await t.app.database.query<{ id: string }>("SELECT id FROM users WHERE uid = 'user'")
    )[0];
    if (!owner) throw new Error('no user');
    await t.app.database.query(
      `UPDATE desktops SET accessed = '2026-03-04 05:06:07.891234+00',
         next_booking_start = '2026-03-04 06:00:00.999999+00',
         next_booking_end = '2026-03-04 07:00:00.000501+00', booking_id = 'b-1',
         queue = '{"position": 2, "event": "start"}', detail = 'a detail', description = ''
       WHERE id = (SELECT id FROM desktops WHERE user_id = $1 ORDER BY name LIMIT 1)`,
      [owner.id],
    );
    const listed = await t.app.desktops.listForUser(owner.id);
    expect(listed.length).toBeGreaterThan(0);
    // An event carries a desktop made from its whole row.
    for (const desktop of listed)
      expect(desktop).toStrictEqual(
        await t.app.desktops.publishCurrent(desktop.id, 'desktops.updated'),
      );
    expect(listed[0]).toMatchObject({
      next_booking_start: '2026-03-04T06:00:00.999Z',
      booking_id: 'b-1',
      queue: { position: 2, event: 'start' },
      detail: 'a detail',
    });
    expect(listed[0]).not.toHaveProperty('description');
  });

  it('holds every lease of background work in its one process', async () => {
    expect(t.app.work.isLeader).toBe(true);
    expect(await t.app.work.liveNodes()).toEqual(new Set([t.config.nodeName]));
    const ran: string[] = [];
    t.app.work.handle('smoke', async (job) => void ran.push(job.key));
    await t.app.work.enqueue('smoke', 'smoke:1');
    await t.app.work.idle();
    expect(ran).toEqual(['smoke:1']);
    expect(await t.app.work.exclusive('smoke', async () => 1)).toEqual({ ran: true, value: 1 });
  });

  it('creates a desktop on the single PGlite connection (quota lock, name check) and refuses a duplicate name', async () => {
    const token = await login(t.app, 'user', TEST_PASSWORD);
    const create = (name: string) =>
      injectWithToken(t.app, token, {
        method: 'POST',
        url: '/api/v3/persistent_desktop',
        payload: { template_id: 'demo-template', name },
      });
    const first = await create('PGlite desktop');
    expect(first.statusCode, first.body).toBe(200);
    const again = await create('PGlite desktop');
    expect(again.statusCode).toBe(409);
    expect(again.json().description_code).toBe('new_desktop_name_exists');
    const list = (
      await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user/desktops' })
    ).json() as { name: string }[];
    expect(list.map((d) => d.name)).toContain('PGlite desktop');
  });

  it('keeps data and key across a restart on the same DATA_DIR, without reseeding or re-migrating', async () => {
    const token = await login(t.app, 'admin');
    await t.app.close();
    const again = await buildApp(t.config);
    try {
      expect((await seedIfEmpty(again)).seeded).toBe(false);
      const migrations = await again.database.query<{ version: string }>(
        'SELECT version FROM schema_migrations',
      );
      expect(migrations.map((m) => m.version).sort()).toEqual(
        loadMigrations().map((m) => m.version),
      );
      // same signing key and session table: the earlier token is still good
      expect(
        (await injectWithToken(again, token, { method: 'GET', url: '/api/v3/user' })).statusCode,
      ).toBe(200);
    } finally {
      t.app = again;
    }
  });
});
