/**
 * Group and category desktop limits under parallel creates: with one unit left, 21 creates fired
 * at once by three users of the scope admit exactly one desktop; the others are refused with the
 * limit's code and the scope ends with exactly the limit's number of desktops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserRow } from '../../platform/db/schema.ts';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  type TestApp,
} from '../../../test/support/helper.ts';
import {
  addCategory,
  addDesktop,
  addGroup,
  addUser,
  desktopRows,
  loginTo,
} from '../../../test/support/fixtures.ts';

const DEMO_TEMPLATE_ID = 'demo-template';
const PER_USER = 7;

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
});
afterAll(async () => t.close());

/** Three users of a category and group, logged in. */
const threeUsers = async (prefix: string, categoryId: string, groupId: string) => {
  const users: { row: UserRow; token: string }[] = [];
  for (const n of [1, 2, 3]) {
    const row = await addUser(t.app, {
      username: `${prefix}-${n}`,
      role: 'user',
      categoryId,
      groupId,
    });
    users.push({ row, token: await loginTo(t.app, row.username, categoryId) });
  }
  return users;
};

/** Fires PER_USER creates per user all at once; answers the status and code of each. */
const createAtOnce = async (users: { token: string }[], prefix: string) => {
  const answers = await Promise.all(
    users.flatMap(({ token }, u) =>
      Array.from({ length: PER_USER }, (_, i) =>
        injectWithToken(t.app, token, {
          method: 'POST',
          url: '/api/v3/persistent_desktop',
          payload: { template_id: DEMO_TEMPLATE_ID, name: `${prefix} ${u}-${i}` },
        }),
      ),
    ),
  );
  return answers.map((res) => ({
    status: res.statusCode,
    code: res.statusCode === 200 ? null : res.json<{ description_code: string }>().description_code,
  }));
};

describe('desktop limits under parallel creates', () => {
  it('admits exactly one create when the category limit has one unit left', async () => {
    await addCategory(t.app, 'race-cat', { limits: { desktops: 3 } });
    await addGroup(t.app, 'race-cat-users', 'race-cat');
    const users = await threeUsers('cat', 'race-cat', 'race-cat-users');
    const [first] = users;
    if (!first) throw new Error('no user');
    await addDesktop(t.app, first.row, 'Existing 1');
    await addDesktop(t.app, first.row, 'Existing 2');
    expect(await desktopRows(t.app, 'category_id = $1', ['race-cat'])).toHaveLength(2);

    const answers = await createAtOnce(users, 'Category race');
    expect(answers).toHaveLength(21);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(20);
    for (const a of refused)
      expect(a).toEqual({ status: 428, code: 'desktop_new_category_limit_exceeded' });
    expect(await desktopRows(t.app, 'category_id = $1', ['race-cat'])).toHaveLength(3);
  });

  it('admits exactly one create when the group limit has one unit left', async () => {
    await addCategory(t.app, 'group-cat');
    await addGroup(t.app, 'race-group', 'group-cat', { limits: { desktops: 2 } });
    const users = await threeUsers('grp', 'group-cat', 'race-group');
    const [first] = users;
    if (!first) throw new Error('no user');
    await addDesktop(t.app, first.row, 'Existing');

    const answers = await createAtOnce(users, 'Group race');
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    const refused = answers.filter((a) => a.status !== 200);
    expect(refused).toHaveLength(20);
    for (const a of refused)
      expect(a).toEqual({ status: 428, code: 'desktop_new_group_limit_exceeded' });
    expect(await desktopRows(t.app, 'group_id = $1', ['race-group'])).toHaveLength(2);
  });

  it('still admits creates up to the limit, one by one', async () => {
    await addCategory(t.app, 'calm-cat', { limits: { desktops: 2 } });
    await addGroup(t.app, 'calm-users', 'calm-cat');
    const [only] = await threeUsers('calm', 'calm-cat', 'calm-users');
    if (!only) throw new Error('no user');
    const create = (name: string) =>
      injectWithToken(t.app, only.token, {
        method: 'POST',
        url: '/api/v3/persistent_desktop',
        payload: { template_id: DEMO_TEMPLATE_ID, name },
      });
    expect((await create('Calm one')).statusCode).toBe(200);
    expect((await create('Calm two')).statusCode).toBe(200);
    const third = await create('Calm three');
    expect(third.statusCode).toBe(428);
    expect(third.json().description_code).toBe('desktop_new_category_limit_exceeded');
  });
});
