import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Providers } from '@/resources/form/test-utils';
import { clearToken, setToken } from '@/lib/token';
import { resetSessionState, updateSessionState } from '@/lib/session-state';
import type { Bastion, UserConfig } from '@/generated/types';
import { BastionModal } from './bastion-modal';

/** The server, by path: the modal talks to the real HTTP client over this fetch. */
const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown }[] = [];
const TARGET = '3f0c2a4e-8d7b-4c1a-9e5f-0a1b2c3d4e5f';
const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKey me@laptop';

const target: Bastion = {
  id: TARGET,
  desktop_id: 'd-1',
  user_id: 'u-1',
  enabled: false,
  domain: null,
  http: { enabled: false, http_port: 80, https_port: 443 },
  ssh: { enabled: false, port: 22, authorized_keys: [] },
  version: 1,
};

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
  updateSessionState({
    config: {
      can_use_bastion: true,
      can_use_bastion_individual_domains: false,
      bastion_domain: 'bastion.example.org',
      bastion_ssh_port: '2222',
      http_port: '80',
    } as UserConfig,
  });
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const body: unknown = init?.body ? JSON.parse(String(init.body)) : undefined;
    sent.push({ method: init?.method ?? 'GET', url, body });
    if (url.endsWith('/api/v3/desktop/bastion/d-1'))
      return json(init?.method === 'PUT' ? {} : target);
    return new Response('{}', { status: 404 });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
  resetSessionState();
});

describe('BastionModal', () => {
  it('loads the target, and saves SSH on with the keys one per line and the default ports', async () => {
    const onClose = vi.fn();
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <Providers>
          <BastionModal id="d-1" name="Lab PC" onClose={onClose} />
        </Providers>
      </QueryClientProvider>,
    );
    expect(await screen.findByText('Bastion of “Lab PC”')).toBeInTheDocument();
    fireEvent.click(await screen.findByTestId('bastion-ssh-enabled'));
    fireEvent.change(screen.getByTestId('bastion-keys'), {
      target: { value: `${KEY}\n\n  ssh-rsa AAAAB3 other  \n` },
    });
    expect(screen.getByTestId('bastion-ssh-command')).toHaveTextContent(
      `ssh -p 2222 ${TARGET}@bastion.example.org`,
    );
    // Custom domains are not offered without the right to them.
    expect(screen.queryByTestId('bastion-domain')).toBeNull();
    fireEvent.click(screen.getByTestId('bastion-save'));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    const put = sent.find((call) => call.method === 'PUT');
    expect(put?.body).toEqual({
      http: { enabled: false, http_port: 80, https_port: 443 },
      ssh: { enabled: true, port: 22, authorized_keys: [KEY, 'ssh-rsa AAAAB3 other'] },
    });
  });
});
