/**
 * The socket's connect handling, with socket.io-client replaced by a plain emitter (the only place
 * the client library is faked: the real socket runs in the end-to-end tests).
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';

const fake = vi.hoisted(() => ({ socket: null as EventEmitter | null }));

vi.mock('socket.io-client', () => ({
  io: () => {
    const emitter = new EventEmitter() as EventEmitter & { disconnect: () => void };
    emitter.disconnect = () => undefined;
    fake.socket = emitter;
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
    expect(onFatal).toHaveBeenCalledWith('Connection rejected by server');
  });
});
