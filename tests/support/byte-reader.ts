/**
 * A byte reader over a TCP socket for protocol-level tests and benches: everything the socket
 * receives is buffered, and `read(n)` answers the next n bytes once they have come. It fails when
 * the socket closes first or when `timeoutMs` passes without them.
 */
import type { Socket } from 'node:net';

export function byteReader(socket: Socket, timeoutMs = 5000): (n: number) => Promise<Buffer> {
  let buffer = Buffer.alloc(0);
  let ended = false;
  let wake: (() => void) | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    wake?.();
  });
  socket.on('close', () => {
    ended = true;
    wake?.();
  });
  return async (n) => {
    const deadline = Date.now() + timeoutMs;
    while (buffer.length < n) {
      if (ended) throw new Error(`socket closed after ${buffer.length} of ${n} bytes`);
      if (Date.now() > deadline)
        throw new Error(`only ${buffer.length} of ${n} bytes after ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    const out = buffer.subarray(0, n);
    buffer = buffer.subarray(n);
    return out;
  };
}
