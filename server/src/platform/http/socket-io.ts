/**
 * socket.io on the same HTTP server as fastify, at /api/v3/socket.io, websocket transport only.
 * A browser-facing endpoint: the handshake's Origin must be the portal's own origin or one listed
 * in ALLOWED_ORIGINS (scheme, host and port compared, platform/lib/origins.ts); a handshake without Origin,
 * or with `null`, is refused. 64 KB message cap. Authentication, rooms and the limit on client
 * emits are added by platform/auth/socket-auth.ts.
 *
 * On PostgreSQL (DATABASE_URL) every node runs socket.io with @socket.io/postgres-adapter: an emit
 * to a room reaches the room's sockets on every node, through NOTIFY on the node's own small pool
 * (one connection LISTENs, reconnecting when it is lost; payloads over 8,000 bytes go through the
 * socket_io_attachments table; the NOTIFYs asked while one is on its way go together, packed several
 * to a notification, and a node drops its own unparsed: batched-notify.ts). The embedded PGlite
 * serves one node: the default in-memory adapter.
 */
import type { FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import { Server } from 'socket.io';
import { globalPlugin } from '../lib/plugin.ts';
import { listeningPort, originAllowed } from '../lib/origins.ts';
import { batchNotifies } from './batched-notify.ts';
import type { ServerToClientEvents } from '../../../../src/generated/events.ts';

export const SOCKET_PATH = '/api/v3/socket.io';
/** How long a socket's close waits at most for the emits made before it to be sent. */
const FLUSH_LIMIT_MS = 10_000;
/** The adapter's connections, as `pg_stat_activity` names them. */
export const ADAPTER_APPLICATION_NAME = 'vdi socket.io adapter';

export interface SocketData {
  userId: string;
  sessionId: string;
  role: string;
}

// Clients send nothing to the server: every state change goes through REST.
export type ClientToServerEvents = Record<string, never>;
export type PortalIo = Server<
  ClientToServerEvents,
  ServerToClientEvents,
  Record<string, never>,
  SocketData
>;

declare module 'fastify' {
  interface FastifyInstance {
    io: PortalIo;
    /**
     * Resolves once every emit made before the call reached this node's sockets. The PostgreSQL
     * adapter hands an emit to this node's sockets only after its NOTIFY was sent: a socket closed
     * right after an emit (a message, then a logout) waits for it, so it still gets the emit.
     */
    socketsFlushed(): Promise<void>;
  }
}

const plugin: FastifyPluginAsync = async (app) => {
  const io: PortalIo = new Server(app.server, {
    path: SOCKET_PATH,
    transports: ['websocket'],
    maxHttpBufferSize: 64 * 1024,
    serveClient: false,
    // other upgrade paths belong to upgrades.ts
    destroyUpgrade: false,
    allowRequest: (req, callback) =>
      callback(null, originAllowed(req, app.config, listeningPort(app.server, app.config.port))),
  });
  app.decorate('io', io);
  let flushed = async () => undefined;
  app.decorate('socketsFlushed', () => flushed());
  const { databaseUrl } = app.config;
  if (app.database.kind === 'postgres' && databaseUrl) {
    // The PostgreSQL client and adapter are loaded only by a node on PostgreSQL.
    const { Pool } = (await import('pg')).default;
    const { createAdapter } = await import('@socket.io/postgres-adapter');
    // Two connections: the LISTEN one, and one that sends every NOTIFY of this node in order.
    const pool = new Pool({
      connectionString: databaseUrl,
      max: 2,
      keepAlive: true,
      application_name: ADAPTER_APPLICATION_NAME,
    });
    const lost = (err: Error) => app.log.warn({ err }, 'socket.io adapter connection lost');
    pool.on('error', lost);
    // The adapter keeps its LISTEN connection checked out and, when the connection ends, opens
    // another without giving the dead one back: the pool is told here, so that it does not wait
    // for it at close. A checked-out client that loses its server emits `error`, which must not
    // end the process.
    const out = new Set<pg.PoolClient>();
    pool.on('acquire', (client) => out.add(client));
    pool.on('release', (_err, client) => out.delete(client));
    pool.on('connect', (client) => {
      client.on('error', lost);
      client.on('end', () => {
        const held = [...out].find((c) => c === client);
        if (!held) return;
        out.delete(held);
        held.release(true);
      });
    });
    // The adapter sends its NOTIFYs through the pool's one free connection, in the order of the
    // emits, batched (batched-notify.ts): the emits reach the sockets in the turns that follow
    // their batch's answer.
    // A database that does not answer holds a close back by FLUSH_LIMIT_MS at most. The limit is
    // for a dead database, not a slow one: on a loaded machine a NOTIFY has taken more than two
    // seconds, and a close that stopped waiting then lost the message sent just before it.
    const notifies = batchNotifies(pool);
    flushed = async () => {
      const late = new Promise((resolve) => setTimeout(resolve, FLUSH_LIMIT_MS).unref());
      await Promise.race([notifies.flushed(), late]);
      await new Promise((resolve) => setImmediate(resolve));
    };
    io.adapter(
      createAdapter(notifies.pool, {
        errorHandler: (err) => app.log.warn({ err }, 'socket.io adapter failed'),
      }),
    );
    app.addHook('onClose', async () => {
      // Closing the adapter publishes this node's departure and releases its LISTEN connection.
      await io.of('/').adapter.close();
      // A connection the adapter was still opening at close is never given back: not waited for.
      await Promise.race([pool.end(), new Promise((r) => setTimeout(r, 2000).unref())]);
    });
  }
  // Before the HTTP server closes (it waits for every open connection, websockets included), the
  // engine's connections end. Clients see their transport close and reconnect, to this portal once
  // it is back or to another node; a socket.io-level disconnect would tell them not to.
  // io.close() would also close the http server, which fastify closes itself.
  app.addHook('preClose', async () => {
    io.engine.close();
  });
};

export default globalPlugin(plugin, 'socket-io');
