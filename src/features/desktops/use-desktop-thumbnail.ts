/**
 * Live thumbnail of a running desktop: `desktops.thumbnail` (PNG, needs the bearer token) fetched
 * through the HTTP client as a Blob and shown through an object URL (the previous one revoked).
 * It refreshes every ~3 s only while the card is on screen (IntersectionObserver) AND the tab is
 * visible; otherwise no request is made.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { requestBlob } from '@/providers/http-client';

export const THUMBNAIL_INTERVAL_MS = 3000;

export interface ThumbnailRefresherOptions {
  /** Fetches one thumbnail (null when there is none yet). */
  fetch: () => Promise<Blob | null>;
  /** Receives each new image. */
  onImage: (blob: Blob) => void;
  intervalMs?: number;
}

/**
 * Timer logic without React: runs while `active` (running + on screen + tab visible), one
 * request at a time, stops at once when any condition drops.
 */
export class ThumbnailRefresher {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private inFlight = false;
  private active = false;
  private readonly intervalMs: number;

  constructor(private readonly options: ThumbnailRefresherOptions) {
    this.intervalMs = options.intervalMs ?? THUMBNAIL_INTERVAL_MS;
  }

  /** Turns refreshing on (fetches now) or off (cancels the next fetch). */
  setActive(active: boolean): void {
    if (active === this.active) return;
    this.active = active;
    if (active) void this.tick();
    else this.clear();
  }

  get isActive(): boolean {
    return this.active;
  }

  dispose(): void {
    this.active = false;
    this.clear();
  }

  private clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    this.clear();
    if (!this.active || this.inFlight) return;
    this.inFlight = true;
    try {
      const blob = await this.options.fetch();
      if (blob && this.active) this.options.onImage(blob);
    } catch {
      // 409 (not running) / 404 (none yet): keep the last image, try again later
    } finally {
      this.inFlight = false;
    }
    if (this.active) this.timer = setTimeout(() => void this.tick(), this.intervalMs);
  }
}

/** Fetches a desktop's thumbnail as a Blob with the session token. */
export function fetchThumbnail(id: string): Promise<Blob | null> {
  return requestBlob('desktops.thumbnail', { params: { id }, background: true });
}

function useDocumentVisible(): boolean {
  const [visible, setVisible] = useState(
    () => typeof document === 'undefined' || document.visibilityState !== 'hidden',
  );
  useEffect(() => {
    const update = (): void => setVisible(document.visibilityState !== 'hidden');
    document.addEventListener('visibilitychange', update);
    return () => document.removeEventListener('visibilitychange', update);
  }, []);
  return visible;
}

/**
 * Returns a ref callback for the element to watch and the current object URL (null when the
 * desktop is not running or no image arrived yet).
 */
export function useDesktopThumbnail(
  id: string,
  running: boolean,
  intervalMs = THUMBNAIL_INTERVAL_MS,
): { ref: (element: Element | null) => void; url: string | null } {
  const [url, setUrl] = useState<string | null>(null);
  const [onScreen, setOnScreen] = useState(false);
  const documentVisible = useDocumentVisible();
  const urlRef = useRef<string | null>(null);
  const observerRef = useRef<IntersectionObserver | null>(null);
  const refresherRef = useRef<ThumbnailRefresher | null>(null);

  const replaceUrl = useCallback((next: string | null) => {
    if (urlRef.current) URL.revokeObjectURL(urlRef.current);
    urlRef.current = next;
    setUrl(next);
  }, []);

  const ref = useCallback((element: Element | null) => {
    observerRef.current?.disconnect();
    observerRef.current = null;
    if (!element) return;
    if (typeof IntersectionObserver === 'undefined') {
      setOnScreen(true);
      return;
    }
    const observer = new IntersectionObserver((entries) => {
      const entry = entries[entries.length - 1];
      if (entry) setOnScreen(entry.isIntersecting);
    });
    observer.observe(element);
    observerRef.current = observer;
  }, []);

  useEffect(() => {
    const refresher = new ThumbnailRefresher({
      fetch: () => fetchThumbnail(id),
      onImage: (blob) => replaceUrl(URL.createObjectURL(blob)),
      intervalMs,
    });
    refresherRef.current = refresher;
    return () => {
      refresher.dispose();
      refresherRef.current = null;
    };
  }, [id, intervalMs, replaceUrl]);

  useEffect(() => {
    refresherRef.current?.setActive(running && onScreen && documentVisible);
  }, [running, onScreen, documentVisible, id, intervalMs]);

  useEffect(
    () => () => {
      observerRef.current?.disconnect();
      if (urlRef.current) URL.revokeObjectURL(urlRef.current);
      urlRef.current = null;
    },
    [],
  );

  // A stopped desktop shows no stale screen (the URL is revoked on the next image or unmount).
  return { ref, url: running ? url : null };
}
