/**
 * Field roles (x-roles on a body property): only the listed roles may send the field, for every
 * operation whose body has it; the generated form metadata says the same to the SPA.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeGuardedFields } from './route.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  injectWithToken,
  login,
  type TestApp,
} from '../../../test/support/helper.ts';

let t: TestApp;
let userToken: string;
let adminToken: string;
let desktopId: string;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  userToken = await login(t.app, 'user');
  adminToken = await login(t.app, 'admin');
  const list = (
    await injectWithToken(t.app, userToken, { method: 'GET', url: '/api/v3/user/desktops' })
  ).json() as {
    id: string;
  }[];
  desktopId = list[0]?.id ?? '';
  // A stopped desktop may be edited.
  await t.app.desktops.update(desktopId, { state: 'stopped' });
});
afterAll(async () => t.close());

describe('the server flag of a desktop', () => {
  it('is a field only admins and managers may write', () => {
    expect(writeGuardedFields('DesktopUpdate')).toEqual([
      // the host a desktop is pinned to (placement)
      { path: 'forced_hyp', roles: ['admin'] },
      { path: 'server', roles: ['admin', 'manager'] },
    ]);
  });

  it('is refused with 403 when a user sends it, and changes nothing', async () => {
    const res = await injectWithToken(t.app, userToken, {
      method: 'PUT',
      url: `/api/v3/domain/${desktopId}`,
      payload: { server: true },
    });
    expect(res.statusCode).toBe(403);
    expectErrorShape(res.json(), 'forbidden');
    expect((await t.app.desktops.byId(desktopId))?.server).toBe(false);
  });

  it('is stored when an admin sends it', async () => {
    const res = await injectWithToken(t.app, adminToken, {
      method: 'PUT',
      url: `/api/v3/domain/${desktopId}`,
      payload: { server: true },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.app.desktops.byId(desktopId))?.server).toBe(true);
  });

  it('lets a user edit the other fields', async () => {
    await t.app.desktops.update(desktopId, { server: false });
    const res = await injectWithToken(t.app, userToken, {
      method: 'PUT',
      url: `/api/v3/domain/${desktopId}`,
      payload: { description: 'edited by its owner' },
    });
    expect(res.statusCode).toBe(200);
    expect((await t.app.desktops.byId(desktopId))?.description).toBe('edited by its owner');
  });
});
