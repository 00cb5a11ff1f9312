/**
 * The password pool runs one hash per slot, lines the rest up, and refuses at once (503
 * server_busy with Retry-After) a call whose expected wait is over the budget.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../http/api-error.ts';
import { createPasswordGate } from './password-gate.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('password gate', () => {
  it('runs at most one hash per slot at a time and the waiting ones in order', async () => {
    const gate = createPasswordGate({ slots: 2, budgetMs: 10_000 });
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const work = (n: number) => async () => {
      running += 1;
      most = Math.max(most, running);
      await sleep(20);
      running -= 1;
      order.push(n);
      return n;
    };
    const results = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => gate.run(work(n))));
    expect(results).toEqual([1, 2, 3, 4, 5, 6]);
    expect(most).toBe(2);
    expect(order.slice(2)).toEqual([3, 4, 5, 6]);
    expect(gate.load()).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses with 503 server_busy and Retry-After when the line would take longer than the budget', async () => {
    const gate = createPasswordGate({ slots: 1, budgetMs: 150 });
    // Teach the gate that one hash takes ~100 ms.
    for (let i = 0; i < 12; i += 1) await gate.run(() => sleep(100));
    const admitted = [gate.run(() => sleep(100)), gate.run(() => sleep(100))];
    const refused = await gate.run(() => sleep(100)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    const error = refused as ApiError;
    expect(error.statusCode).toBe(503);
    expect(error.descriptionCode).toBe('server_busy');
    expect(error.headers?.['retry-after']).toBe('1');
    await Promise.all(admitted);
    // Once the line is short again, calls are admitted.
    await expect(gate.run(async () => 'ok')).resolves.toBe('ok');
  });

  it('passes the slot on when a hash fails', async () => {
    const gate = createPasswordGate({ slots: 1, budgetMs: 10_000 });
    const failing = gate.run(() => Promise.reject(new Error('argon2 failed')));
    const next = gate.run(async () => 'next');
    await expect(failing).rejects.toThrow('argon2 failed');
    await expect(next).resolves.toBe('next');
    expect(gate.load()).toEqual({ running: 0, waiting: 0 });
  });
});
