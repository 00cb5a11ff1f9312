import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createPortAllocator, isPortFree } from './port-allocator.ts';

/**
 * Fixed ranges above the system's ephemeral ports (32768-60999 here): no outgoing connection of a
 * busy test run takes one of them (in 47100-47119, eleven were once taken at the same time).
 */
describe('port allocator', () => {
  it('never hands out the same port to concurrent callers', async () => {
    const alloc = createPortAllocator({ from: 61700, to: 61719 });
    const ports = await Promise.all(Array.from({ length: 10 }, () => alloc.allocate()));
    expect(new Set(ports).size).toBe(10);
    expect(alloc.reserved()).toEqual([...ports].sort((a, b) => a - b));
  });

  /**
   * A port another program listens on, whose next port is free. The system picks it: a fixed
   * number can be some other process's port (an outgoing connection's, even) on a busy machine.
   */
  async function takenPortBeforeAFreeOne(): Promise<{ server: net.Server; port: number }> {
    for (let attempt = 0; ; attempt++) {
      const server = net.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as net.AddressInfo;
      if (port < 65535 && (await isPortFree(port + 1))) return { server, port };
      server.close();
      if (attempt === 20) throw new Error('no listening port with a free next port');
    }
  }

  it('skips ports used by other programs', async () => {
    const { server, port } = await takenPortBeforeAFreeOne();
    try {
      expect(await isPortFree(port)).toBe(false);
      const alloc = createPortAllocator({ from: port, to: port + 1 });
      expect(await alloc.allocate()).toBe(port + 1);
      await expect(alloc.allocate()).rejects.toThrow(/no free port/);
    } finally {
      server.close();
    }
  });

  it('rotates instead of reusing a just-released port', async () => {
    const alloc = createPortAllocator({ from: 61740, to: 61743 });
    const a = await alloc.allocate();
    alloc.release(a);
    const b = await alloc.allocate();
    expect(b).not.toBe(a);
    alloc.reserve(61743);
    const c = await alloc.allocate();
    expect(c).not.toBe(61743);
  });
});
