import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, renderHook } from '@testing-library/react';
import { ThumbnailRefresher, useDesktopThumbnail } from './use-desktop-thumbnail';

const request = vi.hoisted(() => vi.fn());
vi.mock('@/providers/http-client', () => ({ requestBlob: request }));

describe('ThumbnailRefresher', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('fetches every interval while active and stops as soon as it is inactive', async () => {
    const fetch = vi.fn(async () => new Blob(['png']));
    const onImage = vi.fn();
    const refresher = new ThumbnailRefresher({ fetch, onImage, intervalMs: 3000 });
    refresher.setActive(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(fetch).toHaveBeenCalledTimes(1);
    expect(onImage).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(3000);
    expect(fetch).toHaveBeenCalledTimes(2);
    refresher.setActive(false);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(fetch).toHaveBeenCalledTimes(2);
    refresher.setActive(true);
    await vi.advanceTimersByTimeAsync(0);
    expect(fetch).toHaveBeenCalledTimes(3);
    refresher.dispose();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(fetch).toHaveBeenCalledTimes(3);
  });

  it('keeps going after a failed fetch (409 / 404)', async () => {
    const fetch = vi
      .fn()
      .mockRejectedValueOnce(new Error('409'))
      .mockResolvedValue(new Blob(['png']));
    const onImage = vi.fn();
    const refresher = new ThumbnailRefresher({ fetch, onImage, intervalMs: 1000 });
    refresher.setActive(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(fetch).toHaveBeenCalledTimes(2);
    expect(onImage).toHaveBeenCalledTimes(1);
    refresher.dispose();
  });
});

describe('useDesktopThumbnail', () => {
  let observers: { callback: IntersectionObserverCallback; disconnect: () => void }[] = [];
  let urls = 0;
  const revoked: string[] = [];

  beforeEach(() => {
    vi.useFakeTimers();
    observers = [];
    request.mockReset();
    request.mockImplementation(async () => new Blob(['png'], { type: 'image/png' }));
    class IO {
      constructor(public callback: IntersectionObserverCallback) {
        observers.push(this);
      }
      observe = vi.fn();
      unobserve = vi.fn();
      disconnect = vi.fn();
      takeRecords = () => [];
    }
    vi.stubGlobal('IntersectionObserver', IO);
    URL.createObjectURL = vi.fn(() => `blob:thumb-${++urls}`);
    URL.revokeObjectURL = vi.fn((url: string) => void revoked.push(url));
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  const setVisible = (visible: boolean) =>
    act(() => {
      for (const o of observers)
        o.callback(
          [{ isIntersecting: visible } as IntersectionObserverEntry],
          o as unknown as IntersectionObserver,
        );
    });

  const setTabHidden = (hidden: boolean) =>
    act(() => {
      Object.defineProperty(document, 'visibilityState', {
        configurable: true,
        get: () => (hidden ? 'hidden' : 'visible'),
      });
      document.dispatchEvent(new Event('visibilitychange'));
    });

  it('refreshes only while the card is visible and the tab is visible; revokes old URLs', async () => {
    const { result } = renderHook(() => useDesktopThumbnail('d1', true, 3000));
    act(() => result.current.ref(document.createElement('div')));
    await act(() => vi.advanceTimersByTimeAsync(10_000));
    expect(request).not.toHaveBeenCalled(); // not on screen yet

    setVisible(true);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(request).toHaveBeenCalledTimes(1);
    expect(request).toHaveBeenCalledWith(
      'desktops.thumbnail',
      expect.objectContaining({ params: { id: 'd1' }, background: true }),
    );
    expect(result.current.url).toMatch(/^blob:thumb-/);
    await act(() => vi.advanceTimersByTimeAsync(3000));
    expect(request).toHaveBeenCalledTimes(2);
    expect(revoked.length).toBeGreaterThanOrEqual(1);

    setVisible(false);
    await act(() => vi.advanceTimersByTimeAsync(15_000));
    expect(request).toHaveBeenCalledTimes(2);

    setVisible(true);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(request).toHaveBeenCalledTimes(3);

    setTabHidden(true);
    await act(() => vi.advanceTimersByTimeAsync(15_000));
    expect(request).toHaveBeenCalledTimes(3);
    setTabHidden(false);
    await act(() => vi.advanceTimersByTimeAsync(0));
    expect(request).toHaveBeenCalledTimes(4);
  });

  it('does not fetch for a stopped desktop', async () => {
    const { result } = renderHook(() => useDesktopThumbnail('d2', false, 3000));
    act(() => result.current.ref(document.createElement('div')));
    setVisible(true);
    await act(() => vi.advanceTimersByTimeAsync(10_000));
    expect(request).not.toHaveBeenCalled();
    expect(result.current.url).toBeNull();
  });
});
