import { afterEach, describe, expect, it, vi } from 'vitest';
import { QueryClient } from '@tanstack/react-query';
import { notifications } from '@mantine/notifications';
import { createLiveProvider } from '@/providers/live-provider';
import { request } from '@/providers/http-client';
import { setBootstrapLiveProvider } from './session-bootstrap';

const triggered = vi.fn<(trigger: string, displays: readonly string[]) => Promise<void>>(
  async () => undefined,
);
vi.mock('@/features/notifications/user-notifications', () => ({
  clearUserNotifications: () => undefined,
  loadStatusBar: async () => undefined,
  showTriggeredNotifications: (trigger: string, displays: readonly string[]) =>
    triggered(trigger, displays),
}));

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  triggered.mockClear();
});

const ok = () =>
  new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } });

describe('the session wiring', () => {
  it('shows the start notifications after a desktop started, and not after a stop', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async () => ok()),
    );
    await request('desktops.action', { params: { id: 'd1', action: 'stop' } });
    expect(triggered).not.toHaveBeenCalled();
    await request('desktops.action', { params: { id: 'd1', action: 'start' } });
    expect(triggered).toHaveBeenCalledWith('start_desktop', ['modal']);
  });

  it('turns msg events into toasts', () => {
    const show = vi.spyOn(notifications, 'show').mockReturnValue('id');
    const live = createLiveProvider(new QueryClient(), { batch: 'sync' });
    setBootstrapLiveProvider(live);
    live.dispatch('msg', { type: 'danger', msg_code: 'desktop-time-limit', params: null });
    expect(show).toHaveBeenCalledWith(expect.objectContaining({ color: 'red', autoClose: 5000 }));
  });
});
