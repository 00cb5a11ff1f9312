/**
 * The console's websocket opened ahead: noVNC takes it as a raw channel, gets what the server
 * sent before it listened in order and after the socket's opening, and a console that already
 * spent its ticket is never raced by a socket opened ahead with the same ticket.
 */
import { describe, expect, it } from 'vitest';
import {
  ConsoleChannel,
  preopenConsole,
  takeConsoleChannel,
  websocketUrl,
} from './console-channel';

/** A socket under the test's control (the browser's WebSocket is the code this wraps). */
class TestSocket {
  static CONNECTING = 0;
  static OPEN = 1;
  static CLOSING = 2;
  static CLOSED = 3;
  readyState = TestSocket.CONNECTING;
  binaryType = 'blob';
  protocol = '';
  sent: unknown[] = [];
  onmessage: ((event: MessageEvent) => void) | null = null;
  onopen: ((event: Event) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;
  constructor(readonly url: string) {}
  send(data: unknown) {
    this.sent.push(data);
  }
  close() {
    this.readyState = TestSocket.CLOSED;
  }
  open() {
    this.readyState = TestSocket.OPEN;
    this.onopen?.(new Event('open'));
  }
  receive(bytes: number[]) {
    this.onmessage?.(new MessageEvent('message', { data: new Uint8Array(bytes).buffer }));
  }
}

const made: TestSocket[] = [];
const open = (url: string): WebSocket => {
  const socket = new TestSocket(url);
  made.push(socket);
  return socket as unknown as WebSocket;
};
const answer = (path: string) => ({ kind: 'browser', protocol: 'vnc', url: path, viewer: '/v' });
const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the console channel', () => {
  it('is a raw channel as noVNC takes one, and hands over what came before it listened, in order', async () => {
    const channel = new ConsoleChannel('ws://portal.test/viewer/vnc/a', open);
    const socket = made.at(-1) as TestSocket;
    expect(socket.binaryType).toBe('arraybuffer');
    // noVNC's check of a raw channel: these names among its own keys and its prototype's
    const names = [
      ...Object.keys(channel),
      ...Object.getOwnPropertyNames(Object.getPrototypeOf(channel)),
    ];
    for (const name of [
      'send',
      'close',
      'binaryType',
      'onerror',
      'onmessage',
      'onopen',
      'protocol',
      'readyState',
    ])
      expect(names, name).toContain(name);
    socket.open();
    socket.receive([1, 2]);
    socket.receive([3]);
    expect(channel.readyState).toBe(TestSocket.OPEN);
    const seen: number[] = [];
    // noVNC attaches its listener, then (in the same task) handles the socket being open
    channel.onmessage = (event) => seen.push(...new Uint8Array(event.data as ArrayBuffer));
    expect(seen).toEqual([]);
    socket.receive([4]); // arrives while the earlier ones wait: after them
    await nextTask();
    expect(seen).toEqual([1, 2, 3, 4]);
    socket.receive([5]);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    channel.send(new Uint8Array([9]));
    expect(socket.sent).toHaveLength(1);
    const closed: string[] = [];
    channel.onclose = () => closed.push('closed');
    socket.onclose?.(new CloseEvent('close'));
    expect(closed).toEqual(['closed']);
  });

  it('is taken once, for its own ticket, and not when it closed meanwhile', () => {
    const first = preopenConsole(answer('/viewer/vnc/one?ticket=1'), open);
    expect(first).not.toBeNull();
    expect(takeConsoleChannel('/viewer/vnc/two?ticket=2')).toBeNull();
    expect(takeConsoleChannel('/viewer/vnc/one?ticket=1')).toBe(first);
    expect(takeConsoleChannel('/viewer/vnc/one?ticket=1')).toBeNull();

    preopenConsole(answer('/viewer/vnc/three?ticket=3'), open);
    (made.at(-1) as TestSocket).close();
    expect(takeConsoleChannel('/viewer/vnc/three?ticket=3')).toBeNull();
    expect(preopenConsole({ kind: 'file', name: 'x' }, open)).toBeNull();
  });

  it('opens nothing for a ticket a console already used', () => {
    const before = made.length;
    expect(takeConsoleChannel('/viewer/vnc/four?ticket=4')).toBeNull();
    expect(preopenConsole(answer('/viewer/vnc/four?ticket=4'), open)).toBeNull();
    expect(made.length).toBe(before);
    expect(websocketUrl('/x', { protocol: 'https:', host: 'p.test' })).toBe('wss://p.test/x');
  });
});
