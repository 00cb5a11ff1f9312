/**
 * The VNC viewer page shown alone loads the session's companions (catalogues, the session
 * bootstrap and its live socket, the session modals) once the console has answered: a moment
 * after it connects, so that they do not compete with its first frames, and at once when it
 * fails, so that what the session has to say (an expired session) is there to say it.
 */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { VncStatus } from '@/features/viewers/use-vnc-connection';
import { COMPANIONS_AFTER_CONNECT_MS, ViewerAlone } from './viewer-alone';

/** The console's status callback, as the page gave it to the screen. */
let report: (status: VncStatus) => void = () => undefined;

vi.mock('@/features/viewers/vnc-viewer-screen', () => ({
  VncViewerScreen: ({ onStatus }: { onStatus: (status: VncStatus) => void }) => {
    report = onStatus;
    return <p>console</p>;
  },
}));
vi.mock('./viewer-session', () => ({ ViewerSession: () => <p>session companions</p> }));

/** Lets the lazy companions' module and its Suspense settle. */
async function settle() {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(0);
  });
}

describe('the VNC viewer page shown alone', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  it('loads the companions a moment after the console connects, not while it connects', async () => {
    render(<ViewerAlone id="d1" />);
    act(() => report('connecting'));
    await settle();
    act(() => report('connected'));
    await act(async () => {
      await vi.advanceTimersByTimeAsync(COMPANIONS_AFTER_CONNECT_MS - 1);
    });
    expect(screen.queryByText('session companions')).toBeNull();
    await act(async () => {
      await vi.advanceTimersByTimeAsync(1);
    });
    await settle();
    expect(screen.getByText('session companions')).toBeTruthy();
  });

  it('loads them at once when the console fails, also after it had connected', async () => {
    render(<ViewerAlone id="d2" />);
    act(() => report('error'));
    await settle();
    expect(screen.getByText('session companions')).toBeTruthy();
    cleanup();

    render(<ViewerAlone id="d3" />);
    act(() => report('connected'));
    act(() => report('stopped'));
    await settle();
    expect(screen.getByText('session companions')).toBeTruthy();
  });
});
