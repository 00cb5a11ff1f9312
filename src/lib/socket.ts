/**
 * The live socket: socket.io on `/api/v3/socket.io`, websocket transport only, the JWT sent in the
 * handshake `auth` (re-evaluated on every reconnect), unlimited reconnects 1-2 s with 0.5
 * randomisation and a 3 s time-out. Wire names come from `src/generated/events.ts`.
 *
 * Only the server ends the session: a handshake it rejects (its auth error) is fatal. A transport
 * error or a time-out (a network drop, a server restart) is not: the socket keeps reconnecting and
 * re-authenticates and resyncs when it is back, and the session ends only once the server says it
 * is no longer valid (`checkSession` answers false, e.g. `GET /user` answered 401).
 */
import { io, type Socket } from 'socket.io-client';
import { events, type ServerToClientEvents } from '@/generated/events';

export const SOCKET_PATH = '/api/v3/socket.io';
/** The server's answer to a handshake whose credentials it refuses: ends the session. */
export const AUTH_REJECTED = 'Connection rejected by server';
/** Connection errors that end the session. */
export const FATAL_SOCKET_ERRORS = [AUTH_REJECTED];

export interface SocketHandlers {
  getToken: () => string | null;
  onEvent: (wire: string, payload: unknown) => void;
  /**
   * Every connect, the first one included: what the page read before the socket listened (or
   * while it was away) may have missed events, so the caller reads it again.
   */
  onConnect: () => void;
  /**
   * The server says the session has ended: `token` is the one the socket last sent in its
   * handshake (null: none), so that a session stored since (a sign-in in another tab) is not the
   * one ended.
   */
  onFatal: (message: string, token: string | null) => void;
  /**
   * Asks the server whether the session is still valid after a transport error: false ends the
   * session; true, or no answer (still offline), keeps reconnecting.
   */
  checkSession?: () => Promise<boolean>;
  /** The server's origin (tests); the page's own origin when absent. */
  url?: string;
}

let socket: Socket<ServerToClientEvents> | null = null;

/** Opens the socket once (a second call returns the open one). */
export function openSocket(handlers: SocketHandlers): Socket<ServerToClientEvents> {
  if (socket) return socket;
  /** The token of the last handshake: the session this socket speaks for. */
  let sent: string | null = null;
  const options = {
    path: SOCKET_PATH,
    transports: ['websocket'],
    auth: (cb: (data: object) => void) => {
      sent = handlers.getToken();
      cb({ jwt: sent });
    },
    reconnection: true,
    reconnectionAttempts: Infinity,
    reconnectionDelay: 1000,
    reconnectionDelayMax: 2000,
    randomizationFactor: 0.5,
    timeout: 3000,
  };
  const created: Socket<ServerToClientEvents> = handlers.url
    ? io(handlers.url, options)
    : io(options);
  let checking = false;
  let ended = false;
  const end = (message: string): void => {
    if (ended) return;
    ended = true;
    handlers.onFatal(message, sent);
  };
  /** One session check at a time; `then` runs when the session is still valid. */
  const checkSession = (message: string, then?: () => void): void => {
    if (ended) return;
    if (!handlers.checkSession) {
      then?.();
      return;
    }
    if (checking) return;
    checking = true;
    handlers
      .checkSession()
      .then((valid) => {
        if (!valid) end(message);
        else if (socket === created) then?.();
      })
      .catch(() => then?.())
      .finally(() => {
        checking = false;
      });
  };
  created.on('connect', () => handlers.onConnect());
  created.on('connect_error', (error: Error) => {
    if (FATAL_SOCKET_ERRORS.includes(error.message)) {
      end(error.message);
      return;
    }
    console.warn('socket error', error.message);
    checkSession(error.message);
  });
  created.on('disconnect', (reason: string) => {
    // The server closed this socket (its session was revoked, or it misbehaved): it does not come
    // back by itself. Reconnect while the session is valid, end it otherwise.
    if (reason === 'io server disconnect')
      checkSession(reason, () => {
        if (!ended) created.connect();
      });
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
