/**
 * The administration area as the engine draws it from the admin schemas, against a fake server at
 * the HTTP boundary (the real data provider): the users table with its state and list actions
 * (CSV import in a dialog with its answer, CSV export as a file), the edit form read through
 * `show` with its choices and the optional quota, and the audit entry's before/after.
 */
import { MantineProvider } from '@mantine/core';
import { Refine } from '@refinedev/core';
import routerProvider from '@refinedev/react-router';
import { QueryClient } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nextProvider } from 'react-i18next';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { resourceList } from '@/generated/resources';
import type { SessionUser } from '@/generated/types';
import { resetSessionState, updateSessionState } from '@/lib/session-state';
import { createDataProvider } from '@/providers/data-provider';
import { ActionDialogHost } from '@/resources/actions/action-dialogs';
import { fieldDomId } from '@/resources/form/field-meta';
import { testI18n } from '@/resources/form/test-utils';
import { ResourceListPage } from '@/resources/list/resource-list-page';
import { ResourceShowPage } from '@/resources/show/resource-show-page';
import { stubLayout } from '@/resources/testing/engine-test-wrapper';
import { EditPage } from './form-pages';
import { deriveRoutes } from './routes';
import './registrations';

interface Call {
  method: string;
  path: string;
  body: unknown;
}
const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

/** A fake server: answers by `METHOD /path`, records every call. */
function fakeServer(routes: Record<string, (call: Call) => Response>): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input), 'http://portal.test');
      const raw = init?.body;
      const call: Call = {
        method: init?.method ?? 'GET',
        path: url.pathname,
        body: typeof raw === 'string' ? (JSON.parse(raw) as unknown) : null,
      };
      calls.push(call);
      const reply = routes[`${call.method} ${call.path}`];
      return reply ? reply(call) : json({ error: 'not_found', description_code: 'not_found' }, 404);
    }),
  );
  return calls;
}

function Where() {
  return <p data-testid="where">{useLocation().pathname}</p>;
}

function renderAt(url: string, path: string, element: React.ReactElement) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <I18nextProvider i18n={testI18n}>
      <MantineProvider>
        <MemoryRouter initialEntries={[url]}>
          <Refine
            routerProvider={routerProvider}
            dataProvider={createDataProvider()}
            resources={resourceList.map(({ name }) => ({ name }))}
            options={{ disableTelemetry: true, reactQuery: { clientConfig: queryClient } }}
          >
            <Routes>
              <Route path={path} element={element} />
              <Route path="*" element={<Where />} />
            </Routes>
            <ActionDialogHost />
          </Refine>
        </MemoryRouter>
      </MantineProvider>
    </I18nextProvider>,
  );
}

const groups = [
  { id: 'g1', name: 'Class A', category: 'default', users: 30 },
  { id: 'g2', name: 'Class B', category: 'default', users: 12 },
];
const user = {
  id: 'u1',
  username: 'ada',
  name: 'Ada Lovelace',
  email: 'ada@example.org',
  role: 'user',
  category: 'default',
  category_name: 'Default',
  group: 'g1',
  group_name: 'Class A',
  secondary_groups: [],
  provider: 'local',
  active: true,
  email_verified: true,
  password_reset_required: false,
  quota: null,
  accessed: '2026-05-01T10:00:00Z',
  created_at: '2026-01-01T10:00:00Z',
};
const field = (resource: string, path: string): HTMLElement => {
  const element = document.getElementById(fieldDomId(resource, path));
  if (!element) throw new Error(`no field ${path}`);
  return element;
};

let restoreLayout: () => void;
beforeAll(() => {
  restoreLayout = stubLayout();
});
afterAll(() => restoreLayout());
beforeEach(() => {
  updateSessionState({
    user: { id: 'a1', role_id: 'admin', name: 'Admin', username: 'admin' } as SessionUser,
    config: null,
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  resetSessionState();
  localStorage.clear();
});

describe('the administration routes', () => {
  it('are built once their operations are, with the edit form reading `show`', () => {
    const admin = deriveRoutes().filter((route) => route.path.startsWith('/admin/'));
    expect(admin.map((route) => `${route.resource}.${route.kind}`).sort()).toEqual(
      [
        'adminBookingPriorities.create',
        'adminBookingPriorities.edit',
        'adminBookingPriorities.list',
        'adminCategories.create',
        'adminCategories.edit',
        'adminCategories.list',
        'adminGroups.create',
        'adminGroups.edit',
        'adminGroups.list',
        'adminHypervisors.create',
        'adminHypervisors.edit',
        'adminHypervisors.list',
        'adminHypervisors.show',
        'adminLdapProviders.create',
        'adminLdapProviders.edit',
        'adminLdapProviders.list',
        'adminNetworks.create',
        'adminNetworks.edit',
        'adminNetworks.list',
        'adminNetworks.show',
        'adminNodes.list',
        'adminOidcProviders.create',
        'adminOidcProviders.edit',
        'adminOidcProviders.list',
        'adminReservableProfiles.create',
        'adminReservableProfiles.edit',
        'adminReservableProfiles.list',
        'adminReservables.create',
        'adminReservables.edit',
        'adminReservables.list',
        'adminSamlProviders.create',
        'adminSamlProviders.edit',
        'adminSamlProviders.list',
        'adminSettings.show',
        'adminUsers.create',
        'adminUsers.edit',
        'adminUsers.list',
        'audit.list',
        'audit.show',
        'roleVisibility.show',
      ].sort(),
    );
    expect(admin.every((route) => route.built)).toBe(true);
    // Users, groups, categories and the audit log are for managers too; the rest for admins only.
    const staff = ['adminUsers', 'adminGroups', 'adminCategories', 'audit'];
    for (const route of admin)
      expect(route.roles, route.path).toEqual(
        staff.includes(route.resource) ? ['admin', 'manager'] : ['admin'],
      );
  });
});

describe('the users list', () => {
  it('shows the declared columns, the state through its value map and the row actions', async () => {
    fakeServer({
      'GET /api/v3/admin/users': () =>
        json([user, { ...user, id: 'u2', username: 'bob', active: false }]),
    });
    renderAt('/admin/users', '/admin/users', <ResourceListPage resource="adminUsers" />);
    const table = await screen.findByRole('table');
    for (const header of [
      'Username',
      'Name',
      'Email',
      'Role',
      'Category',
      'Main group',
      'Account enabled',
    ])
      expect(within(table).getByRole('columnheader', { name: header })).toBeInTheDocument();
    const states = within(table).getAllByTestId('record-state');
    expect(states.map((state) => state.dataset.value)).toEqual(['active', 'disabled']);
    expect(states.map((state) => state.textContent)).toEqual(['Enabled', 'Disabled']);
    const rows = within(table).getAllByTestId('record');
    expect(within(rows[0] as HTMLElement).getByText('User')).toBeInTheDocument();
    expect(within(rows[0] as HTMLElement).getByRole('link', { name: 'Edit' })).toHaveAttribute(
      'href',
      '/admin/users/u1/edit',
    );
  });

  /** Imports a CSV through the list's dialog; the server answers `answer`. */
  async function importCsv(answer: Record<string, unknown>) {
    const calls = fakeServer({
      'GET /api/v3/admin/users': () => json([user]),
      'POST /api/v3/admin/users/csv': () => json(answer),
    });
    renderAt('/admin/users', '/admin/users', <ResourceListPage resource="adminUsers" />);
    fireEvent.click(await screen.findByRole('button', { name: 'Import CSV' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(await waitFor(() => field('adminUsers', 'csv')), {
      target: { value: 'username,name,email,role,group\nann,Ann,,user,g1' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Import CSV' }));
    return { calls, result: await screen.findByTestId('action-result') };
  }

  it('imports a CSV in a dialog and shows what the server answered', async () => {
    const { calls, result } = await importCsv({
      dry_run: true,
      created: 2,
      updated: 1,
      errors: [{ row: 4, username: 'eve', code: 'user_exists_in_other_category', field: null }],
    });
    expect(calls.find((call) => call.method === 'POST')).toEqual({
      method: 'POST',
      path: '/api/v3/admin/users/csv',
      body: { csv: 'username,name,email,role,group\nann,Ann,,user,g1', dry_run: true },
    });
    expect(within(result).getByText('2')).toBeInTheDocument();
    expect(within(result).getByTestId('array-items')).toHaveTextContent(
      '4 · eve · user_exists_in_other_category',
    );
    // a check only says that nothing was written
    expect(result).toHaveTextContent('nothing was written');
  });

  it('does not say "nothing was written" after an import that wrote', async () => {
    const { result } = await importCsv({ dry_run: false, created: 1, updated: 0, errors: [] });
    expect(within(result).getByText('1')).toBeInTheDocument();
    expect(result).not.toHaveTextContent('nothing was written');
  });

  it('exports the CSV as the file the server names', async () => {
    const calls = fakeServer({
      'GET /api/v3/admin/users': () => json([user]),
      'GET /api/v3/admin/users/csv': () =>
        new Response('username,name\nada,Ada', {
          status: 200,
          headers: {
            'Content-Type': 'text/csv',
            'Content-Disposition': 'attachment; filename="users.csv"',
          },
        }),
    });
    const createObjectURL = vi.fn(() => 'blob:users');
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
    const clicked: string[] = [];
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (
      this: HTMLAnchorElement,
    ) {
      clicked.push(this.download);
    });
    renderAt('/admin/users', '/admin/users', <ResourceListPage resource="adminUsers" />);
    fireEvent.click(await screen.findByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(clicked).toEqual(['users.csv']));
    expect(calls.some((call) => call.path === '/api/v3/admin/users/csv')).toBe(true);
    click.mockRestore();
  });
});

describe('the user edit form', () => {
  it('reads the user through show, offers the groups and sends a quota of its own', async () => {
    const calls = fakeServer({
      'GET /api/v3/admin/users/u1': () => json(user),
      'GET /api/v3/admin/groups': () => json(groups),
      'PUT /api/v3/admin/users/u1': () => json({}),
    });
    renderAt(
      '/admin/users/u1/edit',
      '/admin/users/:id/edit',
      <EditPage resource="adminUsers" kind="edit" />,
    );
    await waitFor(() => expect(field('adminUsers', 'name')).toHaveValue('Ada Lovelace'));
    expect(calls.some((call) => call.path === '/api/v3/admin/users/u1')).toBe(true);
    await waitFor(() => expect(field('adminUsers', 'group')).toHaveValue('Class A'));
    // No quota of its own: the switch is off and its limits are not asked.
    const own = field('adminUsers', 'quota');
    expect(own).not.toBeChecked();
    expect(document.getElementById(fieldDomId('adminUsers', 'quota.desktops'))).toBeNull();
    fireEvent.click(own);
    fireEvent.change(await waitFor(() => field('adminUsers', 'quota.desktops')), {
      target: { value: '5' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(calls.some((call) => call.method === 'PUT')).toBe(true));
    expect(calls.find((call) => call.method === 'PUT')?.body).toEqual({ quota: { desktops: 5 } });
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('/admin/users'));
  });

  it('sends null when the quota of its own is switched off', async () => {
    const calls = fakeServer({
      'GET /api/v3/admin/users/u1': () => json({ ...user, quota: { desktops: 2, memory: 8 } }),
      'GET /api/v3/admin/groups': () => json(groups),
      'PUT /api/v3/admin/users/u1': () => json({}),
    });
    renderAt(
      '/admin/users/u1/edit',
      '/admin/users/:id/edit',
      <EditPage resource="adminUsers" kind="edit" />,
    );
    await waitFor(() => expect(field('adminUsers', 'quota.desktops')).toHaveValue('2'));
    expect(field('adminUsers', 'quota.memory')).toHaveValue('8');
    fireEvent.click(field('adminUsers', 'quota'));
    await waitFor(() =>
      expect(document.getElementById(fieldDomId('adminUsers', 'quota.desktops'))).toBeNull(),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(calls.some((call) => call.method === 'PUT')).toBe(true));
    expect(calls.find((call) => call.method === 'PUT')?.body).toEqual({ quota: null });
  });
});

describe('the audit entry', () => {
  it('shows the record before and after the change, key by key', async () => {
    fakeServer({
      'GET /api/v3/admin/audit/e1': () =>
        json({
          id: 'e1',
          at: '2026-05-01T10:00:00Z',
          actor: 'a1',
          actor_name: 'Admin',
          actor_role: 'admin',
          category: 'default',
          action: 'adminUsers.update',
          target_type: 'user',
          target_id: 'u1',
          target_name: 'ada',
          before: { name: 'Ada', quota: null },
          after: { name: 'Ada Lovelace', quota: { desktops: 5 } },
        }),
    });
    renderAt('/admin/audit/e1', '/admin/audit/:id', <ResourceShowPage resource="audit" />);
    const details = await screen.findByTestId('resource-details');
    const [before, after] = within(details).getAllByTestId('json-value');
    expect(before?.querySelector('[data-json-key="name"]')).toHaveTextContent('"Ada"');
    expect(after?.querySelector('[data-json-key="name"]')).toHaveTextContent('"Ada Lovelace"');
    expect(after?.querySelector('[data-json-key="quota"]')).toHaveTextContent('"desktops": 5');
  });
});
