/**
 * The form routes as the app mounts them (the account pages without login, the export and
 * migration pages with a session), against a fake server at the HTTP boundary: what each page
 * sends, with which bearer, and where it leads after success.
 */
import { MantineProvider } from '@mantine/core';
import { Refine } from '@refinedev/core';
import routerProvider from '@refinedev/react-router';
import { QueryClient } from '@tanstack/react-query';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { I18nextProvider } from 'react-i18next';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import { operations, type Operation } from '@/generated/api';
import { fields, formExtensions, type FieldMeta } from '@/generated/fields';
import { resourceList } from '@/generated/resources';
import type { SessionUser } from '@/generated/types';
import { setNavigator } from '@/lib/navigation';
import { resetSessionState, updateSessionState } from '@/lib/session-state';
import { clearToken, getToken, rememberLoginCategory, setToken } from '@/lib/token';
import { cellNameOf, hasCell } from '@/resources/cells/cell-registry';
import { fieldDomId } from '@/resources/form/field-meta';
import { resolveFormExtension } from '@/resources/form/form-extension-registry';
import { hasPreview } from '@/resources/form/preview-registry';
import { baseWidgets, widgetNameOf } from '@/resources/form/widget-registry';
import { testI18n } from '@/resources/form/test-utils';
import { OperationFormPage } from './form-pages';
import './registrations';

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}
const inAnHour = (): number => Math.floor(Date.now() / 1000) + 3600;
const loginJwt = jwt({
  kid: 'isardvdi',
  session_id: 's1',
  exp: inAnHour(),
  data: { user_id: 'u1', role_id: 'user', category_id: 'default' },
});

interface Call {
  method: string;
  path: string;
  query: URLSearchParams;
  bearer: string | null;
  body: unknown;
}

type Reply = (call: Call) => Response;
const json = (body: unknown, status = 200): Response =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
const text = (body: string): Response =>
  new Response(body, { status: 200, headers: { 'Content-Type': 'text/plain' } });

/** A fake server: answers by `METHOD /path`, records every call. */
function fakeServer(routes: Record<string, Reply>): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input), 'http://portal.test');
      const headers = new Headers(init?.headers);
      const raw = init?.body;
      const call: Call = {
        method: init?.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        bearer: headers.get('Authorization')?.replace(/^Bearer /, '') ?? null,
        body:
          typeof raw === 'string'
            ? (JSON.parse(raw) as unknown)
            : raw instanceof FormData
              ? Object.fromEntries(raw)
              : null,
      };
      calls.push(call);
      const reply = routes[`${call.method} ${call.path}`];
      if (!reply) return json({ error: 'not_found', description_code: 'not_found' }, 404);
      return reply(call);
    }),
  );
  return calls;
}

function Where() {
  const location = useLocation();
  return <p data-testid="where">{location.pathname}</p>;
}

/** Mounts a form route at its path (others show where the page went). */
function renderForm(resource: string, kind: string, path: string, url: string) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <I18nextProvider i18n={testI18n}>
      <MantineProvider>
        <MemoryRouter initialEntries={[url]}>
          <Refine
            routerProvider={routerProvider}
            dataProvider={{
              getApiUrl: () => '/api/v3',
              getList: async () => ({ data: [], total: 0 }),
              getOne: async () => ({ data: {} as never }),
              create: async () => ({ data: {} as never }),
              update: async () => ({ data: {} as never }),
              deleteOne: async () => ({ data: {} as never }),
            }}
            resources={resourceList.map(({ name }) => ({ name }))}
            options={{ disableTelemetry: true, reactQuery: { clientConfig: queryClient } }}
          >
            <Routes>
              <Route path={path} element={<OperationFormPage resource={resource} kind={kind} />} />
              <Route path="*" element={<Where />} />
            </Routes>
          </Refine>
        </MemoryRouter>
      </MantineProvider>
    </I18nextProvider>,
  );
}

const field = (resource: string, path: string): HTMLElement => {
  const element = document.getElementById(fieldDomId(resource, path));
  if (!element) throw new Error(`no field ${path}`);
  return element;
};
const type = (resource: string, path: string, value: string): void => {
  fireEvent.change(field(resource, path), { target: { value } });
};
const where = async (path: string): Promise<void> => {
  await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent(path));
};

let undoNavigator: () => void = () => undefined;
const navigated = vi.fn();

beforeEach(() => {
  resetSessionState();
  undoNavigator = setNavigator(navigated);
});
afterEach(() => {
  cleanup();
  undoNavigator();
  navigated.mockReset();
  vi.unstubAllGlobals();
  clearToken();
  sessionStorage.clear();
});

describe('sign-up (after: message)', () => {
  it('posts the details without a session and shows the done text instead of the form', async () => {
    const calls = fakeServer({
      'GET /api/v3/categories': () => json([{ id: 'default', name: 'Default' }]),
      'POST /authentication/register': () => json({}),
    });
    renderForm('session', 'signup', '/signup', '/signup');
    expect(await screen.findByRole('heading', { name: 'Create an account' })).toBeInTheDocument();
    // The one category is chosen for the user.
    await waitFor(() => expect(field('session', 'category_id')).toHaveValue('Default'));
    type('session', 'username', 'newuser');
    type('session', 'name', 'New User');
    type('session', 'email', 'new@example.org');
    fireEvent.click(screen.getByRole('button', { name: 'Email me the link' }));
    expect(await screen.findByTestId('form-done')).toHaveTextContent(
      'If these details can be used, we have emailed you a link',
    );
    const post = calls.find((call) => call.path === '/authentication/register');
    expect(post?.body).toEqual({
      category_id: 'default',
      username: 'newuser',
      name: 'New User',
      email: 'new@example.org',
    });
    expect(post?.bearer).toBeNull();
    expect(screen.queryByRole('button', { name: 'Email me the link' })).toBeNull();
    expect(screen.getByRole('link', { name: 'Go to the login page' })).toHaveAttribute(
      'href',
      '/login',
    );
  });
});

describe('register (token from the query, after: continueLogin)', () => {
  const registerJwt = jwt({
    kid: 'isardvdi',
    type: 'register',
    user_id: 'uid-1',
    category_id: 'cat1',
    exp: inAnHour(),
  });

  it('registers with the link token, logs in with it in its category and lands on the desktops', async () => {
    const calls = fakeServer({
      'POST /api/v3/user/register': () => json({ id: 'new-id' }),
      'POST /authentication/login': () => text(loginJwt),
    });
    renderForm('session', 'register', '/register', `/register?token=${registerJwt}`);
    await screen.findByRole('heading', { name: 'Register' });
    type('session', 'code', 'ENROL-1');
    type('session', 'password', 'Secret-123');
    type('session', 'password_confirmation', 'Secret-123');
    fireEvent.click(screen.getByRole('button', { name: 'Register' }));
    await where('/desktops');
    const [registered, login] = calls;
    expect(registered?.bearer).toBe(registerJwt);
    expect(registered?.body).toEqual({
      code: 'ENROL-1',
      password: 'Secret-123',
      password_confirmation: 'Secret-123',
    });
    expect(login?.path).toBe('/authentication/login');
    expect(login?.bearer).toBe(registerJwt);
    expect(login?.query.get('provider')).toBe('form');
    expect(login?.query.get('category_id')).toBe('cat1');
    expect(getToken()).toBe(loginJwt);
  });

  it("asks a provider's person only for the code, with the stored register token", async () => {
    const ssoJwt = jwt({
      kid: 'isardvdi',
      type: 'register',
      provider: 'oidc',
      user_id: 'sub-1',
      category_id: 'cat1',
      exp: inAnHour(),
    });
    setToken(ssoJwt);
    const calls = fakeServer({
      'POST /api/v3/user/register': () => json({ id: 'new-id' }),
      'POST /authentication/login': () => text(loginJwt),
    });
    renderForm('session', 'register', '/register', '/register');
    await screen.findByRole('heading', { name: 'Register' });
    expect(document.getElementById(fieldDomId('session', 'password'))).toBeNull();
    expect(document.getElementById(fieldDomId('session', 'password_confirmation'))).toBeNull();
    type('session', 'code', 'ENROL-1');
    fireEvent.click(screen.getByRole('button', { name: 'Register' }));
    await where('/desktops');
    const [registered, login] = calls;
    expect(registered?.bearer).toBe(ssoJwt);
    expect(registered?.body).toEqual({ code: 'ENROL-1' });
    expect(login?.bearer).toBe(ssoJwt);
    expect(login?.query.get('category_id')).toBe('cat1');
  });

  it('shows a mismatched confirmation on its field and calls nothing', async () => {
    const calls = fakeServer({});
    renderForm('session', 'register', '/register', `/register?token=${registerJwt}`);
    await screen.findByRole('heading', { name: 'Register' });
    type('session', 'code', 'ENROL-1');
    type('session', 'password', 'Secret-123');
    type('session', 'password_confirmation', 'Secret-999');
    fireEvent.click(screen.getByRole('button', { name: 'Register' }));
    expect(
      await screen.findByText('Confirm the password must match Password.'),
    ).toBeInTheDocument();
    expect(calls).toEqual([]);
  });

  it('puts an unknown code on the code field and a conflict in the page text', async () => {
    let status = 404;
    fakeServer({
      'POST /api/v3/user/register': () =>
        status === 404
          ? json({ error: 'not_found', description_code: 'code_not_found' }, 404)
          : json({ error: 'conflict', description_code: 'conflict' }, 409),
    });
    renderForm('session', 'register', '/register', `/register?token=${registerJwt}`);
    await screen.findByRole('heading', { name: 'Register' });
    type('session', 'code', 'NOPE');
    fireEvent.click(screen.getByRole('button', { name: 'Register' }));
    expect(await screen.findByText('No registration code matches.')).toBeInTheDocument();
    status = 409;
    type('session', 'code', 'TAKEN');
    fireEvent.click(screen.getByRole('button', { name: 'Register' }));
    expect(await screen.findByTestId('form-failure')).toHaveTextContent(
      'You are already registered: log in.',
    );
  });

  it('has nothing to do without a token', async () => {
    fakeServer({});
    renderForm('session', 'register', '/register', '/register');
    expect(await screen.findByTestId('form-token-problem')).toHaveTextContent(
      'This page works from the link we emailed you',
    );
    expect(screen.queryByRole('button', { name: 'Register' })).toBeNull();
  });
});

describe('reset password', () => {
  it('continues a login stopped for an expired password, to the next step the answer names', async () => {
    const resetRequired = jwt({
      kid: 'isardvdi',
      type: 'password-reset-required',
      user_id: 'u1',
      exp: inAnHour(),
    });
    const disclaimerJwt = jwt({
      kid: 'isardvdi',
      type: 'disclaimer-acknowledgement-required',
      user_id: 'u1',
      exp: inAnHour(),
    });
    setToken(resetRequired);
    rememberLoginCategory('cat9');
    const calls = fakeServer({
      'POST /authentication/reset-password': () => json({}),
      'POST /authentication/login': () => text(disclaimerJwt),
    });
    renderForm('session', 'resetPassword', '/reset-password', '/reset-password');
    await screen.findByRole('heading', { name: 'Password reset' });
    type('session', 'password', 'New-Secret-1');
    type('session', 'password_confirmation', 'New-Secret-1');
    fireEvent.click(screen.getByRole('button', { name: 'Change the password' }));
    await where('/disclaimer');
    expect(calls[0]?.bearer).toBe(resetRequired);
    expect(calls[0]?.body).toEqual({
      password: 'New-Secret-1',
      password_confirmation: 'New-Secret-1',
    });
    expect(calls[1]?.bearer).toBe(resetRequired);
    expect(calls[1]?.query.get('category_id')).toBe('cat9');
    expect(getToken()).toBe(disclaimerJwt);
  });

  it('after a mailed link (not a login step) counts down to the login instead', async () => {
    const mailed = jwt({ kid: 'isardvdi', type: 'password-reset', user_id: 'u1', exp: inAnHour() });
    const calls = fakeServer({ 'POST /authentication/reset-password': () => json({}) });
    renderForm('session', 'resetPassword', '/reset-password', `/reset-password?token=${mailed}`);
    await screen.findByRole('heading', { name: 'Password reset' });
    type('session', 'password', 'New-Secret-1');
    type('session', 'password_confirmation', 'New-Secret-1');
    fireEvent.click(screen.getByRole('button', { name: 'Change the password' }));
    const countdown = await screen.findByTestId('login-countdown');
    expect(countdown).toHaveAttribute('data-left', '5');
    expect(screen.getByTestId('form-done')).toHaveTextContent('Your password has been changed');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.bearer).toBe(mailed);
    fireEvent.click(within(countdown).getByRole('button', { name: 'Go to the login page' }));
    await where('/login');
  });

  it('reports an expired link', async () => {
    const old = jwt({ kid: 'isardvdi', type: 'password-reset', user_id: 'u1', exp: 1000 });
    fakeServer({});
    renderForm('session', 'resetPassword', '/reset-password', `/reset-password?token=${old}`);
    expect(await screen.findByTestId('form-token-problem')).toHaveTextContent(
      'This link has expired',
    );
  });
});

describe('verify email (no body, token from the query, after: loginCountdown)', () => {
  it('confirms with the link token, then counts down and drops the step token', async () => {
    const link = jwt({
      kid: 'isardvdi',
      type: 'email-verification',
      user_id: 'u1',
      email: 'a@b.c',
      exp: inAnHour(),
    });
    setToken(
      jwt({ kid: 'isardvdi', type: 'email-verification-required', user_id: 'u1', exp: inAnHour() }),
    );
    const calls = fakeServer({ 'POST /authentication/verify-email': () => json({}) });
    renderForm('session', 'verifyEmail', '/verify-email', `/verify-email?token=${link}`);
    fireEvent.click(await screen.findByRole('button', { name: 'Verify my address' }));
    expect(await screen.findByTestId('login-countdown')).toBeInTheDocument();
    expect(calls).toHaveLength(1);
    expect(calls[0]?.bearer).toBe(link);
    expect(calls[0]?.body).toEqual({});
    fireEvent.click(screen.getByRole('button', { name: 'Go to the login page' }));
    await where('/login');
    expect(getToken()).toBeNull();
  });

  it('sends a stored email-verification-required token to the request page', async () => {
    setToken(
      jwt({ kid: 'isardvdi', type: 'email-verification-required', user_id: 'u1', exp: inAnHour() }),
    );
    fakeServer({});
    renderForm('session', 'verifyEmail', '/verify-email', '/verify-email');
    await where('/verify-email/request');
  });
});

describe('disclaimer (preview, no body, after: continueLogin, cancel: logout)', () => {
  const disclaimerJwt = jwt({
    kid: 'isardvdi',
    type: 'disclaimer-acknowledgement-required',
    user_id: 'u1',
    exp: inAnHour(),
  });
  const routes = {
    'GET /api/v3/disclaimer': () =>
      json({
        title: 'Terms of use',
        body: '<p>Be <strong>nice</strong> to the desktops.</p>',
        footer: '<em>The team</em>',
      }),
  };

  it('shows the text and, on accept, acknowledges and logs in with the same token', async () => {
    setToken(disclaimerJwt);
    rememberLoginCategory('default');
    const calls = fakeServer({
      ...routes,
      'POST /authentication/acknowledge-disclaimer': () => json({}),
      'POST /authentication/login': () => text(loginJwt),
    });
    renderForm('session', 'disclaimer', '/disclaimer', '/disclaimer');
    expect(await screen.findByRole('heading', { name: 'Terms of use' })).toBeInTheDocument();
    const body = screen.getByTestId('form-document-body');
    expect(within(body).getByText('nice').tagName).toBe('STRONG');
    expect(screen.getByTestId('form-document-footer')).toHaveTextContent('The team');
    expect(calls[0]?.bearer).toBe(disclaimerJwt);
    fireEvent.click(screen.getByRole('button', { name: 'Accept' }));
    await where('/desktops');
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'GET /api/v3/disclaimer',
      'POST /authentication/acknowledge-disclaimer',
      'POST /authentication/login',
    ]);
    expect(calls[1]?.bearer).toBe(disclaimerJwt);
    expect(calls[2]?.bearer).toBe(disclaimerJwt);
    expect(calls[2]?.query.get('category_id')).toBe('default');
    expect(getToken()).toBe(loginJwt);
  });

  it('rejects by ending the session, without acknowledging', async () => {
    setToken(disclaimerJwt);
    const calls = fakeServer(routes);
    renderForm('session', 'disclaimer', '/disclaimer', '/disclaimer');
    await screen.findByRole('heading', { name: 'Terms of use' });
    fireEvent.click(screen.getByRole('button', { name: 'Reject' }));
    await waitFor(() => expect(navigated).toHaveBeenCalledWith('/login', { replace: true }));
    expect(getToken()).toBeNull();
    expect(calls.map((call) => call.path)).toEqual(['/api/v3/disclaimer']);
  });

  it('sends a logged-in user to the desktops', async () => {
    setToken(loginJwt);
    fakeServer(routes);
    renderForm('session', 'disclaimer', '/disclaimer', '/disclaimer');
    await where('/desktops');
  });
});

describe('the pages of a session (profile)', () => {
  beforeEach(() => {
    setToken(loginJwt);
    updateSessionState({
      user: { role_id: 'user', name: 'Test user', username: 'user' } as SessionUser,
    });
  });

  it('export user (after: answer) shows the code with a copy button', async () => {
    const calls = fakeServer({
      'POST /api/v3/user_migration/export': () => json({ token: 'MIGRATION-CODE-1' }),
    });
    renderForm('profile', 'exportUser', '/export-user', '/export-user');
    fireEvent.click(await screen.findByRole('button', { name: 'Get a migration code' }));
    expect(await screen.findByTestId('copy-value')).toHaveTextContent('MIGRATION-CODE-1');
    expect(screen.getByRole('button', { name: 'Copy' })).toBeInTheDocument();
    expect(screen.getByTestId('form-done')).toHaveTextContent('Your migration code');
    expect(calls[0]?.bearer).toBe(loginJwt);
  });

  it('migration lists what moves, then migrates and opens the desktops', async () => {
    const calls = fakeServer({
      'GET /api/v3/user_migration/items': () =>
        json({
          desktops: [
            { id: 'd1', name: 'Desktop one' },
            { id: 'd2', name: 'Desktop two' },
          ],
          templates: [],
          media: [{ id: 'm1', name: 'Installer ISO' }],
          deployments: [],
        }),
      'POST /api/v3/user_migration/auto': () => json({ migrated_desktops: 2, migrated_media: 1 }),
    });
    renderForm('profile', 'migration', '/migration', '/migration');
    const preview = await screen.findByTestId('form-preview');
    expect(preview).toHaveAttribute('data-count', '3');
    expect(within(preview).getByRole('heading', { name: 'Desktops (2)' })).toBeInTheDocument();
    expect(within(preview).getByRole('heading', { name: 'Media (1)' })).toBeInTheDocument();
    expect(within(preview).getByText('Installer ISO')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Migrate' }));
    await where('/desktops');
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'GET /api/v3/user_migration/items',
      'POST /api/v3/user_migration/auto',
    ]);
  });

  it('migration offers no button when there is nothing to migrate', async () => {
    fakeServer({
      'GET /api/v3/user_migration/items': () =>
        json({ error: 'precondition_required', description_code: 'migration_no_items' }, 428),
    });
    renderForm('profile', 'migration', '/migration', '/migration');
    expect(await screen.findByTestId('form-preview-error')).toHaveTextContent(
      'There is nothing to migrate.',
    );
    expect(screen.queryByRole('button', { name: 'Migrate' })).toBeNull();
  });
});

describe('every form route', () => {
  const forms = resourceList.flatMap((resource) =>
    Object.entries(resource.meta.forms).map(([kind, form]) => ({ resource, kind, form })),
  );
  const fieldsOf = (type: string | null): readonly FieldMeta[] =>
    type ? ((fields as Readonly<Record<string, readonly FieldMeta[]>>)[type] ?? []) : [];

  it.each(forms.map((entry) => [`${entry.resource.name}.${entry.kind}`, entry] as const))(
    '%s names only registered widgets, preview renderers and answer renderers',
    (_name, { resource, form }) => {
      const extension = form.type
        ? resolveFormExtension(form.type, formExtensions[form.type])
        : null;
      const widgets = { ...baseWidgets, ...(extension?.widgets ?? {}) };
      for (const meta of fieldsOf(form.type).filter((m) => !m.hidden))
        expect(widgets[widgetNameOf(meta)], `${meta.path}: ${widgetNameOf(meta)}`).toBeDefined();
      if (form.previewWidget) expect(hasPreview(form.previewWidget)).toBe(true);
      if (form.after === 'answer' || form.after === 'answerContinue') {
        const op = (operations as Readonly<Record<string, Operation>>)[
          `${resource.name}.${form.operation}`
        ];
        for (const meta of fieldsOf(op?.response ?? null).filter((m) => !m.hidden))
          expect(hasCell(cellNameOf(meta)), `${meta.path}: ${cellNameOf(meta)}`).toBe(true);
      }
    },
  );
});
