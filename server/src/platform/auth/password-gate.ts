/**
 * The bounded pool of password hashing. argon2id costs tens of milliseconds of one core and 19 MiB
 * each, so a storm of sign-ins must not queue without end: at most one hash per core runs at a
 * time, the rest wait in line, and a call whose expected wait (the line ahead of it times the
 * recent hashing time, over the running slots) exceeds the budget is refused at once with
 * 503 `server_busy` and `Retry-After`, so the sign-ins that are admitted stay fast.
 */
import { availableParallelism } from 'node:os';
import { ApiError } from '../http/api-error.ts';
import { retryAfterHeaders } from '../http/rate-limit.ts';

export interface PasswordGate {
  /** Runs `work` in a slot, after waiting in line; throws 503 `server_busy` when the line is too long. */
  run<T>(work: () => Promise<T>): Promise<T>;
  /** Hashes running and calls waiting now. */
  load(): { running: number; waiting: number };
}

export function createPasswordGate(
  options: { slots?: number; budgetMs?: number } = {},
): PasswordGate {
  const slots = Math.max(1, options.slots ?? availableParallelism());
  const budgetMs = options.budgetMs ?? 1000;
  let running = 0;
  /** A moving average of one hash's time, in ms (starts at argon2id's usual cost). */
  let averageMs = 50;
  const waiting: (() => void)[] = [];

  const busy = () =>
    new ApiError(
      'service_unavailable',
      'Too many sign-ins at once; try again in a moment',
      'server_busy',
      null,
      { headers: retryAfterHeaders({ seconds: 1 }) },
    );

  return {
    async run(work) {
      if (running < slots) running += 1;
      else {
        const expectedWaitMs = ((waiting.length + 1) * averageMs) / slots;
        if (expectedWaitMs > budgetMs) throw busy();
        // The slot is handed over by the call that ends (running stays counted).
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      const started = performance.now();
      try {
        return await work();
      } finally {
        averageMs = averageMs * 0.8 + (performance.now() - started) * 0.2;
        const next = waiting.shift();
        if (next) next();
        else running -= 1;
      }
    },
    load: () => ({ running, waiting: waiting.length }),
  };
}
