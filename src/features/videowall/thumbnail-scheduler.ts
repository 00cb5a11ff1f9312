/**
 * Live thumbnails of the videowall: ONE scheduler per wall instead of a timer per tile. A tile is
 * refreshed only while its desktop has a screen, it is on screen (one shared IntersectionObserver)
 * and the tab is visible (document.visibilityState). The scheduler walks the eligible tiles round
 * robin and starts one request every `intervalMs / eligible` ms (at least `minGapMs`), so 30 tiles
 * are spread over the interval instead of firing in a burst, each tile gets at most one request
 * per `intervalMs`, and at most `maxInFlight` requests are open at a time.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { requestBlob } from '@/providers/http-client';

export const WALL_THUMBNAIL_INTERVAL_MS = 4000;

export interface ThumbnailSchedulerOptions {
  /** Fetches one desktop's thumbnail (null when there is none). */
  fetch: (id: string) => Promise<Blob | null>;
  /** Minimum time between two refreshes of the same tile. */
  intervalMs?: number;
  /** Minimum gap between two requests of the wall. */
  minGapMs?: number;
  /** Requests open at once. */
  maxInFlight?: number;
  /** Clock and timers (tests). */
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

interface Tile {
  id: string;
  running: boolean;
  /** When the tile's last request started (0 = never). */
  last: number;
  inFlight: boolean;
  onImage: (blob: Blob) => void;
}

/** Fetches a desktop's thumbnail with the session token, as a Blob (not a loading request). */
export function fetchWallThumbnail(id: string): Promise<Blob | null> {
  return requestBlob('desktops.thumbnail', { params: { id }, background: true });
}

export class ThumbnailScheduler {
  private readonly tiles = new Map<string, Tile>();
  private readonly elements = new Map<Element, string>();
  /** Ids of the tiles on screen (kept apart: a tile may be seen before it registers). */
  private readonly onScreen = new Set<string>();
  private observer: IntersectionObserver | null = null;
  private timer: unknown = null;
  private inFlight = 0;
  private cursor = 0;
  /** When the wall's last request started (bursts are refused whatever woke the timer). */
  private lastStart = Number.NEGATIVE_INFINITY;
  private enabled = true;
  private pageVisible = true;
  private disposed = false;
  private readonly intervalMs: number;
  private readonly minGapMs: number;
  private readonly maxInFlight: number;
  private readonly now: () => number;
  private readonly setTimer: (fn: () => void, ms: number) => unknown;
  private readonly clearTimer: (handle: unknown) => void;

  constructor(private readonly options: ThumbnailSchedulerOptions) {
    this.intervalMs = options.intervalMs ?? WALL_THUMBNAIL_INTERVAL_MS;
    this.minGapMs = options.minGapMs ?? 50;
    this.maxInFlight = options.maxInFlight ?? 2;
    this.now = options.now ?? (() => Date.now());
    this.setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
    this.clearTimer =
      options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));
  }

  /** Registers a tile (or updates whether its desktop has a screen); returns its removal. */
  register(id: string, running: boolean, onImage: (blob: Blob) => void): () => void {
    const existing = this.tiles.get(id);
    const tile: Tile = existing
      ? { ...existing, running, onImage }
      : { id, running, last: 0, inFlight: false, onImage };
    this.tiles.set(id, tile);
    this.schedule();
    return () => {
      if (this.tiles.get(id) === tile) this.tiles.delete(id);
    };
  }

  /** Watches the tile's element; off screen it is not refreshed. Returns the unwatching. */
  observe(id: string, element: Element): () => void {
    this.elements.set(element, id);
    if (typeof IntersectionObserver === 'undefined') {
      this.setOnScreen(id, true);
    } else {
      this.observer ??= new IntersectionObserver(
        (entries) => {
          for (const entry of entries) {
            const tileId = this.elements.get(entry.target);
            if (tileId !== undefined) this.setOnScreen(tileId, entry.isIntersecting);
          }
        },
        { rootMargin: '100px' },
      );
      this.observer.observe(element);
    }
    return () => {
      this.observer?.unobserve(element);
      this.elements.delete(element);
      this.setOnScreen(id, false);
    };
  }

  setOnScreen(id: string, onScreen: boolean): void {
    if (this.onScreen.has(id) === onScreen) return;
    if (onScreen) this.onScreen.add(id);
    else this.onScreen.delete(id);
    this.schedule();
  }

  /** The wall's "thumbnails on/off" switch. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    this.schedule();
  }

  /** Whether the tab is visible (document.visibilityState). */
  setPageVisible(visible: boolean): void {
    this.pageVisible = visible;
    this.schedule();
  }

  dispose(): void {
    this.disposed = true;
    this.observer?.disconnect();
    this.observer = null;
    this.elements.clear();
    this.onScreen.clear();
    this.tiles.clear();
    this.cancel();
  }

  /** Tiles that may be refreshed now or later. */
  private eligible(): Tile[] {
    if (!this.enabled || !this.pageVisible || this.disposed) return [];
    return [...this.tiles.values()].filter((t) => t.running && this.onScreen.has(t.id));
  }

  private cancel(): void {
    if (this.timer !== null) this.clearTimer(this.timer);
    this.timer = null;
  }

  /** Plans the next request (or none when nothing is eligible). */
  private schedule(delay = 0): void {
    this.cancel();
    if (this.eligible().length === 0) return;
    this.timer = this.setTimer(() => {
      this.timer = null;
      this.tick();
    }, delay);
  }

  private tick(): void {
    const eligible = this.eligible();
    if (eligible.length === 0) return;
    const gap = Math.max(this.minGapMs, Math.floor(this.intervalMs / eligible.length));
    if (this.inFlight >= this.maxInFlight) {
      this.schedule(gap);
      return;
    }
    const now = this.now();
    if (now - this.lastStart < gap) {
      this.schedule(gap - (now - this.lastStart));
      return;
    }
    // Round robin from the cursor: the first tile whose interval has passed.
    let chosen: Tile | undefined;
    for (let i = 0; i < eligible.length; i++) {
      const tile = eligible[(this.cursor + i) % eligible.length];
      if (tile && !tile.inFlight && now - tile.last >= this.intervalMs) {
        chosen = tile;
        this.cursor = (this.cursor + i + 1) % eligible.length;
        break;
      }
    }
    if (!chosen) {
      // Everybody is fresh: wake up when the oldest one is due.
      const due = Math.min(...eligible.map((t) => t.last + this.intervalMs - now));
      this.schedule(Math.max(this.minGapMs, due));
      return;
    }
    void this.refresh(chosen);
    this.schedule(gap);
  }

  private async refresh(tile: Tile): Promise<void> {
    tile.inFlight = true;
    tile.last = this.now();
    this.lastStart = tile.last;
    this.inFlight += 1;
    try {
      const blob = await this.options.fetch(tile.id);
      const current = this.tiles.get(tile.id);
      if (blob && current && current.running && !this.disposed) current.onImage(blob);
    } catch {
      // 409 (stopped meanwhile) / 404 (no screenshot yet): keep the last image, try later
    } finally {
      tile.inFlight = false;
      const current = this.tiles.get(tile.id);
      if (current && current !== tile) current.last = tile.last;
      this.inFlight -= 1;
    }
  }
}

/** One scheduler for the wall, following the tab's visibility and the on/off switch. */
export function useThumbnailScheduler(
  enabled: boolean,
  fetch: (id: string) => Promise<Blob | null> = fetchWallThumbnail,
): ThumbnailScheduler {
  const [scheduler] = useState(() => new ThumbnailScheduler({ fetch }));
  useEffect(() => {
    const update = (): void => scheduler.setPageVisible(document.visibilityState !== 'hidden');
    update();
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, [scheduler]);
  useEffect(() => scheduler.setEnabled(enabled), [scheduler, enabled]);
  useEffect(() => () => scheduler.dispose(), [scheduler]);
  return scheduler;
}

/**
 * The thumbnail of one tile: a ref callback for the element to watch and the current object URL
 * (the previous one revoked when replaced, the last one on unmount). Null while the desktop has
 * no screen or no image came yet. Only this tile re-renders when its image changes. The caller
 * remounts it (a `key`) when `running` changes, so a stopped desktop keeps no stale image.
 */
export function useWallThumbnail(
  scheduler: ThumbnailScheduler,
  id: string,
  running: boolean,
): { ref: (element: Element | null) => void; url: string | null } {
  const [url, setUrl] = useState<string | null>(null);
  const urlRef = useRef<string | null>(null);
  const unobserveRef = useRef<(() => void) | null>(null);

  const replace = useCallback((next: string | null) => {
    if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    urlRef.current = next;
    setUrl(next);
  }, []);

  useEffect(
    () => scheduler.register(id, running, (blob) => replace(URL.createObjectURL(blob))),
    [scheduler, id, running, replace],
  );

  const ref = useCallback(
    (element: Element | null) => {
      unobserveRef.current?.();
      unobserveRef.current = element ? scheduler.observe(id, element) : null;
    },
    [scheduler, id],
  );

  useEffect(
    () => () => {
      unobserveRef.current?.();
      unobserveRef.current = null;
      if (urlRef.current) URL.revokeObjectURL(urlRef.current);
      urlRef.current = null;
    },
    [],
  );

  return { ref, url: running ? url : null };
}
