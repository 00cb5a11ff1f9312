/**
 * socket.io authentication: the handshake's auth.jwt is verified like a REST
 * bearer (signature, exp, live session); rooms come from the token only (user:<id>, admins);
 * a client-named room is ignored. A revocation on any node (logout, session revoked, user
 * disabled), heard on the cluster bus, disconnects the session's sockets at once; a changed user
 * (role, group, disabled, deleted) has all its sockets disconnected on every node, and the portal
 * reconnects them with the rooms of the account as it is now while the session lasts. A periodic
 * sweep catches the rest (a notification missed, a renew window that passed).
 *
 * Clients have nothing to say: no client event changes state (every change goes through REST), so
 * whatever a client emits is dropped unread, and a client emitting more than
 * MAX_CLIENT_EMITS_PER_SECOND events within any second is disconnected.
 */
import type { FastifyPluginAsync } from 'fastify';
import { globalPlugin } from '../lib/plugin.ts';
import { isLoginClaims } from './tokens.ts';
import { ADMINS_ROOM, roleRoom, userRoom } from '../events/event-bus.ts';
import { role } from '../../../../src/generated/policy.ts';

export const REJECTED = 'Connection rejected by server';
export const MAX_CLIENT_EMITS_PER_SECOND = 20;

/** True once more than `max` calls fell within `windowMs` (a sliding window of call times). */
export function rateLimiter(max: number, windowMs = 1000): (now?: number) => boolean {
  const times: number[] = [];
  return (now = Date.now()) => {
    times.push(now);
    if (times.length <= max) return false;
    const first = times.shift() ?? now;
    return now - first < windowMs;
  };
}

const plugin: FastifyPluginAsync = async (app) => {
  const { io } = app;

  io.use((socket, next) => {
    const jwt: unknown = (socket.handshake.auth as Record<string, unknown> | undefined)?.jwt;
    if (typeof jwt !== 'string' || jwt.length > 8192) return next(new Error(REJECTED));
    app.tokens
      .verify(jwt)
      .then(async (claims) => {
        if (!isLoginClaims(claims)) return next(new Error(REJECTED));
        // Handshakes are rare: read the session uncached so a revocation elsewhere counts at once.
        const session = await app.sessions.get(claims.session_id);
        const now = Date.now();
        const usable =
          session &&
          !session.revokedAt &&
          session.active &&
          session.userId === claims.sub &&
          session.maxAt.getTime() > now &&
          session.maxRenewAt.getTime() > now;
        if (!session || !usable) return next(new Error(REJECTED));
        socket.data = { userId: session.userId, sessionId: session.id, role: session.role };
        next();
      })
      .catch(() => next(new Error(REJECTED)));
  });

  io.on('connection', (socket) => {
    void socket.join([userRoom(socket.data.userId), roleRoom(socket.data.role)]);
    if (socket.data.role === role.admin) void socket.join(ADMINS_ROOM);
    const exceeded = rateLimiter(MAX_CLIENT_EMITS_PER_SECOND);
    // The middleware never passes a packet on: no handler exists, nothing a client emits reaches one.
    socket.use(() => {
      if (exceeded()) socket.disconnect(true);
    });
  });

  // What was emitted before a socket is closed still reaches it (a message, then a logout).
  const disconnectWhere = (match: (data: { userId: string; sessionId: string }) => boolean) =>
    app.socketsFlushed().then(() => {
      for (const socket of io.sockets.sockets.values())
        if (match(socket.data)) socket.disconnect(true);
    });
  app.sessions.onRevoke((sessionId) => void disconnectWhere((d) => d.sessionId === sessionId));
  app.cluster.on('user.changed', ({ userId }) => disconnectWhere((d) => d.userId === userId));

  let sweeping = false;
  const sweep = async () => {
    if (sweeping || io.sockets.sockets.size === 0) return;
    sweeping = true;
    try {
      const ids = new Set([...io.sockets.sockets.values()].map((s) => s.data.sessionId));
      const alive = await app.sessions.connectable([...ids]);
      // Only the sessions this sweep read: a socket that connected meanwhile was checked by its
      // own handshake, and its session is not in `alive`.
      const ended = new Set([...ids].filter((id) => !alive.has(id)));
      if (ended.size > 0) await disconnectWhere((d) => ended.has(d.sessionId));
    } catch (err) {
      app.log.warn({ err }, 'socket sweep failed');
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), app.config.socketSweepMs);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
};

export default globalPlugin(plugin, 'socket-auth');
