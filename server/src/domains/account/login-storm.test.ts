/**
 * A storm of sign-ins is shed, not queued without end: what the bounded pool cannot start within
 * its budget is refused at once with 503 server_busy and a Retry-After, the rest sign in, and
 * nothing else fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';

let t: TestApp;

beforeAll(async () => {
  // A budget no wait fits in: every sign-in beyond the pool's slots is refused.
  t = await buildTestApp(await createTestDatabase(), { passwordQueueBudgetMs: 1 });
});
afterAll(async () => t.close());

describe('sign-in storm', () => {
  it('refuses the sign-ins beyond the pool with 503 server_busy and Retry-After, and signs the others in', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        loginRequest(t.app, `student${String((i % 30) + 1).padStart(2, '0')}`),
      ),
    );
    const ok = answers.filter((a) => a.statusCode === 200);
    const refused = answers.filter((a) => a.statusCode === 503);
    expect(ok.length + refused.length, 'no other answer').toBe(answers.length);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const answer of refused) {
      expectErrorShape(answer.json(), 'service_unavailable');
      expect(answer.json()).toMatchObject({ description_code: 'server_busy' });
      expect(answer.headers['retry-after']).toBe('1');
    }
    // Once the storm has passed, sign-ins are admitted again.
    expect((await loginRequest(t.app, 'student01')).statusCode).toBe(200);
  });
});
