/**
 * The live socket: socket.io on `/api/v3/socket.io`, websocket transport only, the JWT sent in the
 * handshake `auth` (re-evaluated on every reconnect), unlimited reconnects 1-2 s with 0.5
 * randomisation and a 3 s time-out. Wire names come from `src/generated/events.ts`.
 */
import { io, type Socket } from 'socket.io-client';
import { events, type ServerToClientEvents } from '@/generated/events';

export const SOCKET_PATH = '/api/v3/socket.io';
/** Connection errors that end the session. */
export const FATAL_SOCKET_ERRORS = ['timeout', 'websocket error', 'Connection rejected by server'];

export interface SocketHandlers {
  getToken: () => string | null;
  onEvent: (wire: string, payload: unknown) => void;
  /**
   * Every connect, the first one included: what the page read before the socket listened (or
   * while it was away) may have missed events, so the caller reads it again.
   */
  onConnect: () => void;
  onFatal: (message: string) => void;
}

let socket: Socket<ServerToClientEvents> | null = null;

/** Opens the socket once (a second call returns the open one). */
export function openSocket(handlers: SocketHandlers): Socket<ServerToClientEvents> {
  if (socket) return socket;
  const created: Socket<ServerToClientEvents> = io({
    path: SOCKET_PATH,
    transports: ['websocket'],
    auth: (cb) => cb({ jwt: handlers.getToken() }),
    reconnection: true,
    reconnectionAttempts: Infinity,
    reconnectionDelay: 1000,
    reconnectionDelayMax: 2000,
    randomizationFactor: 0.5,
    timeout: 3000,
  });
  created.on('connect', () => handlers.onConnect());
  created.on('connect_error', (error: Error) => {
    if (FATAL_SOCKET_ERRORS.includes(error.message)) handlers.onFatal(error.message);
    else console.warn('socket error', error.message);
  });
  for (const wire of Object.keys(events)) {
    (created as unknown as Socket).on(wire, (payload: unknown) => handlers.onEvent(wire, payload));
  }
  socket = created;
  return created;
}

/** Closes the socket (logout). */
export function closeSocket(): void {
  socket?.disconnect();
  socket = null;
}

/** True while a socket object exists. */
export function hasSocket(): boolean {
  return socket !== null;
}
