import { describe, expect, it } from 'vitest';
import { DownloadSlots } from './download-slots.ts';

describe('download slots', () => {
  it('admits 3 per user and 10 in all, and gives slots back once', () => {
    const slots = new DownloadSlots({ perUser: 3, total: 10 });
    const a = [slots.take('a'), slots.take('a'), slots.take('a')];
    expect(a.every(Boolean)).toBe(true);
    expect(slots.take('a')).toBeNull();
    expect(slots.limitReached('a')).toEqual({ scope: 'user', limit: 3 });
    const others = ['b', 'b', 'b', 'c', 'c', 'c', 'd'].map((u) => slots.take(u));
    expect(others.every(Boolean)).toBe(true);
    expect(slots.active()).toBe(10);
    expect(slots.take('e')).toBeNull();
    expect(slots.limitReached('e')).toEqual({ scope: 'server', limit: 10 });
    a[0]?.release();
    a[0]?.release(); // a second release gives nothing back
    expect(slots.active()).toBe(9);
    expect(slots.active('a')).toBe(2);
    expect(slots.take('e')).not.toBeNull();
    expect(slots.take('a')).toBeNull(); // the server is full again
    expect(slots.limitReached('f')).toEqual({ scope: 'server', limit: 10 });
  });
});
