/**
 * Persistent login throttling against password guessing, stored in login_attempts so it is
 * shared by every node and survives restarts.
 * - per (username, category, provider): after 10 failures each further failure bans for
 *   (n - 10)^2 minutes, capped at 15 minutes; while banned even the right password gets 429;
 * - per client IP: 50 failures in a 10-minute window -> 429 until the window ends.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';

export const MAX_ATTEMPTS = 10;
const RETRY_UNIT_S = 60;
const MAX_BAN_S = 15 * 60;
export const IP_MAX_FAILURES = 50;
const IP_WINDOW_S = 10 * 60;

export interface LoginThrottle {
  /** When a ban is active for this account key or IP, the date it ends. */
  bannedUntil(accountKey: string, ip: string): Promise<Date | undefined>;
  /** Records a failure; returns the ban end when this failure started (or extended) a ban. */
  fail(accountKey: string, ip: string): Promise<Date | undefined>;
  succeed(accountKey: string): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    loginThrottle: LoginThrottle;
  }
}

export const accountKey = (username: string, categoryId: string, provider: string) =>
  `acct:${provider}:${categoryId}:${username.toLowerCase()}`;

const plugin: FastifyPluginAsync = async (app) => {
  const { query } = app.database;
  const ipKey = (ip: string) => `ip:${ip}`;

  app.decorate('loginThrottle', {
    async bannedUntil(acct, ip) {
      const rows = await query<{ retry_after: Date | string | null }>(
        `SELECT retry_after FROM login_attempts WHERE key = ANY($1::text[]) AND retry_after > now() ORDER BY retry_after DESC LIMIT 1`,
        [[acct, ipKey(ip)]],
      );
      const r = rows[0]?.retry_after;
      return r ? new Date(r) : undefined;
    },
    async fail(acct, ip) {
      const [account] = await query<{ count: number }>(
        `INSERT INTO login_attempts (key, count, updated_at) VALUES ($1, 1, now())
         ON CONFLICT (key) DO UPDATE SET count = login_attempts.count + 1, updated_at = now()
         RETURNING count`,
        [acct],
      );
      const [perIp] = await query<{ count: number; window_start: Date | string }>(
        `INSERT INTO login_attempts (key, count, window_start, updated_at) VALUES ($1, 1, now(), now())
         ON CONFLICT (key) DO UPDATE SET
           count = CASE WHEN login_attempts.window_start < now() - make_interval(secs => $2) THEN 1 ELSE login_attempts.count + 1 END,
           window_start = CASE WHEN login_attempts.window_start < now() - make_interval(secs => $2) THEN now() ELSE login_attempts.window_start END,
           updated_at = now()
         RETURNING count, window_start`,
        [ipKey(ip), IP_WINDOW_S],
      );
      let until: Date | undefined;
      const n = account?.count ?? 0;
      if (n > MAX_ATTEMPTS) {
        const seconds = Math.min(Math.round((n - MAX_ATTEMPTS) ** 2) * RETRY_UNIT_S, MAX_BAN_S);
        until = new Date(Date.now() + seconds * 1000);
        await query('UPDATE login_attempts SET retry_after = $2 WHERE key = $1', [acct, until]);
      }
      if (perIp && perIp.count > IP_MAX_FAILURES) {
        const ipUntil = new Date(new Date(perIp.window_start).getTime() + IP_WINDOW_S * 1000);
        await query('UPDATE login_attempts SET retry_after = $2 WHERE key = $1', [
          ipKey(ip),
          ipUntil,
        ]);
        if (!until || ipUntil > until) until = ipUntil;
      }
      return until;
    },
    async succeed(acct) {
      await query('DELETE FROM login_attempts WHERE key = $1', [acct]);
    },
  } satisfies LoginThrottle);
};

export default globalPlugin(plugin, 'login-throttle');
