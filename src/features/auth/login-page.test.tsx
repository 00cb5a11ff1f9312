/**
 * The login page's account links and login steps, against a fake server at the HTTP boundary:
 * the category choice of a category-select token (answered or already stored) and the register
 * token's page, and the hint of a category whose LDAP directory signs in through the form.
 */
import { useEffect } from 'react';
import { MantineProvider } from '@mantine/core';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { I18nextProvider } from 'react-i18next';
import { MemoryRouter, Route, Routes, useLocation, useNavigate } from 'react-router';
import { setNavigator } from '@/lib/navigation';
import { clearToken, getToken, setToken } from '@/lib/token';
import { testI18n } from '@/resources/form/test-utils';
import { LoginPage } from './login-page';
import { loginErrorText } from './login-errors';

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}
const exp = Math.floor(Date.now() / 1000) + 600;
const loginJwt = jwt({ kid: 'isardvdi', exp, data: { role_id: 'user', category_id: 'c2' } });
const choiceJwt = jwt({
  kid: 'isardvdi',
  type: 'category-select',
  exp,
  categories: [
    { id: 'c1', name: 'Alpha' },
    { id: 'c2', name: 'Beta' },
  ],
});

interface Call {
  path: string;
  query: URLSearchParams;
  bearer: string | null;
}

const FORM_ONLY = { providers: ['form'], ldap: [], oidc: [], saml: [] };

function fakeServer(login: () => string, providers: object = FORM_ONLY): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input), 'http://portal.test');
      const bearer = new Headers(init?.headers).get('Authorization')?.replace(/^Bearer /, '');
      calls.push({ path: url.pathname, query: url.searchParams, bearer: bearer ?? null });
      const json = (body: unknown) =>
        new Response(JSON.stringify(body), { headers: { 'Content-Type': 'application/json' } });
      if (url.pathname === '/api/v3/categories') return json([{ id: 'default', name: 'Default' }]);
      if (url.pathname === '/authentication/providers') return json(providers);
      if (url.pathname === '/authentication/login')
        return new Response(login(), { headers: { 'Content-Type': 'text/plain' } });
      return json({});
    }),
  );
  return calls;
}

function Where() {
  return <p data-testid="where">{useLocation().pathname}</p>;
}

/** Hands the router's navigate function to the page (the SPA's navigation bridge does the same). */
function Navigation() {
  const navigate = useNavigate();
  useEffect(() => setNavigator((path, options) => void navigate(path, options)), [navigate]);
  return null;
}

function renderLogin() {
  return render(
    <I18nextProvider i18n={testI18n}>
      <MantineProvider>
        <MemoryRouter initialEntries={['/login']}>
          <Navigation />
          <Routes>
            <Route path="/login" element={<LoginPage />} />
            <Route path="*" element={<Where />} />
          </Routes>
        </MemoryRouter>
      </MantineProvider>
    </I18nextProvider>,
  );
}

/** Types a login and submits it once the page's first calls are done (the button waits for them). */
const logIn = async (): Promise<void> => {
  await waitFor(() => expect(screen.getByTestId('login-submit')).toBeEnabled());
  fireEvent.change(screen.getByLabelText(/Username/), { target: { value: 'ann' } });
  fireEvent.change(screen.getByLabelText(/^Password/), { target: { value: 'secret' } });
  fireEvent.click(screen.getByTestId('login-submit'));
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  clearToken();
  sessionStorage.clear();
});

describe('login page', () => {
  it('links to the sign-up and forgot-password pages', async () => {
    fakeServer(() => loginJwt);
    renderLogin();
    expect(await screen.findByRole('link', { name: 'Create an account' })).toHaveAttribute(
      'href',
      '/signup',
    );
    expect(screen.getByRole('link', { name: 'Forgot your password?' })).toHaveAttribute(
      'href',
      '/forgot-password',
    );
  });

  it('offers the categories of a category-select answer and logs in with that token', async () => {
    let answer = choiceJwt;
    const calls = fakeServer(() => answer);
    renderLogin();
    await logIn();
    const beta = await screen.findByRole('button', { name: 'Beta' });
    answer = loginJwt;
    await waitFor(() => expect(beta).toBeEnabled());
    fireEvent.click(beta);
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('/desktops'));
    const logins = calls.filter((call) => call.path === '/authentication/login');
    expect(logins).toHaveLength(2);
    expect(logins[1]?.bearer).toBe(choiceJwt);
    expect(logins[1]?.query.get('category_id')).toBe('c2');
    expect(getToken()).toBe(loginJwt);
  });

  it('shows the choice of a category-select token the guard sent here', async () => {
    setToken(choiceJwt);
    fakeServer(() => loginJwt);
    renderLogin();
    expect(await screen.findByRole('heading', { name: 'Select a category' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Alpha' })).toBeInTheDocument();
  });

  it('goes to the register page with a register token', async () => {
    fakeServer(() => jwt({ kid: 'isardvdi', type: 'register', category_id: 'default', exp }));
    renderLogin();
    await logIn();
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('/register'));
  });

  it('says when the chosen category also signs in with its LDAP directory', async () => {
    fakeServer(() => loginJwt, {
      providers: ['form'],
      ldap: [{ category_id: 'default', label: 'School directory' }],
    });
    renderLogin();
    expect(await screen.findByTestId('login-ldap-hint')).toHaveTextContent(
      'You can also sign in with your School directory account.',
    );
  });

  it("offers the chosen category's OpenID Connect provider as a button that leads to its start", async () => {
    fakeServer(() => loginJwt, {
      providers: ['form'],
      ldap: [],
      oidc: [
        { category_id: 'default', label: 'School account', icon: '/school.svg' },
        { category_id: 'other', label: 'Other school', icon: null },
      ],
    });
    renderLogin();
    const button = await screen.findByTestId('login-oidc');
    expect(button).toHaveTextContent('Sign in with School account');
    expect(button.querySelector('img')).toHaveAttribute('src', '/school.svg');
    expect(screen.getAllByTestId('login-oidc')).toHaveLength(1);
    expect(button).toHaveAttribute(
      'href',
      '/authentication/login/oidc?category_id=default&redirect=/',
    );
  });

  it("offers the chosen category's SAML provider as a button that leads to its start", async () => {
    fakeServer(() => loginJwt, {
      providers: ['form'],
      ldap: [],
      oidc: [],
      saml: [{ id: 'p-1', category_id: 'default', label: 'College account', icon: null }],
    });
    renderLogin();
    const button = await screen.findByTestId('login-saml');
    expect(button).toHaveTextContent('Sign in with College account');
    expect(button).toHaveAttribute('href', '/authentication/login/saml?provider=p-1&redirect=/');
  });

  it("shows the message of a provider's refusal the sign-in came back with", async () => {
    fakeServer(() => loginJwt);
    // the page reads the address itself: it may show before the router starts
    window.history.replaceState(null, '', '/login?error=user_disallowed');
    renderLogin();
    expect(await screen.findByTestId('login-error')).toHaveTextContent(
      testI18n.t('errors:user_disallowed'),
    );
    cleanup();
    window.history.replaceState(null, '', '/login?error=no_such_refusal');
    renderLogin();
    expect(await screen.findByTestId('login-error')).toHaveTextContent(
      testI18n.t('errors:generic'),
    );
    window.history.replaceState(null, '', '/');
  });

  it('shows an unreachable directory as a message, not the maintenance page', () => {
    expect(
      loginErrorText({
        statusCode: 503,
        error: 'service_unavailable',
        retryAfter: '30',
        description_code: 'ldap_unavailable',
      }),
    ).toEqual({ key: 'errors:ldap_unavailable' });
    expect(
      loginErrorText({ statusCode: 503, error: 'service_unavailable', retryAfter: null }),
    ).toMatchObject({
      maintenance: true,
    });
  });
});
