/**
 * Raw websocket upgrades other than socket.io (VNC proxy, RDP tunnel) routed by path prefix with
 * `ws` in noServer mode. (@fastify/websocket is not used: it takes over every upgrade and breaks
 * socket.io's websocket transport.)
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyPluginAsync } from 'fastify';
import { WebSocketServer } from 'ws';
import { globalPlugin } from '../lib/plugin.ts';
import { SOCKET_PATH } from './socket-io.ts';
import { upgradeRefusal } from './rate-limit.ts';

export type UpgradeHandler = (
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  wss: WebSocketServer,
) => void;

export interface UpgradeRegistry {
  register(pathPrefix: string, handler: UpgradeHandler): void;
  /** The shared noServer WebSocketServer (handlers call wss.handleUpgrade). */
  wss: WebSocketServer;
}

declare module 'fastify' {
  interface FastifyInstance {
    upgrades: UpgradeRegistry;
  }
}

export function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  if (socket.writable) socket.end(upgradeRefusal(status, reason));
  socket.destroy();
}

const plugin: FastifyPluginAsync = async (app) => {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 * 1024 });
  const handlers: { prefix: string; handler: UpgradeHandler }[] = [];

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path.startsWith(SOCKET_PATH)) return; // engine.io handles it
    const match = handlers
      .filter((h) => path.startsWith(h.prefix))
      .sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if (!match) return refuseUpgrade(socket, 404, 'Not Found');
    try {
      match.handler(req, socket, head, wss);
    } catch (err) {
      app.log.error({ err }, 'upgrade handler failed');
      refuseUpgrade(socket, 500, 'Internal Server Error');
    }
  });

  app.decorate('upgrades', {
    wss,
    register(prefix, handler) {
      handlers.push({ prefix, handler });
    },
  } satisfies UpgradeRegistry);
  // Before the HTTP server closes: it waits for every open connection, upgraded ones included.
  app.addHook('preClose', async () => {
    for (const client of wss.clients) client.terminate();
    wss.close();
  });
};

export default globalPlugin(plugin, 'upgrades');
