/**
 * A storm of sign-ins is shed, not queued without end: what the bounded pool cannot start within
 * its budget is refused at once with 503 server_busy and a Retry-After, the rest sign in, and
 * nothing else fails.
 */
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../platform/auth/passwords.ts';
import {
  buildTestApp,
  createTestDatabase,
  expectErrorShape,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';

let t: TestApp | undefined;

beforeAll(async () => {
  // A budget no wait fits in: every sign-in beyond the pool's slots is refused.
  t = await buildTestApp(await createTestDatabase(), { passwordQueueBudgetMs: 1 });
});
afterAll(async () => t?.close());

/** More hashes at once than the pool has slots: the budget decides whether some wait or are refused. */
const moreThanTheSlots = () =>
  Promise.allSettled(
    Array.from({ length: availableParallelism() + 2 }, (_, i) => hashPassword(`storm-${i}`)),
  );

describe('sign-in storm', () => {
  it('refuses the sign-ins beyond the pool with 503 server_busy and Retry-After, and signs the others in', async () => {
    const app = t?.app;
    if (!app) throw new Error('no app');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        loginRequest(app, `student${String((i % 30) + 1).padStart(2, '0')}`),
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
    expect((await loginRequest(app, 'student01')).statusCode).toBe(200);
  });

  it("gives the process's default pool back when the app closes: a later caller waits in line", async () => {
    const refusedWhileOpen = (await moreThanTheSlots()).filter((r) => r.status === 'rejected');
    expect(refusedWhileOpen.length).toBeGreaterThanOrEqual(1);
    await t?.close();
    t = undefined;
    const afterClose = await moreThanTheSlots();
    expect(afterClose.filter((r) => r.status === 'rejected')).toEqual([]);
  });
});
