/**
 * The deployment's "Edit users" and "Co-owners" dialogs open with the users, groups and co-owners
 * already chosen shown by their names (from the action's `names` read of the record), never as
 * their ids, and send the ids back unchanged.
 */
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import './registrations';
import { machineOf } from '@common/state-actions';
import { clearToken, setToken } from '@/lib/token';
import { ActionFormDialog } from '@/resources/actions/action-form-dialog';
import { renderEngine } from '@/resources/testing/engine-test-wrapper';

const fetchMock = vi.fn<typeof fetch>();
const sent: { method: string; url: string; body: unknown }[] = [];

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

function jwt(): string {
  const enc = (value: unknown) => btoa(JSON.stringify(value)).replace(/=+$/, '');
  return `${enc({ alg: 'HS256' })}.${enc({ exp: Math.floor(Date.now() / 1000) + 3600 })}.sig`;
}

const USER = '5f1c2a9e-1111-4c1e-9a7b-000000000001';
const CO_OWNER = '5f1c2a9e-2222-4c1e-9a7b-000000000002';

/** The deployment as its list and detail carry it: the sharing lists hold ids only. */
const record = {
  id: 'dep-1',
  name: 'Class deployment',
  visible: true,
  allowed: { roles: false, categories: false, groups: ['class-a'], users: [USER] },
  co_owners: [CO_OWNER],
};

beforeEach(() => {
  sent.length = 0;
  setToken(jwt());
  vi.stubGlobal('fetch', fetchMock);
  fetchMock.mockImplementation(async (input, init) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const raw = init?.body;
    sent.push({ method, url, body: typeof raw === 'string' ? JSON.parse(raw) : raw });
    if (url.endsWith('/deployment/info/dep-1'))
      return json({
        id: 'dep-1',
        name: 'Class desktop',
        allowed: {
          roles: false,
          categories: false,
          groups: [
            {
              id: 'class-a',
              name: 'Class A',
              uid: 'class-a',
              parent_category: 'default',
              category_name: 'Default',
            },
          ],
          users: [
            {
              id: USER,
              name: 'Student One',
              uid: 'student01',
              group_name: 'Class A',
              category_name: 'Default',
            },
          ],
        },
      });
    if (url.endsWith('/deployment/co-owners/dep-1'))
      return json({
        owner: { id: 'teacher-id', name: 'Teacher' },
        co_owners: [{ id: CO_OWNER, name: 'Second Teacher' }],
      });
    if (method === 'PUT') return json({});
    return json({}, 404);
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  fetchMock.mockReset();
  clearToken();
});

function openAction(name: string) {
  const def = machineOf('deployments')?.actions[name];
  if (!def) throw new Error(`no action ${name}`);
  renderEngine(
    <ActionFormDialog
      resource="deployments"
      record={record}
      name={name}
      def={def}
      title={record.name}
      onClose={() => undefined}
    />,
    { role: 'advanced' },
  );
}

describe('deployment user dialogs', () => {
  it('Edit users shows the chosen user and group by name and sends their ids', async () => {
    openAction('editUsers');
    const dialog = await screen.findByRole('dialog');
    await within(dialog).findByText('Student One (student01, Class A, Default)');
    expect(within(dialog).getByText('Class A (Default)')).toBeInTheDocument();
    expect(dialog.textContent).not.toContain(USER);
    fireEvent.click(within(dialog).getByRole('button', { name: /Edit users/ }));
    await waitFor(() => expect(sent.some((call) => call.method === 'PUT')).toBe(true));
    expect(sent.find((call) => call.method === 'PUT')).toMatchObject({
      url: expect.stringContaining('/deployment/users/dep-1'),
      body: { allowed: { users: [USER], groups: ['class-a'] } },
    });
  });

  it('Co-owners shows the chosen co-owner by name', async () => {
    openAction('coOwners');
    const dialog = await screen.findByRole('dialog');
    await within(dialog).findByText('Second Teacher');
    expect(dialog.textContent).not.toContain(CO_OWNER);
  });
});
