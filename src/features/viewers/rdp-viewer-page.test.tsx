/**
 * The RDP dialog of the `/rdp` page before any connection: no viewer cookie ("cookie not set"), a
 * stale one ("cookie expired"), and a desktop the portal refuses (its translated error, with Retry
 * and Refresh).
 */
import { screen, waitFor } from '@testing-library/react';
import { MemoryRouter } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { renderWithProviders } from '@/resources/form/test-utils';
import { clearToken, setToken } from '@/lib/token';
import { RDP_COOKIE, RDP_COOKIE_TTL_S, writeRdpCookie } from './rdp-cookie';
import { RdpViewerPage } from './rdp-viewer-page';

function jwt(): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
}

const renderPage = () =>
  renderWithProviders(
    <MemoryRouter initialEntries={['/rdp']}>
      <RdpViewerPage />
    </MemoryRouter>,
  );

const statusOf = () => screen.getByTestId('rdp-viewer').getAttribute('data-status');

beforeEach(() => setToken(jwt()));
afterEach(() => {
  document.cookie = `${RDP_COOKIE}=; Path=/; Max-Age=0`;
  clearToken();
  vi.unstubAllGlobals();
});

describe('the /rdp page', () => {
  it('says the cookie is not set when the page was not opened from a desktop', async () => {
    renderPage();
    await waitFor(() => expect(statusOf()).toBe('cookieNotSet'));
    expect(screen.getByRole('dialog', { name: 'Cookie not set' })).toBeTruthy();
    expect(screen.getByTestId('rdp-message').textContent).toMatch(/does not know which desktop/);
    expect(screen.getByTestId('rdp-refresh')).toBeTruthy();
    expect(screen.queryByTestId('rdp-retry')).toBeNull();
  });

  it('says the cookie expired four hours after the Open', async () => {
    // Written by a tab whose clock ran four hours behind: the browser keeps it, the page checks exp.
    writeRdpCookie('d1', 'Lab', '/', Date.now() - (RDP_COOKIE_TTL_S + 5) * 1000);
    renderPage();
    await waitFor(() => expect(statusOf()).toBe('cookieExpired'));
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Lab');
  });

  it("shows the portal's refusal translated, with Retry and Refresh", async () => {
    const fetchMock = vi.fn<typeof fetch>(
      async () =>
        new Response(
          JSON.stringify({
            error: 'conflict',
            description: 'no address',
            description_code: 'viewer_no_address',
            params: null,
          }),
          { status: 409, headers: { 'Content-Type': 'application/json' } },
        ),
    );
    vi.stubGlobal('fetch', fetchMock);
    writeRdpCookie('d1', 'Lab', '/');
    renderPage();
    await waitFor(() => expect(statusOf()).toBe('error'));
    expect(String(fetchMock.mock.calls[0]?.[0])).toContain('/desktop/d1/viewer/browser-rdp');
    expect(screen.getByTestId('rdp-message').textContent).toBe(
      'The desktop has no network address yet: RDP viewers need one.',
    );
    expect(screen.getByTestId('rdp-retry')).toBeTruthy();
    expect(screen.getByTestId('rdp-refresh')).toBeTruthy();
  });
});
