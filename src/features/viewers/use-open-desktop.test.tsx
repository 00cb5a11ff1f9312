/**
 * The one-click Open of a card: a start the server refuses for a quota or a group or category
 * limit opens the quota popup (OK / Go to quota), as the same refusal does from the Start action.
 */
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { act, renderHook, waitFor } from '@testing-library/react';
import type { ReactNode } from 'react';
import { MemoryRouter } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { closeQuotaPopup, useQuotaPopup } from '@/lib/error-display';
import { clearToken, setToken } from '@/lib/token';
import { listKeyPrefix } from '@/providers/live-cache';
import { useOpenDesktop } from './use-open-desktop';

function jwt(): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
}

const refused = (code: string): Response =>
  new Response(
    JSON.stringify({
      error: 'precondition_required',
      description: `Quota exceeded: ${code}`,
      description_code: code,
      params: { limit: 4 },
    }),
    { status: 428, headers: { 'Content-Type': 'application/json' } },
  );

function renderOpen(code: string) {
  vi.stubGlobal(
    'fetch',
    vi.fn<typeof fetch>(async () => refused(code)),
  );
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  const desktop = { id: 'd1', name: 'Lab', state: 'stopped', viewers: ['file-spice'], ip: null };
  client.setQueryData([...listKeyPrefix('desktops'), {}], { data: [desktop] });
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={client}>
      <MemoryRouter>{children}</MemoryRouter>
    </QueryClientProvider>
  );
  return renderHook(
    () => ({
      open: useOpenDesktop({ id: 'd1', viewers: ['file-spice'] }),
      quota: useQuotaPopup(),
    }),
    { wrapper },
  );
}

beforeEach(() => setToken(jwt()));
afterEach(() => {
  closeQuotaPopup();
  clearToken();
  vi.unstubAllGlobals();
});

describe('Open refused at start', () => {
  it('opens the quota popup for a group limit of memory', async () => {
    const { result } = renderOpen('desktop_start_group_memory_limit_exceeded');
    act(() => result.current.open.open('file-spice'));
    await waitFor(() => expect(result.current.open.progress.phase).toBe('error'));
    expect(result.current.quota).not.toBeNull();
  });

  it('leaves any other refusal to the card', async () => {
    const { result } = renderOpen('desktop_start_failed');
    act(() => result.current.open.open('file-spice'));
    await waitFor(() => expect(result.current.open.progress.phase).toBe('error'));
    expect(result.current.quota).toBeNull();
  });
});

describe('Open with the browser console', () => {
  function renderVnc(answer: Response) {
    const order: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn<typeof fetch>(async (input) => {
        order.push(`fetch ${new URL(String(input), 'http://portal.test').pathname}`);
        return answer;
      }),
    );
    const tab = { opener: {} as unknown, closed: false, close: vi.fn(), location: { href: '' } };
    const open = vi.fn((url?: string | URL) => {
      order.push(`open ${String(url)}`);
      return tab as unknown as Window;
    });
    vi.stubGlobal('open', open);
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    const viewers = ['browser-vnc'];
    const desktop = { id: 'd1', name: 'Lab', state: 'stopped', viewers, ip: null };
    client.setQueryData([...listKeyPrefix('desktops'), {}], { data: [desktop] });
    const wrapper = ({ children }: { children: ReactNode }) => (
      <QueryClientProvider client={client}>
        <MemoryRouter>{children}</MemoryRouter>
      </QueryClientProvider>
    );
    const hook = renderHook(() => useOpenDesktop({ id: 'd1', viewers: ['browser-vnc'] }), {
      wrapper,
    });
    const started = () =>
      act(() =>
        client.setQueryData([...listKeyPrefix('desktops'), {}], {
          data: [{ ...desktop, state: 'started' }],
        }),
      );
    return { hook, order, tab, open, started };
  }

  it('opens the viewer page in the click, after the start request left, marked as following it', async () => {
    const ok = new Response(JSON.stringify({}), {
      headers: { 'Content-Type': 'application/json' },
    });
    const { hook, order, tab, started } = renderVnc(ok);
    act(() => hook.result.current.open('browser-vnc'));
    expect(order).toEqual(['fetch /api/v3/desktop/start/d1', 'open /viewer/vnc/d1#starting']);
    expect(tab.opener).toBeNull();
    started(); // the socket patches the cached list
    await waitFor(() => expect(hook.result.current.progress.phase).toBe('opened'));
    expect(hook.result.current.progress.delivered).toBe('tab');
    // the page was opened on its address: nothing navigates it again
    expect(tab.location.href).toBe('');
    expect(tab.close).not.toHaveBeenCalled();
  });

  it('closes the page when the start is refused', async () => {
    const { hook, tab } = renderVnc(refused('desktop_start_failed'));
    act(() => hook.result.current.open('browser-vnc'));
    await waitFor(() => expect(hook.result.current.progress.phase).toBe('error'));
    expect(tab.close).toHaveBeenCalled();
  });
});
