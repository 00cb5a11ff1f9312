import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { createPortAllocator, isPortFree } from './port-allocator.ts';

describe('port allocator', () => {
  it('never hands out the same port to concurrent callers', async () => {
    const alloc = createPortAllocator({ from: 47100, to: 47119 });
    const ports = await Promise.all(Array.from({ length: 10 }, () => alloc.allocate()));
    expect(new Set(ports).size).toBe(10);
    expect(alloc.reserved()).toEqual([...ports].sort((a, b) => a - b));
  });

  it('skips ports used by other programs', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(47130, '127.0.0.1', resolve));
    try {
      expect(await isPortFree(47130)).toBe(false);
      const alloc = createPortAllocator({ from: 47130, to: 47131 });
      expect(await alloc.allocate()).toBe(47131);
      await expect(alloc.allocate()).rejects.toThrow(/no free port/);
    } finally {
      server.close();
    }
  });

  it('rotates instead of reusing a just-released port', async () => {
    const alloc = createPortAllocator({ from: 47140, to: 47143 });
    const a = await alloc.allocate();
    alloc.release(a);
    const b = await alloc.allocate();
    expect(b).not.toBe(a);
    alloc.reserve(47143);
    const c = await alloc.allocate();
    expect(c).not.toBe(47143);
  });
});
