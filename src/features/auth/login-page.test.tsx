/**
 * The login page's account links and login steps, against a fake server at the HTTP boundary:
 * the category choice of a category-select token (answered or already stored) and the register
 * token's page, and the hint of a category whose LDAP directory signs in through the form.
 */
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { clearToken, getToken, setToken } from '@/lib/token';
import { loginErrorText } from './login-errors';
import { testI18n } from '@/resources/form/test-utils';
import { choiceJwt, exp, fakeServer, jwt, loginJwt, renderLogin } from './test-utils';

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
