/**
 * The login page under test: rendered in the router it lives in, against a fake server at the HTTP
 * boundary (categories, sign-in providers, the login's answer), every call recorded.
 */
import { useEffect } from 'react';
import { MantineProvider } from '@mantine/core';
import { render } from '@testing-library/react';
import { vi } from 'vitest';
import { I18nextProvider } from 'react-i18next';
import { MemoryRouter, Route, Routes, useLocation, useNavigate } from 'react-router';
import { setNavigator } from '@/lib/navigation';
import { testI18n } from '@/resources/form/test-utils';
import { LoginPage, type LoginPageProps } from './login-page';

export function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}
export const exp = Math.floor(Date.now() / 1000) + 600;
export const loginJwt = jwt({ kid: 'isardvdi', exp, data: { role_id: 'user', category_id: 'c2' } });
export const choiceJwt = jwt({
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
  /** The form fields of a form body. */
  fields: Map<string, string>;
}

const FORM_ONLY = { providers: ['form'], ldap: [], oidc: [], saml: [] };

/** The categories the fake server answers by default. */
const ONE_CATEGORY = [{ id: 'default', name: 'Default' }];

export function fakeServer(
  login: () => string,
  providers: object = FORM_ONLY,
  categories: () => unknown = () => ONE_CATEGORY,
): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input), 'http://portal.test');
      const bearer = new Headers(init?.headers).get('Authorization')?.replace(/^Bearer /, '');
      const fields = new Map<string, string>();
      if (init?.body instanceof FormData)
        for (const [name, value] of init.body)
          if (typeof value === 'string') fields.set(name, value);
      calls.push({ path: url.pathname, query: url.searchParams, bearer: bearer ?? null, fields });
      const json = (body: unknown) =>
        new Response(JSON.stringify(body), { headers: { 'Content-Type': 'application/json' } });
      if (url.pathname === '/api/v3/categories') return json(await categories());
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

export function renderLogin(props: LoginPageProps = {}) {
  return render(
    <I18nextProvider i18n={testI18n}>
      <MantineProvider>
        <MemoryRouter initialEntries={['/login']}>
          <Navigation />
          <Routes>
            <Route path="/login" element={<LoginPage {...props} />} />
            <Route path="*" element={<Where />} />
          </Routes>
        </MemoryRouter>
      </MantineProvider>
    </I18nextProvider>,
  );
}
