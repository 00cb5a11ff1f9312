/**
 * The socket's connect handling, with socket.io-client replaced by a plain emitter (the only place
 * the client library is faked: the real socket runs in the end-to-end tests).
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';

type Auth = (cb: (data: { jwt?: string | null }) => void) => void;

const fake = vi.hoisted(() => ({
  socket: null as EventEmitter | null,
  /** Runs the handshake's auth callback, as socket.io does on each (re)connect: what it sends. */
  handshake: (): { jwt?: string | null } => ({}),
}));

vi.mock('socket.io-client', () => ({
  io: (options: { auth: Auth }) => {
    const emitter = new EventEmitter() as EventEmitter & { disconnect: () => void };
    emitter.disconnect = () => undefined;
    fake.socket = emitter;
    fake.handshake = () => {
      let sent: { jwt?: string | null } = {};
      options.auth((data) => (sent = data));
      return sent;
    };
    return emitter;
  },
}));

const { closeSocket, openSocket } = await import('./socket');

afterEach(() => closeSocket());

describe('openSocket', () => {
  it('asks for a resync on the first connect too, not only on reconnects', () => {
    const onConnect = vi.fn();
    openSocket({ getToken: () => 'jwt', onEvent: vi.fn(), onConnect, onFatal: vi.fn() });
    fake.socket?.emit('connect');
    expect(onConnect).toHaveBeenCalledTimes(1);
    fake.socket?.emit('connect');
    expect(onConnect).toHaveBeenCalledTimes(2);
  });

  it('ends the session only on the fatal connection errors', () => {
    const onFatal = vi.fn();
    openSocket({ getToken: () => 'jwt', onEvent: vi.fn(), onConnect: vi.fn(), onFatal });
    fake.socket?.emit('connect_error', new Error('xhr poll error'));
    expect(onFatal).not.toHaveBeenCalled();
    fake.socket?.emit('connect_error', new Error('Connection rejected by server'));
    expect(onFatal).toHaveBeenCalledWith('Connection rejected by server', null);
  });

  it("names the session it ended: the token of its last handshake, not the cookie's of now", () => {
    const onFatal = vi.fn();
    let stored = 'token-a';
    openSocket({ getToken: () => stored, onEvent: vi.fn(), onConnect: vi.fn(), onFatal });
    expect(fake.handshake()).toEqual({ jwt: 'token-a' });
    // Another tab signs in (its cookie replaces this page's) before the refusal arrives.
    stored = 'token-b';
    fake.socket?.emit('connect_error', new Error('Connection rejected by server'));
    expect(onFatal).toHaveBeenCalledWith('Connection rejected by server', 'token-a');
  });
});
