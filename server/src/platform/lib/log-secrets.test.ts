/**
 * Secrets never reach the logs, whatever carries them: a session JWT in a path segment, in a query
 * string or in an Authorization header, passwords in a login form, and a console ticket in a query.
 * The server runs at debug level here, where every request and response is logged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  injectWithToken,
  login,
  loginRequest,
  TEST_PASSWORD,
  type TestApp,
} from '../../../test/support/helper.ts';

let t: TestApp;
const lines: string[] = [];

beforeAll(async () => {
  t = await buildTestApp(
    await createTestDatabase(),
    { logLevel: 'debug', logFormat: 'pretty' },
    { logSink: { write: (chunk: string) => lines.push(chunk) } },
  );
});
afterAll(async () => t.close());

describe('secrets in logs', () => {
  it('logs no JWT, password or ticket from paths, queries, headers or forms', async () => {
    const token = await login(t.app, 'user');
    const signature = token.split('.')[2] ?? '';
    expect(signature.length).toBeGreaterThan(10);
    await injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/domain/info/${token}` });
    await injectWithToken(t.app, token, { method: 'GET', url: `/api/v3/user?session=${token}` });
    await t.app.inject({ method: 'GET', url: `/api/v3/user?token=${token}&jwt=${token}` });
    await t.app.inject({ method: 'GET', url: '/api/v3/viewer/vnc?ticket=Ticket-Canary-42' });
    await loginRequest(t.app, 'user', 'Wrong-Password-Canary-9');
    const logs = lines.join('');
    expect(logs).toContain('incoming request');
    expect(logs).toContain('/api/v3/domain/info/');
    for (const secret of [
      signature,
      'eyJ',
      TEST_PASSWORD,
      'Wrong-Password-Canary-9',
      'Ticket-Canary-42',
    ])
      expect(logs, secret).not.toContain(secret);
  });
});
