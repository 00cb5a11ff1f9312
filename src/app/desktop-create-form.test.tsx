/**
 * The generated new-desktop page: choosing a template fills the form from it, but a name or a
 * description the user already typed stays.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import './registrations';
import './form-pages';
import { clearToken, setToken } from '@/lib/token';
import { ResourceFormPage } from '@/resources/form/resource-form-page';
import { renderEngine, stubLayout } from '@/resources/testing/engine-test-wrapper';

const fetchMock = vi.fn<typeof fetch>();

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

const template = {
  id: 'tpl-1',
  kind: 'template',
  name: 'Ubuntu template',
  description: 'From the template',
  hardware: { vcpus: 2, memory: 2, disk_size: 10, boot_order: ['disk'], interfaces: ['default'] },
  guest_properties: { viewers: { browser_vnc: { options: null } } },
  reservables: { vgpus: null },
};

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => restoreLayout());
beforeEach(() => {
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input) => {
    const url = String(input);
    if (url.endsWith('/desktops/new/check_quota')) return json({});
    if (url.endsWith('/user/templates/allowed/all'))
      return json([{ id: 'tpl-1', name: 'Ubuntu template', description: null }]);
    if (url.endsWith('/domain/info/tpl-1')) return json(template);
    if (url.endsWith('/user/hardware/allowed'))
      return json({
        interfaces: [{ id: 'default', name: 'Default' }],
        boot_order: [{ id: 'disk', name: 'Hard disk' }],
        quota: false,
      });
    if (url.endsWith('/media_allowed') || url.endsWith('/images/desktops')) return json([]);
    return new Response('{}', { status: 404 });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

describe('the new-desktop page', () => {
  it('keeps the typed name when a template is chosen, and takes its hardware', async () => {
    renderEngine(<ResourceFormPage resource="desktops" mode="create" />, {
      url: '/desktops/new',
      path: '/desktops/new',
      role: 'advanced',
    });
    const name = await screen.findByRole('textbox', { name: /^Name/ });
    name.focus();
    fireEvent.change(name, { target: { value: 'My own desktop' } });
    expect(name).toHaveValue('My own desktop');

    await waitFor(() =>
      expect(fetchMock.mock.calls.some(([url]) => String(url).endsWith('/allowed/all'))).toBe(true),
    );
    fireEvent.click(screen.getByRole('combobox', { name: /Template/ }));
    fireEvent.click(await screen.findByRole('option', { name: 'Ubuntu template', hidden: true }));
    await waitFor(() => expect(screen.getByRole('textbox', { name: /vCPUs/ })).toHaveValue('2'));
    expect(name).toHaveValue('My own desktop');
  });
});
