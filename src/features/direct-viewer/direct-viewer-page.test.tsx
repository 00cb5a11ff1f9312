import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Providers } from '@/resources/form/test-utils';
import { clearToken, setToken } from '@/lib/token';
import { DirectViewerPage, type DirectConsoleProps } from './direct-viewer-page';

const TOKEN = 'T'.repeat(43);
const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; auth: string | null }[] = [];
let show: () => Response;

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

function jwt(claims: Record<string, unknown> = {}): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 1800, ...claims })}.sig`;
}

const VIEWER_JWT = jwt({ type: 'viewer' });
const desktop = (vmState: string) =>
  json({
    desktopId: 'd-1',
    jwt: VIEWER_JWT,
    vmName: 'Lab PC',
    vmDescription: 'Room 4',
    vmState,
    viewers: { 'browser-vnc': { kind: 'browser', protocol: 'vnc' } },
    scheduled: { shutdown: false },
    needs_booking: false,
    next_booking_start: null,
    next_booking_end: null,
  });

beforeEach(() => {
  sent.length = 0;
  // A session in the same browser must never reach the link's calls.
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    sent.push({
      method: init?.method ?? 'GET',
      url,
      auth: new Headers(init?.headers).get('Authorization'),
    });
    if (url.endsWith(`/api/v3/direct/${TOKEN}`)) return show();
    if (url.endsWith(`/api/v3/direct/${TOKEN}/start`)) return json({ id: 'd-1' });
    if (url.endsWith('/api/v3/direct/viewer/d-1/browser-vnc'))
      return json({
        kind: 'browser',
        protocol: 'vnc',
        viewer: '/v',
        url: '/t',
        expires: 1,
        values: {},
      });
    return json({ error: 'not_found' }, 404);
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

/** A stand-in console: asks one ticket and offers the way back. */
function FakeConsole({ id, fetchTicket, leading }: DirectConsoleProps) {
  return (
    <div data-testid="fake-console">
      {leading}
      <button type="button" onClick={() => void fetchTicket(id)} data-testid="fake-ticket" />
    </div>
  );
}

function renderPage() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <Providers>
        <MemoryRouter initialEntries={[`/vw/${TOKEN}`]}>
          <Routes>
            <Route path="/vw/:jumperurl" element={<DirectViewerPage console={FakeConsole} />} />
          </Routes>
        </MemoryRouter>
      </Providers>
    </QueryClientProvider>,
  );
}

describe('DirectViewerPage', () => {
  it('shows the desktop, starts it without the session, and opens the console with the viewer JWT', async () => {
    let state = 'stopped';
    show = () => desktop(state);
    renderPage();
    expect(await screen.findByTestId('direct-name')).toHaveTextContent('Lab PC');
    expect(screen.getByTestId('direct-description')).toHaveTextContent('Room 4');
    expect(screen.getByTestId('direct-state')).toHaveTextContent('Stopped');
    expect(screen.queryByTestId('direct-open')).toBeNull();

    state = 'started';
    fireEvent.click(screen.getByTestId('direct-start'));
    expect(await screen.findByTestId('direct-open')).toBeInTheDocument();
    expect(screen.getByTestId('direct-state')).toHaveTextContent('Started');
    expect(screen.getByTestId('direct-stop')).toBeInTheDocument();
    expect(sent.find((call) => call.url.endsWith('/start'))?.method).toBe('PUT');
    expect(sent.filter((call) => call.url.includes('/direct/')).every((c) => !c.auth)).toBe(true);

    fireEvent.click(screen.getByTestId('direct-open'));
    fireEvent.click(await screen.findByTestId('fake-ticket'));
    await waitFor(() =>
      expect(sent.find((call) => call.url.includes('/direct/viewer/'))?.auth).toBe(
        `Bearer ${VIEWER_JWT}`,
      ),
    );
    fireEvent.click(screen.getByTestId('direct-close'));
    expect(await screen.findByTestId('direct-desktop')).toBeInTheDocument();
  });

  it('says an unknown or reset link is not valid', async () => {
    show = () => json({ error: 'not_found', msg: 'Not found' }, 404);
    renderPage();
    expect(await screen.findByTestId('direct-invalid')).toHaveTextContent(
      'This link is not valid or was reset',
    );
  });

  it('says when the address was rate limited', async () => {
    show = () => json({ error: 'too_many_requests' }, 429);
    renderPage();
    expect(await screen.findByTestId('direct-rate-limited')).toHaveTextContent('Too many attempts');
  });
});
