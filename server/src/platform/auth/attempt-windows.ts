/**
 * Fixed-window counters of attempts at guessing a code, on the login throttle's table (so every
 * node shares them and a restart keeps them): a key allows `max` attempts in a window of
 * `windowSeconds` that starts with its first attempt; past that the caller gets 429 with
 * `Retry-After` at the end of the window, right code or not.
 */
import type { FastifyInstance } from 'fastify';
import { tooManyRequests } from '../http/rate-limit.ts';

export interface AttemptWindow {
  /** the key's family; the counter's key is `${scope}:${subject}` */
  scope: string;
  max: number;
  windowSeconds: number;
}

/** Migration-code imports: 5 a minute per user, counted whatever the code. */
export const MIGRATION_IMPORTS: AttemptWindow = {
  scope: 'migration-import',
  max: 5,
  windowSeconds: 60,
};

/** Wrong registration codes: 10 per 10 minutes per client address. */
export const WRONG_REGISTRATION_CODES: AttemptWindow = {
  scope: 'registration-code',
  max: 10,
  windowSeconds: 10 * 60,
};

/**
 * OpenID Connect sign-ins started: 100 per 10 minutes per client address (a class behind one
 * address signs in at once), each start counted, so a client cannot fill the table of sign-ins
 * under way nor use the portal to flood the provider.
 */
export const OIDC_STARTS: AttemptWindow = {
  scope: 'oidc-start',
  max: 100,
  windowSeconds: 10 * 60,
};

interface WindowRow {
  count: number;
  window_start: Date | string;
}

const endOf = (rule: AttemptWindow, row: WindowRow) =>
  new Date(new Date(row.window_start).getTime() + rule.windowSeconds * 1000);

const limited = (rule: AttemptWindow, until: Date) =>
  tooManyRequests({
    retry: { until },
    description: `Too many attempts: at most ${rule.max} in ${rule.windowSeconds} seconds`,
    code: 'too_many_requests',
    params: { limit: rule.max, window_seconds: rule.windowSeconds },
  });

/** 429 when the key has used up its window already (checks without counting). */
export async function assertAttemptsLeft(
  app: FastifyInstance,
  rule: AttemptWindow,
  subject: string,
): Promise<void> {
  const [row] = await app.database.query<WindowRow>(
    `SELECT count, window_start FROM login_attempts
     WHERE key = $1 AND window_start >= now() - make_interval(secs => $2)`,
    [`${rule.scope}:${subject}`, rule.windowSeconds],
  );
  if (row && row.count >= rule.max) throw limited(rule, endOf(rule, row));
}

/**
 * Counts one attempt (a window older than `windowSeconds` starts again at this one); 429 when
 * this attempt is beyond the window's `max`.
 */
export async function countAttempt(
  app: FastifyInstance,
  rule: AttemptWindow,
  subject: string,
): Promise<void> {
  const [row] = await app.database.query<WindowRow>(
    `INSERT INTO login_attempts (key, count, window_start, updated_at) VALUES ($1, 1, now(), now())
     ON CONFLICT (key) DO UPDATE SET
       count = CASE WHEN login_attempts.window_start < now() - make_interval(secs => $2)
                 THEN 1 ELSE login_attempts.count + 1 END,
       window_start = CASE WHEN login_attempts.window_start < now() - make_interval(secs => $2)
                 THEN now() ELSE login_attempts.window_start END,
       updated_at = now()
     RETURNING count, window_start`,
    [`${rule.scope}:${subject}`, rule.windowSeconds],
  );
  if (row && row.count > rule.max) throw limited(rule, endOf(rule, row));
}
