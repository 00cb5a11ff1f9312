/**
 * socket.io on the same HTTP server as fastify, at /api/v3/socket.io, websocket transport only.
 * A browser-facing endpoint: the handshake's Origin must be the portal's own origin or one listed
 * in ALLOWED_ORIGINS (scheme, host and port compared, platform/lib/origins.ts); a handshake without Origin,
 * or with `null`, is refused. 64 KB message cap. Authentication, rooms and the limit on client
 * emits are added by platform/auth/socket-auth.ts.
 */
import type { FastifyPluginAsync } from 'fastify';
import { Server } from 'socket.io';
import { globalPlugin } from '../lib/plugin.ts';
import { listeningPort, originAllowed } from '../lib/origins.ts';
import type { ServerToClientEvents } from '../../../../src/generated/events.ts';

export const SOCKET_PATH = '/api/v3/socket.io';

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
  // Before the HTTP server closes (it waits for every open connection, websockets included), the
  // engine's connections end. Clients see their transport close and reconnect, to this portal once
  // it is back or to another node; a socket.io-level disconnect would tell them not to.
  // io.close() would also close the http server, which fastify closes itself.
  app.addHook('preClose', async () => {
    io.engine.close();
  });
};

export default globalPlugin(plugin, 'socket-io');
