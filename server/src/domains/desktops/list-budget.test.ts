/**
 * The byte budget of the desktop list: GET /user/desktops stays within 350 bytes per desktop.
 *
 * A user gets desktops with realistic values: long names, a description, an uploaded card on one
 * in five, and on every row the columns the list leaves out set (template, hardware with media,
 * credentials, the guest's last address, the current action). The fields that depend on what a
 * desktop is doing are set where a portal has them: the address and a scheduled shutdown while
 * started, the queue entry while starting, the failure while failed, the GPU profile and its
 * bookings on GPU desktops. Every optional field of the list's schema is in the answer at least
 * once, so the budget holds with all of them in use. The list, which reads only the columns it
 * sends, gives each desktop exactly as an event made from its whole row does.
 */
import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemas } from '../../../../src/generated/schemas.ts';
import { Desktop } from '../../../../src/generated/validators.js';
import { demoGuestProperties, demoHardware } from '../../seed/index.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';
import { addDesktop, userRow } from '../../../test/support/fixtures.ts';
import { desktops } from '../../platform/db/schema.ts';
import { toWire } from './desktops-repository.ts';

/** The list's budget per desktop, in bytes of its JSON answer. */
const BUDGET_BYTES = 350;
const DESKTOPS = 100;
const HOUR = 3_600_000;

const desktopSchema = schemas.find((s) => s.$id.endsWith('/entities/desktop.json'));
const required: readonly string[] =
  desktopSchema && 'required' in desktopSchema ? desktopSchema.required : [];
const optionalFields = Object.keys(
  desktopSchema && 'properties' in desktopSchema ? desktopSchema.properties : {},
).filter((name) => !required.includes(name));

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  const owner = await userRow(t.app, 'user');
  const now = Date.now();
  for (let i = 0; i < DESKTOPS; i++) {
    const kind = i % 10;
    const state =
      kind === 5 || kind === 6
        ? 'started'
        : kind === 7
          ? 'failed'
          : kind === 8
            ? 'starting'
            : 'stopped';
    const file = `${randomBytes(32).toString('base64url')}.webp`;
    const gpu = kind === 9;
    await addDesktop(
      t.app,
      owner,
      `Ubuntu 24.04 networks lab, group B, seat ${String(i + 1).padStart(3, '0')}`,
      {
        description: 'Wireshark, GNS3 and the networks lab exercises.',
        state,
        templateId: 'demo-template',
        image:
          i % 5 === 0
            ? { id: file, type: 'user', url: `/api/v3/images/desktops/user/${file}` }
            : { id: String(1 + (i % 48)), type: 'stock', url: '' },
        hardware: {
          ...demoHardware(),
          isos: [{ id: 'demo-iso', name: 'Demo ISO' }],
          reservables: { vgpus: gpu ? ['NVIDIA-A16-2Q'] : null },
        },
        guestProperties: {
          ...demoGuestProperties(),
          credentials: { username: 'student', password: 'a long enough password' },
        },
        runtime: { ip: `10.120.${i % 250}.${(i * 7) % 250}` },
        currentAction: 'start',
        ...(state === 'started'
          ? { scheduled: { shutdown: new Date(now + 2 * HOUR).toISOString() } }
          : {}),
        ...(gpu
          ? {
              nextBookingStart: new Date(now - HOUR),
              nextBookingEnd: new Date(now + HOUR),
              bookingId: '3b5d3a57-1a2b-4c3d-9e8f-0a1b2c3d4e5f',
            }
          : {}),
        ...(state === 'starting' ? { queue: { position: 2, event: 'start' } } : {}),
        ...(state === 'failed' ? { detail: 'The hypervisor refused to start it' } : {}),
      },
    );
  }
}, 120_000);

afterAll(async () => {
  await t.close();
});

describe('GET /user/desktops byte budget', () => {
  it(`stays within ${BUDGET_BYTES} B per desktop with every optional field in use`, async () => {
    const res = await injectWithToken(t.app, await login(t.app, 'user'), {
      method: 'GET',
      url: '/api/v3/user/desktops',
    });
    expect(res.statusCode).toBe(200);
    const list = res.json<Record<string, unknown>[]>();
    expect(list.length).toBeGreaterThanOrEqual(DESKTOPS);
    for (const d of list) expect(Desktop(d), JSON.stringify(Desktop.errors)).toBe(true);
    const missing = optionalFields.filter((field) => !list.some((d) => field in d));
    expect(missing, 'optional fields no desktop of the test carries').toEqual([]);
    const perDesktop = Buffer.byteLength(res.body) / list.length;
    expect(perDesktop, `${perDesktop.toFixed(1)} B per desktop`).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('lists each desktop as its events carry it (the whole row through toWire)', async () => {
    const owner = await userRow(t.app, 'user');
    // Timestamps with microseconds: the list's JSON text and the driver's Date both keep milliseconds.
    await t.app.database.query(
      `UPDATE desktops SET accessed = '2026-03-04 05:06:07.891234+00',
         next_booking_start = '2026-03-04 06:00:00.999999+00',
         next_booking_end = '2026-03-04 07:00:00.000501+00'
       WHERE id = (SELECT id FROM desktops WHERE user_id = $1 ORDER BY name LIMIT 1)`,
      [owner.id],
    );
    const listed = await t.app.desktops.listForUser(owner.id);
    const rows = await t.app.desktops.table.list({ where: eq(desktops.userId, owner.id) });
    const byId = new Map(rows.map((row) => [row.id, toWire(row)]));
    expect(listed.length).toBe(rows.length);
    for (const desktop of listed) expect(desktop).toStrictEqual(byId.get(desktop.id));
    expect(listed[0]).toMatchObject({
      accessed: Date.parse('2026-03-04T05:06:07Z') / 1000,
      next_booking_start: '2026-03-04T06:00:00.999Z',
      next_booking_end: '2026-03-04T07:00:00.000Z',
    });
    // In the order the list promises: by name.
    const names = listed.map((desktop) => desktop.name);
    expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });
});
