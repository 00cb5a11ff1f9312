/**
 * Session timer maths: the renew prompt opens 5 minutes before
 * the end of the session, the expired modal at the end. When max_renew_time < max_time the end is
 * max_renew_time. The service-account session skips timers.
 */
import type { UserConfig } from '@/generated/types';

export const RENEW_PROMPT_BEFORE_MS = 300_000;
export const SERVICE_SESSION_ID = 'isardvdi-service';

export interface SessionTimers {
  /** Delay until the renew prompt (0 = now). */
  promptInMs: number;
  /** Delay until the expired modal. */
  expireInMs: number;
  /** Epoch milliseconds of the end used. */
  endsAt: number;
}

/** Computes the delays for a config `session`, or null when no timers apply. */
export function computeSessionTimers(
  session: UserConfig['session'] | null | undefined,
  nowMs: number,
): SessionTimers | null {
  if (!session || session.id === SERVICE_SESSION_ID) return null;
  const { max_renew_time: maxRenew, max_time: maxTime } = session;
  if (!Number.isFinite(maxTime) && !Number.isFinite(maxRenew)) return null;
  const endSeconds = Number.isFinite(maxRenew) && maxRenew < maxTime ? maxRenew : maxTime;
  const endsAt = endSeconds * 1000;
  return {
    promptInMs: Math.max(0, endsAt - RENEW_PROMPT_BEFORE_MS - nowMs),
    expireInMs: Math.max(0, endsAt - nowMs),
    endsAt,
  };
}
