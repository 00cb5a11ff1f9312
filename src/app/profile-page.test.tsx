/**
 * The profile screen the engine generates: the details page of a singleton with sections: panels per x-ui section, quota
 * bars from the record, actions in their sections, form actions asking only their `fields`, a
 * `result` action showing its answer once, and the `/profile/:action` deep link.
 */
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Route, Routes, useLocation } from 'react-router';
import './registrations';
import type { Role, SessionUser } from '@/generated/types';
import { updateSessionState } from '@/lib/session-state';
import { clearToken } from '@/lib/token';
import { ActionDialogHost } from '@/resources/actions/action-dialogs';
import { renderEngine } from '@/resources/testing/engine-test-wrapper';
import { ResourceShowPage } from '@/resources/show/resource-show-page';

const profile = {
  id: 'u1',
  name: 'Ada Lovelace',
  username: 'ada',
  email: 'ada@example.org',
  email_verified: false,
  provider: 'form',
  role_name: 'Advanced',
  category_name: 'Default',
  group_name: 'Advanced',
  quota: { desktops: 10, memory: 8 },
  used: { desktops: 3, memory: 2, templates: 1 },
  restriction_applied: 'group_quota',
  language: 'ca',
  api_key: { exists: false, expires: 0 },
  vpn_address: '10.0.0.7',
  migration: { export: false, import: false },
  show_change_email_button: false,
  mail_delivery: 'log',
  password_policy: { length: 12, uppercase: 1, not_username: true, old_passwords: 3 },
};

const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown }[] = [];
let answers: Record<string, unknown> = {};

beforeEach(() => {
  sent.length = 0;
  answers = {};
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = new URL(String(input), 'http://portal.test').pathname;
    const method = init?.method ?? 'GET';
    sent.push({ method, url, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    return new Response(JSON.stringify(answers[`${method} ${url}`] ?? {}), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

/** Where the router is (the deep link's dialog comes back to the details route). */
function Location() {
  return <output data-testid="location">{useLocation().pathname}</output>;
}

function renderProfile(url = '/profile', role: Role = 'advanced', record: object = profile) {
  const page = (
    <>
      <ResourceShowPage resource="profile" />
      <ActionDialogHost />
      <Location />
    </>
  );
  const view = renderEngine(
    <Routes>
      <Route path="/profile" element={page} />
      <Route path="/profile/:action" element={page} />
    </Routes>,
    { url, role, show: { profile: record as never } },
  );
  // The singleton is keyed by the signed-in user's id.
  act(() =>
    updateSessionState({
      user: { id: 'u1', role_id: role, name: 'Ada', username: 'ada' } as SessionUser,
    }),
  );
  return view;
}

const panel = (name: string) => screen.getByRole('region', { name });

describe('the profile details page', () => {
  it('groups the fields in titled panels, in the schema order, without a way back to a list', async () => {
    renderProfile();
    const details = await screen.findByTestId('resource-details');
    expect(within(details).getByRole('heading', { level: 1 })).toHaveTextContent('Ada Lovelace');
    const headings = within(details)
      .getAllByRole('heading', { level: 2 })
      .map((h) => h.textContent);
    expect(headings).toEqual(['Account', 'Quota', 'Language', 'Password', 'API key', 'VPN']);
    expect(within(panel('Account')).getByText('ada@example.org')).toBeInTheDocument();
    expect(within(panel('Language')).getByText('Català')).toBeInTheDocument();
    expect(within(panel('Account')).getByTestId('email-verified')).toHaveTextContent(
      'Not verified',
    );
    expect(within(panel('Account')).getByTestId('mail-delivery')).toHaveTextContent(/SMTP_URL/);
    expect(within(panel('Password')).getByTestId('password-policy')).toHaveTextContent(
      'At least 12 characters',
    );
    // Hidden fields stay hidden; a singleton has no list to go back to.
    expect(details.querySelector('[data-field="show_change_email_button"]')).toBeNull();
    expect(details.querySelector('[data-field="quota"]')).toBeNull();
    expect(screen.queryByRole('link')).toBeNull();
  });

  it('draws one bar per counter that has a quota, and unlimited for the others', async () => {
    renderProfile();
    await screen.findByTestId('resource-details');
    const quota = panel('Quota');
    const desktops = within(quota).getByRole('progressbar', { name: 'Desktops' });
    expect(desktops).toHaveAttribute('aria-valuenow', '3');
    expect(desktops).toHaveAttribute('aria-valuemax', '10');
    expect(within(quota).getByText('3 of 10')).toBeInTheDocument();
    const memory = within(quota).getByRole('progressbar', { name: 'Memory of running desktops' });
    expect(memory).toHaveAttribute('aria-valuetext', '2.0 GB of 8.0 GB');
    expect(within(quota).getAllByRole('progressbar')).toHaveLength(2);
    expect(
      quota.querySelector('[data-testid="quota-unlimited"][data-counter="templates"]'),
    ).toHaveTextContent('1 · unlimited');
    expect(within(quota).getByTestId('restriction')).toHaveTextContent('Group quota');
  });

  it('offers each action in its section, and only those the record and the role allow', async () => {
    renderProfile('/profile', 'user');
    await screen.findByTestId('resource-details');
    expect(within(panel('Account')).getByRole('button', { name: 'Edit name' })).toBeVisible();
    expect(
      within(panel('Account')).getByRole('button', { name: 'Resend verification email' }),
    ).toBeVisible();
    expect(
      within(panel('Password')).getByRole('button', { name: 'Change password' }),
    ).toBeVisible();
    // show_change_email_button is false; a plain user may not hold an API key.
    expect(screen.queryByRole('button', { name: 'Change email' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Create API key' })).toBeNull();
    expect(screen.queryByRole('region', { name: 'API key' })).toBeNull();
  });

  it('asks and sends only the fields an action names, then reads the record again', async () => {
    const record = { ...profile };
    fetchMock.mockImplementationOnce(async (input, init) => {
      sent.push({
        method: init?.method ?? 'GET',
        url: new URL(String(input), 'http://portal.test').pathname,
        body: JSON.parse(String(init?.body)),
      });
      record.name = 'Ada King';
      return new Response('{}', { status: 200, headers: { 'Content-Type': 'application/json' } });
    });
    renderProfile('/profile', 'advanced', record);
    await screen.findByTestId('resource-details');
    fireEvent.click(within(panel('Account')).getByRole('button', { name: 'Edit name' }));
    const dialog = await screen.findByRole('dialog');
    const name = await within(dialog).findByLabelText(/^Name/);
    expect(name).toHaveValue('Ada Lovelace');
    expect(within(dialog).queryByLabelText(/Email/)).toBeNull();
    expect(within(dialog).queryByLabelText(/Password/)).toBeNull();
    expect(within(dialog).queryByLabelText(/End my other sessions/)).toBeNull();
    fireEvent.change(name, { target: { value: 'Ada King' } });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(sent.filter((call) => call.method === 'PUT')).toEqual([
      { method: 'PUT', url: '/api/v3/user', body: { name: 'Ada King' } },
    ]);
    expect(await screen.findByRole('heading', { level: 1, name: 'Ada King' })).toBeVisible();
  });

  it('shows the answer of a result action once, with its copy button and warning', async () => {
    answers['PUT /authentication/api-key'] = { api_key: 'key-shown-once' };
    renderProfile();
    await screen.findByTestId('resource-details');
    fireEvent.click(within(panel('API key')).getByRole('button', { name: 'Create API key' }));
    const dialog = await screen.findByRole('dialog');
    await within(dialog).findByTestId('expiry-date');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Create API key' }));
    const result = await within(dialog).findByTestId('action-result');
    expect(within(result).getByTestId('copy-value')).toHaveTextContent('key-shown-once');
    expect(within(result).getByRole('button', { name: 'Copy' })).toBeVisible();
    expect(result).toHaveTextContent('it will not be shown again');
    const created = sent.find((call) => call.url === '/authentication/api-key');
    expect(created?.body).toEqual({ expiration_minutes: 43200 });
    fireEvent.click(within(result).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.queryByText('key-shown-once')).toBeNull();
  });

  it('saves the VPN configuration the server describes as isard-vpn.conf', async () => {
    answers['GET /api/v3/user/vpn/config'] = {
      kind: 'file',
      name: 'isard-vpn',
      ext: 'conf',
      mime: 'text/plain',
      content: '[Interface]\nAddress = 10.0.0.7\n',
    };
    const saved: string[] = [];
    const { createObjectURL, revokeObjectURL } = URL;
    URL.createObjectURL = () => 'blob:vpn';
    URL.revokeObjectURL = () => undefined;
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      saved.push(this.download);
    });
    renderProfile();
    await screen.findByTestId('resource-details');
    fireEvent.click(
      within(panel('VPN')).getByRole('button', { name: 'Download VPN configuration' }),
    );
    await waitFor(() => expect(saved).toEqual(['isard-vpn.conf']));
    click.mockRestore();
    Object.assign(URL, { createObjectURL, revokeObjectURL });
  });

  it('opens the dialog the URL names, and closing it comes back to the profile', async () => {
    renderProfile('/profile/changePassword');
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Change password');
    expect(await within(dialog).findByLabelText(/Current password/)).toBeInTheDocument();
    expect(within(dialog).getByLabelText(/End my other sessions/)).toBeChecked();
    expect(within(dialog).queryByLabelText(/^Name/)).toBeNull();
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/profile$/));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('leaves a deep link to an action the record does not offer', async () => {
    renderProfile('/profile/revokeApiKey');
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent(/^\/profile$/));
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
