/**
 * TCP port allocator for VNC / SPICE listeners on loopback.
 *
 * A port is handed out only if (1) this allocator has not reserved it already (so concurrent
 * starts never collide: the reservation is synchronous, before the async check) and (2) a bind
 * test on the host succeeds (so ports used by other programs are skipped). The cursor rotates
 * through the range, so a just-freed port is not reused at once (stale viewers, TIME_WAIT).
 * A small race with other programs remains between the test and QEMU's own bind: the driver
 * retries a start that failed with "address in use".
 */
import net from 'node:net';

export interface PortRange {
  from: number;
  to: number;
}

export interface PortAllocator {
  /** Reserve and return a free port; rejects when the whole range is in use. */
  allocate(): Promise<number>;
  /** Return a port to the pool. */
  release(port: number): void;
  /** Mark a port as used (e.g. by an adopted domain). */
  reserve(port: number): void;
  /** Ports currently reserved. */
  reserved(): number[];
}

/** true when `port` can be bound on `host` right now. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}

export function createPortAllocator(range: PortRange, host = '127.0.0.1'): PortAllocator {
  if (
    !Number.isInteger(range.from) ||
    !Number.isInteger(range.to) ||
    range.from < 1 ||
    range.to > 65535 ||
    range.from > range.to
  ) {
    throw new Error(`invalid port range ${range.from}-${range.to}`);
  }
  const used = new Set<number>();
  const size = range.to - range.from + 1;
  let cursor = 0;
  return {
    async allocate() {
      for (let tried = 0; tried < size; tried++) {
        const port = range.from + ((cursor + tried) % size);
        if (used.has(port)) continue;
        used.add(port); // synchronous reservation: concurrent allocate() calls skip it
        if (await isPortFree(port, host)) {
          cursor = (port - range.from + 1) % size;
          return port;
        }
        used.delete(port);
      }
      throw new Error(`no free port in ${range.from}-${range.to}`);
    },
    release(port) {
      used.delete(port);
    },
    reserve(port) {
      used.add(port);
    },
    reserved() {
      return [...used].sort((a, b) => a - b);
    },
  };
}
