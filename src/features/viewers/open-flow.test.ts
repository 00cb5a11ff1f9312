import { desktopState } from '@/generated/policy';
import { describe, expect, it, vi } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import { wireByName } from '@/generated/events';
import { ApiError } from '@/providers/http-client';
import { createLiveProvider, listKeyPrefix } from '@/providers/live-provider';
import { runOpenFlow, type OpenFlowDeps, type OpenProgress } from './open-flow';
import { cachedDesktop } from './use-open-desktop';
import type { ViewerAnswer } from './viewer-api';

const key = [...listKeyPrefix('desktops'), { filters: [] }];
const vnc: ViewerAnswer = {
  kind: 'browser',
  protocol: 'vnc',
  viewer: '/viewer/vnc/a',
  url: '/api/v3/viewer/vnc?ticket=t',
  expires: 0,
  values: { password: 'p' },
};

function setup(state = 'stopped') {
  const client = new QueryClient();
  client.setQueryData(key, { data: [{ id: 'a', name: 'A', state, version: 1 }], total: 1 });
  const live = createLiveProvider(client);
  let version = 1;
  const push = (patch: Record<string, unknown>): void => {
    version += 1;
    live.dispatch(wireByName['desktops.updated'], { id: 'a', version, ...patch });
  };
  const phases: OpenProgress[] = [];
  const deps: OpenFlowDeps = {
    getDesktop: () => cachedDesktop(client, 'a'),
    subscribe: (listener) => client.getQueryCache().subscribe(listener),
    start: vi.fn(async () => ({ status: 'starting' })),
    fetchViewer: vi.fn(async () => vnc),
    deliver: vi.fn(() => 'tab' as const),
    onProgress: (p) => phases.push(p),
    timeoutMs: 2000,
  };
  return { deps, push, phases };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('one-click open flow', () => {
  it('stopped: calls start, waits for started from the socket-patched cache, then opens the viewer', async () => {
    const { deps, push, phases } = setup('stopped');
    const done = runOpenFlow('a', 'browser-vnc', deps);
    await tick();
    expect(deps.start).toHaveBeenCalledWith('a');
    expect(deps.fetchViewer).not.toHaveBeenCalled();
    push({ state: 'starting', queue: { position: 2 } });
    await tick();
    expect(phases.at(-1)).toEqual({ phase: 'waiting', queuePosition: 2 });
    push({ state: 'starting', queue: null });
    await tick();
    expect(deps.fetchViewer).not.toHaveBeenCalled();
    push({ state: 'started' });
    await expect(done).resolves.toBe('tab');
    expect(deps.fetchViewer).toHaveBeenCalledWith('a', 'browser-vnc');
    expect(deps.deliver).toHaveBeenCalledWith(vnc);
    expect(phases.map((p) => p.phase)).toEqual([
      'starting',
      'waiting',
      'waiting',
      'opening',
      'opened',
    ]);
  });

  it('stopped, viewer with a page: opens the page once the start is accepted, then follows the start', async () => {
    const { deps, push, phases } = setup('stopped');
    deps.openPage = vi.fn(() => 'tab' as const);
    const done = runOpenFlow('a', 'browser-vnc', deps);
    await tick();
    expect(deps.start).toHaveBeenCalledWith('a');
    expect(deps.openPage).toHaveBeenCalledWith('browser-vnc');
    push({ state: 'starting' });
    await tick();
    push({ state: 'started' });
    await expect(done).resolves.toBe('tab');
    expect(deps.fetchViewer).not.toHaveBeenCalled();
    expect(deps.deliver).not.toHaveBeenCalled();
    expect(phases.map((p) => p.phase)).toEqual(['starting', 'waiting', 'opened']);
  });

  it('runs the in-gesture work once and synchronously: after the start request, else before opening', async () => {
    const order: string[] = [];
    const stopped = setup('stopped');
    stopped.deps.start = vi.fn(async () => {
      order.push('start');
      return { status: 'starting' };
    });
    stopped.deps.inGesture = vi.fn(() => order.push('gesture'));
    stopped.deps.openPage = vi.fn(() => {
      order.push('page');
      return 'tab' as const;
    });
    const done = runOpenFlow('a', 'browser-vnc', stopped.deps);
    // Before any await: the click handler is still running.
    expect(order).toEqual(['start', 'gesture']);
    await tick();
    stopped.push({ state: 'started' });
    await expect(done).resolves.toBe('tab');
    expect(order).toEqual(['start', 'gesture', 'page']);
    expect(stopped.deps.inGesture).toHaveBeenCalledTimes(1);

    for (const state of [desktopState.started, desktopState.starting]) {
      const other = setup(state);
      const seen: string[] = [];
      other.deps.inGesture = vi.fn(() => seen.push('gesture'));
      other.deps.openPage = vi.fn(() => {
        seen.push('page');
        return 'tab' as const;
      });
      const flow = runOpenFlow('a', 'browser-vnc', other.deps);
      expect(seen).toEqual(['gesture', 'page']);
      other.push({ state: 'started' });
      await expect(flow).resolves.toBe('tab');
      expect(other.deps.start).not.toHaveBeenCalled();
    }

    const closing = setup('shutting-down');
    closing.deps.inGesture = vi.fn();
    await expect(runOpenFlow('a', 'browser-vnc', closing.deps)).rejects.toMatchObject({
      description_code: 'viewer_not_started',
    });
    expect(closing.deps.inGesture).not.toHaveBeenCalled();
  });

  it('viewer with a page: a refused start opens nothing; a failed start ends in error after it', async () => {
    const refused = setup('stopped');
    refused.deps.openPage = vi.fn(() => 'tab' as const);
    refused.deps.start = vi.fn(async () => {
      throw new ApiError({ message: 'quota', statusCode: 428, description_code: 'x' });
    });
    await expect(runOpenFlow('a', 'browser-vnc', refused.deps)).rejects.toBeInstanceOf(ApiError);
    expect(refused.deps.openPage).not.toHaveBeenCalled();

    const failing = setup('stopped');
    failing.deps.openPage = vi.fn(() => 'tab' as const);
    const done = runOpenFlow('a', 'browser-vnc', failing.deps);
    await tick();
    expect(failing.deps.openPage).toHaveBeenCalled();
    failing.push({ state: 'starting' });
    failing.push({ state: 'failed', detail: 'qemu exited' });
    await expect(done).rejects.toMatchObject({ description_code: 'desktop_start_failed' });
    expect(failing.phases.at(-1)?.phase).toBe('error');
  });

  it('started, viewer with a page: opens it at once without a viewer call; without a page asks for the answer', async () => {
    const { deps, phases } = setup('started');
    deps.openPage = vi.fn((viewer) => (viewer === 'browser-vnc' ? ('tab' as const) : null));
    await expect(runOpenFlow('a', 'browser-vnc', deps)).resolves.toBe('tab');
    expect(deps.fetchViewer).not.toHaveBeenCalled();
    expect(phases.map((p) => p.phase)).toEqual(['opened']);
    await expect(runOpenFlow('a', 'file-spice', deps)).resolves.toBe('tab');
    expect(deps.fetchViewer).toHaveBeenCalledWith('a', 'file-spice');
  });

  it('started: opens at once without starting', async () => {
    const { deps, phases } = setup('started');
    await expect(runOpenFlow('a', 'file-spice', deps)).resolves.toBe('tab');
    expect(deps.start).not.toHaveBeenCalled();
    expect(phases.map((p) => p.phase)).toEqual(['opening', 'opened']);
  });

  it('start refused: shows the error and never opens', async () => {
    const { deps, phases } = setup('stopped');
    const refusal = new ApiError({
      message: 'quota',
      statusCode: 428,
      description_code: 'desktop_start_quota_exceeded',
    });
    deps.start = vi.fn(async () => {
      throw refusal;
    });
    await expect(runOpenFlow('a', 'browser-vnc', deps)).rejects.toBe(refusal);
    expect(deps.fetchViewer).not.toHaveBeenCalled();
    expect(phases.at(-1)).toEqual({ phase: 'error', error: refusal });
  });

  it('desktop fails while starting: error with the failure code', async () => {
    const { deps, push, phases } = setup('stopped');
    const done = runOpenFlow('a', 'browser-vnc', deps);
    await tick();
    push({ state: 'starting' });
    push({ state: 'failed', detail: 'qemu exited' });
    await expect(done).rejects.toMatchObject({ description_code: 'desktop_start_failed' });
    expect(phases.at(-1)?.phase).toBe('error');
    expect(deps.fetchViewer).not.toHaveBeenCalled();
  });

  it('back to stopped after starting: error', async () => {
    const { deps, push } = setup('stopped');
    const done = runOpenFlow('a', 'browser-vnc', deps);
    await tick();
    push({ state: 'starting' });
    push({ state: 'stopped' });
    await expect(done).rejects.toMatchObject({ description_code: 'desktop_stopped' });
  });

  it('never started: times out with an error', async () => {
    const { deps } = setup('stopped');
    deps.timeoutMs = 30;
    await expect(runOpenFlow('a', 'browser-vnc', deps)).rejects.toMatchObject({
      description_code: 'desktop_start_timeout',
    });
  });

  it('viewer refused (e.g. 428 no_wireguard_keys): error shown', async () => {
    const { deps, phases } = setup('started');
    const refusal = new ApiError({
      message: 'wg',
      statusCode: 428,
      description_code: 'no_wireguard_keys',
    });
    deps.fetchViewer = vi.fn(async () => {
      throw refusal;
    });
    await expect(runOpenFlow('a', 'browser-rdp', deps)).rejects.toBe(refusal);
    expect(phases.at(-1)).toEqual({ phase: 'error', error: refusal });
    expect(deps.deliver).not.toHaveBeenCalled();
  });

  it('shutting-down: refuses to open', async () => {
    const { deps } = setup('shutting-down');
    await expect(runOpenFlow('a', 'browser-vnc', deps)).rejects.toMatchObject({
      description_code: 'viewer_not_started',
    });
    expect(deps.start).not.toHaveBeenCalled();
  });
});
