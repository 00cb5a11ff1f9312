/**
 * Sessions in the database, checked on every authenticated request. A short
 * in-memory cache keeps the hot path off the database; renewing on this node clears the entry at
 * once. A revocation travels on the cluster bus (`sessions.revoked`): every node, this one
 * included, drops the entries and calls the revocation listeners (sockets and consoles close); a
 * changed user (`user.changed`) empties the cache on every node. What a node missed is read again
 * after sessionCacheMs (1 s by default).
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import type { Role } from '../../../../src/generated/types.ts';

export interface SessionState {
  id: string;
  userId: string;
  role: Role;
  categoryId: string;
  groupId: string;
  name: string;
  provider: string;
  active: boolean;
  expiresAt: Date;
  maxRenewAt: Date;
  maxAt: Date;
  revokedAt: Date | null;
}

export interface SessionTimes {
  expiration: number;
  maxRenew: number;
  maxTime: number;
}

interface Row {
  id: string;
  user_id: string;
  role: Role;
  category_id: string;
  group_id: string;
  name: string;
  provider: string;
  active: boolean;
  expires_at: Date | string;
  max_renew_at: Date | string;
  max_at: Date | string;
  revoked_at: Date | string | null;
}

const toDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));
const toState = (r: Row): SessionState => ({
  id: r.id,
  userId: r.user_id,
  role: r.role,
  categoryId: r.category_id,
  groupId: r.group_id,
  name: r.name,
  provider: r.provider,
  active: r.active,
  expiresAt: toDate(r.expires_at),
  maxRenewAt: toDate(r.max_renew_at),
  maxAt: toDate(r.max_at),
  revokedAt: r.revoked_at === null ? null : toDate(r.revoked_at),
});

const SELECT = `SELECT s.id, s.user_id, u.role, u.category_id, u.group_id, u.name, u.provider, u.active,
  s.expires_at, s.max_renew_at, s.max_at, s.revoked_at FROM sessions s JOIN users u ON u.id = s.user_id`;
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A session as a login or a renewal leaves it, with the moment its current period began: the
 * login token it is answered with is issued at that moment, so the token lives exactly as long
 * as the period (its iat and exp come from one clock reading).
 */
export interface SessionPeriod extends SessionState {
  periodStart: Date;
}

export interface SessionsRepository {
  create(userId: string, remoteAddr: string, times: SessionTimes): Promise<SessionPeriod>;
  get(id: string): Promise<SessionState | undefined>;
  /** The session when usable for requests (not revoked, before max_at, user active); cached briefly. */
  alive(id: string): Promise<SessionState | undefined>;
  /** Extends the session while its renew window is open; undefined when it cannot be renewed. */
  renew(id: string, times: SessionTimes): Promise<SessionPeriod | undefined>;
  revoke(id: string): Promise<void>;
  revokeUser(userId: string): Promise<void>;
  /** Revokes every session of the user except `keepSessionId` (the caller's own). */
  revokeUserExcept(userId: string, keepSessionId: string): Promise<void>;
  /** Of the given ids, those whose socket may stay connected (alive and renew window open). */
  connectable(ids: string[]): Promise<Set<string>>;
  /** Listeners called with the session id after a revocation on any node. */
  onRevoke(listener: (sessionId: string) => void): void;
  clearCache(): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionsRepository;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const { query } = app.database;
  const cache = new Map<string, { state: SessionState | undefined; until: number }>();
  const listeners: ((id: string) => void)[] = [];
  const ttl = app.config.sessionCacheMs;

  const get = async (id: string) => {
    if (!UUID_RE.test(id)) return undefined;
    const rows = await query<Row>(`${SELECT} WHERE s.id = $1`, [id]);
    return rows[0] ? toState(rows[0]) : undefined;
  };

  const revoked = (ids: string[]) => {
    if (ids.length > 0) app.cluster.publish({ kind: 'sessions.revoked', ids });
  };
  app.cluster.on('sessions.revoked', ({ ids }) => {
    for (const id of ids) {
      cache.delete(id);
      for (const l of listeners) {
        try {
          l(id);
        } catch (err) {
          app.log.warn({ err }, 'session revocation listener failed');
        }
      }
    }
  });
  app.cluster.on('user.changed', () => cache.clear());
  app.cluster.on('resync', () => cache.clear());

  const repo: SessionsRepository = {
    async create(userId, remoteAddr, times) {
      const now = Date.now();
      const maxAt = new Date(now + times.maxTime * 1000);
      const rows = await query<{ id: string }>(
        `INSERT INTO sessions (id, user_id, expires_at, max_renew_at, max_at, remote_addr) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [
          randomUUID(),
          userId,
          new Date(Math.min(now + times.expiration * 1000, maxAt.getTime())),
          new Date(Math.min(now + times.maxRenew * 1000, maxAt.getTime())),
          maxAt,
          remoteAddr,
        ],
      );
      const state = rows[0] ? await get(rows[0].id) : undefined;
      if (!state) throw new Error('session not created');
      return { ...state, periodStart: new Date(now) };
    },
    get,
    async alive(id) {
      const now = Date.now();
      const hit = cache.get(id);
      let state: SessionState | undefined;
      if (hit && hit.until > now) state = hit.state;
      else {
        state = await get(id);
        if (ttl > 0) {
          if (cache.size > 50_000) cache.clear();
          cache.set(id, { state, until: now + ttl });
        }
      }
      if (!state || state.revokedAt || !state.active || state.maxAt.getTime() <= now)
        return undefined;
      return state;
    },
    async renew(id, times) {
      if (!UUID_RE.test(id)) return undefined;
      cache.delete(id);
      const rows = await query<{ id: string; period_start: Date | string }>(
        `UPDATE sessions SET
           expires_at = LEAST(now() + make_interval(secs => $2), max_at),
           max_renew_at = LEAST(now() + make_interval(secs => $3), max_at)
         WHERE id = $1 AND revoked_at IS NULL AND max_renew_at > now() AND max_at > now()
         RETURNING id, now() AS period_start`,
        [id, times.expiration, times.maxRenew],
      );
      const state = rows[0] ? await get(id) : undefined;
      return state && rows[0] ? { ...state, periodStart: toDate(rows[0].period_start) } : undefined;
    },
    async revoke(id) {
      if (!UUID_RE.test(id)) return;
      await query('UPDATE sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [
        id,
      ]);
      revoked([id]);
    },
    async revokeUser(userId) {
      const rows = await query<{ id: string }>(
        'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL RETURNING id',
        [userId],
      );
      revoked(rows.map((r) => r.id));
    },
    async revokeUserExcept(userId, keepSessionId) {
      const rows = await query<{ id: string }>(
        'UPDATE sessions SET revoked_at = now() WHERE user_id = $1 AND id::text <> $2 AND revoked_at IS NULL RETURNING id',
        [userId, keepSessionId],
      );
      revoked(rows.map((r) => r.id));
    },
    async connectable(ids) {
      const valid = ids.filter((id) => UUID_RE.test(id));
      if (valid.length === 0) return new Set();
      const rows = await query<{ id: string }>(
        `SELECT s.id FROM sessions s JOIN users u ON u.id = s.user_id
         WHERE s.id = ANY($1::uuid[]) AND s.revoked_at IS NULL AND s.max_at > now() AND s.max_renew_at > now() AND u.active`,
        [valid],
      );
      return new Set(rows.map((r) => r.id));
    },
    onRevoke(listener) {
      listeners.push(listener);
    },
    clearCache() {
      cache.clear();
    },
  };
  app.decorate('sessions', repo);
};

export default globalPlugin(plugin, 'sessions-repository');
