import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Providers } from '@/resources/form/test-utils';
import { clearToken, setToken } from '@/lib/token';
import { DirectLinkModal } from './direct-link-modal';

/** The server, by path: the modal talks to the real HTTP client over this fetch. */
const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown; auth: string | null }[] = [];
const TOKEN_1 = 'A'.repeat(43);
const TOKEN_2 = 'B'.repeat(42) + '_';
let enabled = false;
let nextTokens: string[] = [];
const writeText = vi.fn<(text: string) => Promise<void>>();

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
  enabled = false;
  nextTokens = [TOKEN_1, TOKEN_2];
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  writeText.mockResolvedValue(undefined);
  Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const body: unknown = init?.body ? JSON.parse(String(init.body)) : undefined;
    const headers = new Headers(init?.headers);
    sent.push({ method: init?.method ?? 'GET', url, body, auth: headers.get('Authorization') });
    if (url.endsWith('/api/v3/desktop/jumperurl/d-1')) return json({ jumperurl: enabled });
    if (url.endsWith('/api/v3/desktop/jumperurl_reset/d-1')) {
      const disabled = (body as { disabled: boolean }).disabled;
      enabled = !disabled;
      return json(disabled ? null : (nextTokens.shift() ?? null));
    }
    return new Response('{}', { status: 404 });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  writeText.mockReset();
  clearToken();
});

function renderModal(onClose = vi.fn()) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <Providers>
        <DirectLinkModal id="d-1" name="Lab PC" onClose={onClose} />
      </Providers>
    </QueryClientProvider>,
  );
  return onClose;
}

const resets = () => sent.filter((call) => call.url.endsWith('/jumperurl_reset/d-1'));

describe('DirectLinkModal', () => {
  it('shows a disabled link, and enabling it shows the full URL once with a copy button', async () => {
    renderModal();
    expect(await screen.findByText('Direct link to “Lab PC”')).toBeInTheDocument();
    const toggle = await screen.findByTestId('direct-link-enabled');
    expect(toggle).not.toBeChecked();
    expect(screen.queryByTestId('direct-link-url')).toBeNull();
    expect(screen.queryByTestId('direct-link-reset')).toBeNull();
    expect(sent[0]?.auth).toMatch(/^Bearer /);

    fireEvent.click(toggle);
    const url = await screen.findByTestId('direct-link-url');
    expect(url).toHaveValue(`${window.location.origin}/vw/${TOKEN_1}`);
    expect(resets().map((call) => [call.method, call.body])).toEqual([
      ['PUT', { disabled: false }],
    ]);
    expect(screen.getByTestId('direct-link-enabled')).toBeChecked();
    expect(screen.getByTestId('direct-link-once')).toHaveTextContent(
      'Copy the link now: it is shown only this once.',
    );

    fireEvent.click(screen.getByTestId('direct-link-copy'));
    await waitFor(() =>
      expect(writeText).toHaveBeenCalledWith(`${window.location.origin}/vw/${TOKEN_1}`),
    );
    expect(await screen.findByText('Copied')).toBeInTheDocument();
  });

  it('says an existing link can not be shown again, and resets it after a confirmation', async () => {
    enabled = true;
    nextTokens = [TOKEN_2];
    renderModal();
    expect(await screen.findByTestId('direct-link-enabled')).toBeChecked();
    expect(screen.getByTestId('direct-link-hidden')).toBeInTheDocument();
    expect(screen.queryByTestId('direct-link-url')).toBeNull();

    // Reset asks first: Cancel changes nothing.
    fireEvent.click(screen.getByTestId('direct-link-reset'));
    const confirm = screen.getByTestId('direct-link-reset-confirm');
    expect(confirm).toHaveTextContent('The current link stops working at once');
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByTestId('direct-link-reset-confirm')).toBeNull();
    expect(resets()).toEqual([]);

    fireEvent.click(screen.getByTestId('direct-link-reset'));
    fireEvent.click(screen.getByTestId('direct-link-reset-yes'));
    expect(await screen.findByTestId('direct-link-url')).toHaveValue(
      `${window.location.origin}/vw/${TOKEN_2}`,
    );
    expect(resets().map((call) => call.body)).toEqual([{ disabled: false }]);
    expect(screen.queryByTestId('direct-link-hidden')).toBeNull();
  });

  it('disabling sends disabled true and forgets the URL', async () => {
    const onClose = renderModal();
    fireEvent.click(await screen.findByTestId('direct-link-enabled'));
    await screen.findByTestId('direct-link-url');

    fireEvent.click(screen.getByTestId('direct-link-enabled'));
    await waitFor(() => expect(screen.getByTestId('direct-link-enabled')).not.toBeChecked());
    expect(screen.queryByTestId('direct-link-url')).toBeNull();
    expect(resets().map((call) => call.body)).toEqual([{ disabled: false }, { disabled: true }]);

    fireEvent.click(screen.getByTestId('direct-link-close'));
    expect(onClose).toHaveBeenCalled();
  });
});
