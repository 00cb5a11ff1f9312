/**
 * Users CSV: the export in the caller's scope, and an import of 200 rows with one bad row: the
 * dry run reports exactly that row and writes nothing, the commit creates the 199 others (each
 * with its audit entry), and a second import updates them instead of duplicating.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';

let t: TestApp;
let admin: string;

const importCsv = (token: string, csv: string, dryRun: boolean) =>
  injectWithToken(t.app, token, {
    method: 'POST',
    url: '/api/v3/admin/users/csv',
    payload: { csv, dry_run: dryRun },
  });

const count = async (where: string) =>
  (await t.app.database.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${where}`))[0]?.n;

beforeAll(async () => {
  t = await buildTestApp(await createTestDatabase());
  admin = await login(t.app, 'admin');
});

afterAll(async () => {
  await t.close();
});

function csv(name: (i: number) => string): string {
  const lines = ['username,name,email,role,group,password'];
  for (let i = 1; i <= 200; i++) {
    const u = `pupil${String(i).padStart(3, '0')}`;
    // row 51 (line 52) names a group that does not exist
    const group = i === 51 ? 'no-such-group' : 'Class B';
    lines.push(`${u},"${name(i)}",${u}@example.org,user,${group},${i % 2 ? 'Shared-pass-1' : ''}`);
  }
  return lines.join('\n') + '\n';
}

describe('users CSV', () => {
  it('exports the caller scope with the header', async () => {
    const res = await injectWithToken(t.app, admin, {
      method: 'GET',
      url: '/api/v3/admin/users/csv',
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const lines = res.body.trim().split('\r\n');
    expect(lines[0]).toBe('username,name,email,role,category,group,active');
    expect(lines).toContain('admin,Demo Admin,admin@example.org,admin,default,default-admins,true');
    const res2 = await loginRequest(t.app, 'manager2', undefined, 'school2');
    const m2 = await injectWithToken(t.app, res2.body, {
      method: 'GET',
      url: '/api/v3/admin/users/csv',
    });
    expect(m2.body.trim().split('\r\n').slice(1)).toEqual([
      'manager2,Demo Manager (Second school),manager2@example.org,manager,school2,Second school,true',
    ]);
  });

  it('dry run reports exactly the bad row and writes nothing', async () => {
    const users = await count('users');
    const audit = await count('audit_log');
    const res = await importCsv(
      admin,
      csv((i) => `Pupil, number ${i}`),
      true,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      dry_run: true,
      created: 199,
      updated: 0,
      errors: [{ row: 52, username: 'pupil051', code: 'not_found', field: 'group' }],
    });
    expect(await count('users')).toBe(users);
    expect(await count('audit_log')).toBe(audit);
  });

  it('commits the 199 valid rows, then a second import updates them', async () => {
    const users = await count('users');
    const audit = await count('audit_log');
    const res = await importCsv(
      admin,
      csv((i) => `Pupil, number ${i}`),
      false,
    );
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ dry_run: false, created: 199, updated: 0 });
    expect(await count('users')).toBe((users ?? 0) + 199);
    expect(await count("audit_log WHERE action = 'adminUsers.importCsv'")).toBe(199);
    expect(await count('audit_log')).toBe((audit ?? 0) + 199);
    expect(await count("users WHERE uid = 'pupil051'")).toBe(0);
    const pupil = await t.app.users.findLocal('pupil001', 'default');
    expect(pupil).toMatchObject({ name: 'Pupil, number 1', groupId: 'default-class-b' });
    // without a password: a random one and a reset at the first login
    expect((await t.app.users.findLocal('pupil002', 'default'))?.passwordResetRequired).toBe(true);
    expect(pupil?.passwordResetRequired).toBe(false);
    expect((await loginRequest(t.app, 'pupil001', 'Shared-pass-1')).statusCode).toBe(200);

    const again = await importCsv(
      admin,
      csv((i) => `Renamed ${i}`),
      false,
    );
    expect(again.json()).toMatchObject({ created: 0, updated: 199 });
    expect(await count('users')).toBe((users ?? 0) + 199);
    expect((await t.app.users.findLocal('pupil003', 'default'))?.name).toBe('Renamed 3');
  });

  it('checks roles, formats and the header for the caller', async () => {
    const manager = await login(t.app, 'manager');
    const res = await importCsv(
      manager,
      [
        'username,name,email,role,group',
        'boss,Boss,,admin,default-users',
        'x,Too short,,user,default-users',
        'ok.user,Ok,not-an-address,user,default-users',
        'admin,Admin,,user,default-admins',
      ].join('\n'),
      true,
    );
    expect(res.json().errors).toEqual([
      { row: 2, username: 'boss', code: 'forbidden', field: 'role' },
      { row: 3, username: 'x', code: 'validation', field: 'username' },
      { row: 4, username: 'ok.user', code: 'validation', field: 'email' },
      { row: 5, username: 'admin', code: 'forbidden', field: 'username' },
    ]);
    const header = await importCsv(admin, 'username,name\nfoo,Foo\n', true);
    expect([header.statusCode, header.json().description_code]).toEqual([400, 'csv_header']);
  });
});
