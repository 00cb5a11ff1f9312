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
