import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ThumbnailScheduler } from './thumbnail-scheduler';

beforeEach(() => {
  vi.useFakeTimers();
  // jsdom has no IntersectionObserver: registered tiles are on screen.
  vi.stubGlobal('IntersectionObserver', undefined);
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

function wall(count: number, intervalMs = 3000) {
  const calls: { id: string; at: number }[] = [];
  const scheduler = new ThumbnailScheduler({
    intervalMs,
    fetch: async (id) => {
      calls.push({ id, at: Date.now() });
      return new Blob(['png']);
    },
  });
  const images = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const id = `d-${i}`;
    scheduler.register(id, true, () => images.set(id, (images.get(id) ?? 0) + 1));
    scheduler.observe(id, document.createElement('div'));
  }
  return { scheduler, calls, images };
}

describe('thumbnail scheduler', () => {
  it('spreads the requests of 30 tiles over the interval, one per tile per interval', async () => {
    const { scheduler, calls, images } = wall(30, 3000);
    await vi.advanceTimersByTimeAsync(2999);
    expect(calls).toHaveLength(30);
    expect(new Set(calls.map((c) => c.id)).size).toBe(30);
    const gaps = calls.slice(1).map((c, i) => c.at - (calls[i]?.at ?? 0));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
    expect(images.size).toBe(30);
    await vi.advanceTimersByTimeAsync(3000);
    expect(calls).toHaveLength(60);
    for (let i = 0; i < 30; i++) {
      const times = calls.filter((c) => c.id === `d-${i}`).map((c) => c.at);
      expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(3000);
    }
    scheduler.dispose();
  });

  it('makes no request while the page is hidden, the switch is off or the desktop has no screen', async () => {
    const { scheduler, calls } = wall(3, 1000);
    scheduler.setPageVisible(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls).toHaveLength(0);
    scheduler.setPageVisible(true);
    scheduler.setEnabled(false);
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls).toHaveLength(0);
    scheduler.setEnabled(true);
    for (let i = 0; i < 3; i++) scheduler.register(`d-${i}`, i === 0, () => undefined);
    await vi.advanceTimersByTimeAsync(2500);
    expect(new Set(calls.map((c) => c.id))).toEqual(new Set(['d-0']));
    scheduler.setOnScreen('d-0', false);
    const before = calls.length;
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls).toHaveLength(before);
    scheduler.dispose();
  });
});
