import { describe, expect, it } from 'vitest';
import { computeSessionTimers, RENEW_PROMPT_BEFORE_MS, SERVICE_SESSION_ID } from './session-timers';

const now = 1_700_000_000_000;
const s = (offsetSeconds: number): number => now / 1000 + offsetSeconds;

describe('session timers', () => {
  it('prompts 5 minutes before max_time and expires at max_time', () => {
    const timers = computeSessionTimers(
      { id: 'x', max_renew_time: s(3600), max_time: s(3600) },
      now,
    );
    expect(timers).toEqual({
      promptInMs: 3600_000 - RENEW_PROMPT_BEFORE_MS,
      expireInMs: 3600_000,
      endsAt: now + 3600_000,
    });
  });

  it('uses max_renew_time when it is below max_time', () => {
    const timers = computeSessionTimers(
      { id: 'x', max_renew_time: s(1800), max_time: s(28800) },
      now,
    );
    expect(timers?.expireInMs).toBe(1800_000);
    expect(timers?.promptInMs).toBe(1800_000 - 300_000);
  });

  it('prompts at once when less than 5 minutes remain', () => {
    expect(
      computeSessionTimers({ id: 'x', max_renew_time: s(60), max_time: s(60) }, now)?.promptInMs,
    ).toBe(0);
  });

  it('skips timers for the service-account session', () => {
    expect(
      computeSessionTimers({ id: SERVICE_SESSION_ID, max_renew_time: s(10), max_time: s(10) }, now),
    ).toBeNull();
  });
});
