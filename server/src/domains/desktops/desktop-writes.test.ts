/**
 * A desktop write goes through one prepared statement per shape (the condition and the columns
 * written): what it stores is what a plain write stores. A null is SQL NULL (not the JSON `null`
 * of a JSON column, and no encoder of a date column is given it), a date and a JSON value are
 * stored as such, and a write whose state condition does not hold changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { buildTestApp, createTestDatabase, type TestApp } from '../../../test/support/helper.ts';
import { DEMO_TEMPLATE_ID, demoGuestProperties, demoHardware } from '../../seed/index.ts';
import { desktopState } from '../../../../src/generated/policy.ts';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  const [owner] = await t.app.database.query<{ id: string; group_id: string; category_id: string }>(
    "SELECT id, group_id, category_id FROM users WHERE username = 'user'",
  );
  if (!owner) throw new Error('the test database has no `user`');
  for (const name of ['Written twice', 'Left alone'])
    await t.app.desktops.create({
      id: randomUUID(),
      userId: owner.id,
      categoryId: owner.category_id,
      groupId: owner.group_id,
      name,
      description: name,
      templateId: DEMO_TEMPLATE_ID,
      hardware: demoHardware(),
      guestProperties: demoGuestProperties(),
    });
});

afterAll(async () => {
  await t.close();
});

describe('desktop writes through prepared statements', () => {
  it('store nulls as SQL NULL, dates and JSON as such, twice with the same shape', async () => {
    const [desktop] = await t.app.database.query<{ id: string; version: number }>(
      "SELECT id, version FROM desktops WHERE name = 'Written twice'",
    );
    if (!desktop) throw new Error('the desktop was not made');
    const start = new Date('2030-01-02T03:04:05.000Z');
    for (const round of [1, 2]) {
      const written = await t.app.desktops.update(
        desktop.id,
        {
          description: `round ${round}`,
          queue: { kind: 'start' } as never,
          nextBookingStart: start,
        },
        [desktopState.stopped],
      );
      expect(written?.description).toBe(`round ${round}`);
      await t.app.desktops.update(
        desktop.id,
        { detail: null, queue: null, nextBookingStart: null },
        [desktopState.stopped],
      );
      const [row] = await t.app.database.query<{
        description: string;
        detail_null: boolean;
        queue_null: boolean;
        start_null: boolean;
        version: number;
      }>(
        `SELECT description, detail IS NULL AS detail_null, queue IS NULL AS queue_null,
                next_booking_start IS NULL AS start_null, version
         FROM desktops WHERE id = $1`,
        [desktop.id],
      );
      expect(row).toEqual({
        description: `round ${round}`,
        detail_null: true,
        queue_null: true,
        start_null: true,
        version: Number(desktop.version) + round * 2,
      });
    }
    const [dated] = await t.app.database.query<{ at: string }>(
      'SELECT next_booking_start AS at FROM desktops WHERE id = $1',
      [desktop.id],
    );
    expect(dated?.at ?? null).toBeNull();
  });

  it('changes nothing when the state condition does not hold', async () => {
    const [desktop] = await t.app.database.query<{ id: string; description: string }>(
      "SELECT id, description FROM desktops WHERE name = 'Left alone'",
    );
    if (!desktop) throw new Error('the desktop was not made');
    expect(
      await t.app.desktops.update(desktop.id, { description: 'not written' }, [
        desktopState.started,
      ]),
    ).toBeUndefined();
    const [row] = await t.app.database.query<{ description: string }>(
      'SELECT description FROM desktops WHERE id = $1',
      [desktop.id],
    );
    expect(row?.description).toBe(desktop.description);
  });
});
