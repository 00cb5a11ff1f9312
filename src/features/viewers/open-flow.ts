/**
 * One-click Open (pure, no React): a stopped desktop is started, the flow waits until the cached
 * list (patched by the socket) says `started`, then asks for the viewer and delivers it (new tab,
 * same tab or file download). A viewer with a page of its own (`openPage`) opens as soon as the
 * start is accepted: the page asks for its ticket, which the server answers once the desktop runs,
 * so the page loads while the desktop boots. Progress is reported as phases; any failure ends in
 * `error`.
 */
import { desktopState, desktopStates } from '@/generated/policy';
import type { Desktop, ViewerKey } from '@/generated/types';
import type { ViewerAnswer } from './viewer-api';

export type OpenPhase = 'idle' | 'starting' | 'waiting' | 'opening' | 'opened' | 'error';

export interface OpenProgress {
  phase: OpenPhase;
  /** Queue position while the start is queued. */
  queuePosition?: number | null;
  /** The failure (ApiError or OpenFlowError) in phase `error`. */
  error?: unknown;
  /** Where the viewer went (phase `opened`). */
  delivered?: Delivery;
}

export type Delivery = 'tab' | 'same' | 'download';

/** A flow failure that is not an HTTP error; `description_code` is looked up in `errors:`. */
export class OpenFlowError extends Error {
  description_code: string;
  params: Record<string, unknown> | null;
  constructor(code: string, message: string, params: Record<string, unknown> | null = null) {
    super(message);
    this.name = 'OpenFlowError';
    this.description_code = code;
    this.params = params;
  }
}

type DesktopSnapshot = Pick<Desktop, 'id' | 'state'> & Partial<Pick<Desktop, 'queue' | 'detail'>>;

export interface OpenFlowDeps {
  /** The desktop as the cached list has it now. */
  getDesktop: () => DesktopSnapshot | undefined;
  /** Calls `listener` whenever the cache may have changed; returns the unsubscribe. */
  subscribe: (listener: () => void) => () => void;
  /** Starts the desktop (state action `start`). */
  start: (id: string) => Promise<unknown>;
  /** Asks for the viewer (new ticket). */
  fetchViewer: (id: string, viewer: ViewerKey) => Promise<ViewerAnswer>;
  /** Delivers the answer (open page / download). */
  deliver: (answer: ViewerAnswer) => Delivery;
  /**
   * Opens the viewer's page before the desktop has started (the page asks for its own ticket);
   * null when the viewer has no page of its own (its answer is needed first).
   */
  openPage?: (viewer: ViewerKey) => Delivery | null;
  onProgress: (progress: OpenProgress) => void;
  /**
   * Work that must happen inside the user's click (opening the viewer's tab), run once and
   * synchronously: just after the start request has left when the flow starts the desktop (the
   * boot begins sooner), else before anything opens.
   */
  inGesture?: () => void;
  /** Gives up waiting for `started` after this long (default 120 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** States a viewer can be opened in (we do not open on a desktop that is shutting down). */
export const OPENABLE_STATES: readonly string[] = desktopStates.openable;
/** States on the way to `started`: wait without calling start again. */
export const TRANSIENT_STATES: readonly string[] = desktopStates.towardsStarted;
export const DEFAULT_START_TIMEOUT_MS = 120_000;

/** Resolves when the desktop is openable; rejects on failure, stop, disappearance or time-out. */
export function waitForStarted(
  deps: OpenFlowDeps,
  sawStopped: boolean,
  signal: AbortSignal | undefined = deps.signal,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let left = false; // the desktop left `stopped` at least once since the start
    let lastQueue: number | null | undefined;
    const finish = (error?: Error): void => {
      clearTimeout(timer);
      unsubscribe();
      signal?.removeEventListener('abort', onAbort);
      if (error) reject(error);
      else resolve();
    };
    const check = (): void => {
      const desktop = deps.getDesktop();
      if (!desktop) return finish(new OpenFlowError('not_found', 'The desktop is gone'));
      const state = desktop.state;
      if (OPENABLE_STATES.includes(state)) return finish();
      if (state === desktopState.failed)
        return finish(
          new OpenFlowError(
            'desktop_start_failed',
            desktop.detail ?? 'The desktop failed to start',
            { detail: desktop.detail ?? '' },
          ),
        );
      if (state === desktopState.stopped) {
        if (left || !sawStopped)
          return finish(new OpenFlowError('desktop_stopped', 'The desktop stopped'));
        return;
      }
      left = true;
      const queue = typeof desktop.queue?.position === 'number' ? desktop.queue.position : null;
      if (queue !== lastQueue) {
        lastQueue = queue;
        deps.onProgress({ phase: 'waiting', queuePosition: queue });
      }
    };
    const onAbort = (): void => finish(new OpenFlowError('aborted', 'Cancelled'));
    const timer = setTimeout(
      () => finish(new OpenFlowError('desktop_start_timeout', 'The desktop did not start in time')),
      deps.timeoutMs ?? DEFAULT_START_TIMEOUT_MS,
    );
    const unsubscribe = deps.subscribe(check);
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort);
    check();
  });
}

/**
 * Runs the whole flow for one desktop and viewer. Resolves with where the viewer went; rejects
 * (after reporting phase `error`) with the failure.
 */
export async function runOpenFlow(
  id: string,
  viewer: ViewerKey,
  deps: OpenFlowDeps,
): Promise<Delivery> {
  try {
    const desktop = deps.getDesktop();
    if (!desktop) throw new OpenFlowError('not_found', 'The desktop is gone');
    let early: Delivery | null = null;
    const openEarly = (): void => {
      early = deps.openPage?.(viewer) ?? null;
    };
    if (!OPENABLE_STATES.includes(desktop.state)) {
      if (desktop.state === desktopState.stopped) {
        deps.onProgress({ phase: 'starting' });
        // Subscribe before the call so an early `started` from the socket is not missed.
        const local = new AbortController();
        const signal = deps.signal ? AbortSignal.any([deps.signal, local.signal]) : local.signal;
        const started = waitForStarted(deps, true, signal);
        started.catch(() => undefined);
        const starting = deps.start(id);
        deps.inGesture?.();
        try {
          await starting;
        } catch (error) {
          local.abort();
          throw error;
        }
        openEarly();
        await started;
      } else if (TRANSIENT_STATES.includes(desktop.state)) {
        deps.inGesture?.();
        deps.onProgress({ phase: 'waiting', queuePosition: desktop.queue?.position ?? null });
        openEarly();
        await waitForStarted(deps, false);
      } else {
        throw new OpenFlowError('viewer_not_started', `Cannot open a ${desktop.state} desktop`, {
          state: desktop.state,
        });
      }
    } else {
      deps.inGesture?.();
      openEarly();
    }
    if (early) {
      deps.onProgress({ phase: 'opened', delivered: early });
      return early;
    }
    deps.onProgress({ phase: 'opening' });
    const answer = await deps.fetchViewer(id, viewer);
    const delivered = deps.deliver(answer);
    deps.onProgress({ phase: 'opened', delivered });
    return delivered;
  } catch (error) {
    deps.onProgress({ phase: 'error', error });
    throw error;
  }
}
