import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { Refine } from '@refinedev/core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Providers } from '@/resources/form/test-utils';
import { clearToken, setToken } from '@/lib/token';
import { AllowedModal } from './allowed-modal';

/** The server's answers, by path: the modal talks to the real HTTP client over this fetch. */
const fetchMock = vi.fn<typeof fetch>();
const sent: { url: string; body: unknown }[] = [];

function json(body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { 'Content-Type': 'application/json' },
  });
}

function jwt(): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
}

beforeEach(() => {
  sent.length = 0;
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const body: unknown = init?.body ? JSON.parse(String(init.body)) : undefined;
    sent.push({ url, body });
    if (url.endsWith('/allowed/table/domains'))
      return json({
        users: [{ id: 'u-ann', name: 'Ann', uid: 'ann' }],
        groups: false,
        roles: false,
        categories: false,
      });
    if (url.endsWith('/admin/allowed/term/users'))
      return json([{ id: 'u-bob', name: 'Bob', uid: 'bob', category_name: 'Default' }]);
    if (url.endsWith('/admin/allowed/update/domains')) return json({});
    return new Response('{}', { status: 404 });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

function renderModal(onClose = vi.fn()) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <Providers>
        <Refine>
          <AllowedModal table="domains" id="tpl-1" name="Ubuntu" onClose={onClose} />
        </Refine>
      </Providers>
    </QueryClientProvider>,
  );
  return onClose;
}

describe('AllowedModal', () => {
  it('shows the current lists, searches after two characters and saves ids or false', async () => {
    const onClose = renderModal();
    const users = await screen.findByTestId('allowed-users-on');
    expect(users).toBeChecked();
    expect(screen.getByTestId('allowed-groups-on')).not.toBeChecked();
    expect(screen.getAllByText('Ann (ann)').length).toBeGreaterThan(0);

    // Typing happens in a focused field (Mantine takes other writes for autofill).
    const search = screen.getByTestId('allowed-users-search');
    search.focus();
    fireEvent.change(search, { target: { value: 'b' } });
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(sent.some((call) => call.url.includes('/allowed/term/'))).toBe(false);
    fireEvent.change(search, { target: { value: 'bo' } });
    await waitFor(() =>
      expect(sent.find((call) => call.url.endsWith('/admin/allowed/term/users'))?.body).toEqual({
        term: 'bo',
      }),
    );
    fireEvent.click(await screen.findByText('Bob (bob, Default)'));

    // Groups ticked with nobody chosen: every group of the scope.
    fireEvent.click(screen.getByTestId('allowed-groups-on'));
    fireEvent.click(screen.getByTestId('allowed-save'));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(sent.find((call) => call.url.endsWith('/admin/allowed/update/domains'))?.body).toEqual({
      id: 'tpl-1',
      table: 'domains',
      allowed: { users: ['u-ann', 'u-bob'], groups: [] },
    });
  });

  it('unticking a list sends false for it', async () => {
    const onClose = renderModal();
    fireEvent.click(await screen.findByTestId('allowed-users-on'));
    fireEvent.click(screen.getByTestId('allowed-save'));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(sent.find((call) => call.url.endsWith('/admin/allowed/update/domains'))?.body).toEqual({
      id: 'tpl-1',
      table: 'domains',
      allowed: { users: false, groups: false },
    });
  });
});
