/**
 * The login form drawn at build time: drawn from the language's catalogue ready to take a login,
 * and handed over to the live form (what was typed, the caret, a login already sent).
 */
import { cleanup, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CATEGORY_OPTIONS, STALLED_MESSAGE_ID, STATIC_LOGIN_ID } from '@common/prerendered-login';
import { drawnCategories } from '@/features/auth/static-login';
import { clearToken } from '@/lib/token';
import { fakeServer, loginJwt, renderLogin } from '@/features/auth/test-utils';
import english from '../../locales/en/common.json';
import spanish from '../../locales/es/common.json';
import { renderLogin as drawLogin } from './login-prerender';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  clearToken();
  document.getElementById(STATIC_LOGIN_ID)?.remove();
});

/** Types a login into the drawn form, as a person does before the SPA has taken it over. */
function typeLogin(drawn: HTMLElement): void {
  for (const [name, value] of [
    ['username', 'ann'],
    ['password', 'secret'],
  ] as const) {
    const input = drawn.querySelector<HTMLInputElement>(`input[name=${name}]`);
    if (input) input.value = value;
  }
}

describe('the login form drawn at build time', () => {
  /** Puts the drawn form in the page, as the server's /login page has it, before the SPA renders. */
  function drawnForm(): HTMLElement {
    const drawn = document.createElement('div');
    drawn.id = STATIC_LOGIN_ID;
    drawn.innerHTML = drawLogin('en', { en: english }).html;
    document.body.prepend(drawn);
    return drawn;
  }

  it('draws the form of the language from its catalogue, ready to take a login', () => {
    const drawn = document.createElement('div');
    drawn.innerHTML = drawLogin('es', { en: english, es: spanish }).html;
    const username = drawn.querySelector<HTMLInputElement>('input[name=username]');
    expect(username?.required).toBe(true);
    expect(drawn.querySelector(`label[for="${username?.id}"]`)?.textContent).toContain(
      spanish.login.username,
    );
    expect(drawn.querySelector('input[name=password]')).toHaveAttribute('type', 'password');
    const submit = drawn.querySelector('[data-testid="login-submit"]');
    expect(submit).toHaveAttribute('type', 'submit');
    expect(submit).not.toBeDisabled();
    expect(submit).toHaveTextContent(spanish.login.submit);
    // the message for a login held while the SPA never loads, hidden until then
    const stalled = drawn.querySelector<HTMLElement>(`#${STALLED_MESSAGE_ID}`);
    expect(stalled).toHaveTextContent(spanish.login.notLoaded);
    expect(stalled?.style.display).toBe('none');
    expect(stalled).toHaveAttribute('role', 'alert');
    expect(drawLogin('es', { en: english, es: spanish }).title).toBe(
      `${spanish.product} - ${spanish.routes.login}`,
    );
  });

  it('hands what was typed, the caret and a login already sent over to the live form', async () => {
    const calls = fakeServer(() => loginJwt);
    const drawn = drawnForm();
    const typed = (name: string) => drawn.querySelector<HTMLInputElement>(`input[name=${name}]`);
    const [username, password] = [typed('username'), typed('password')];
    if (!username || !password) throw new Error('the drawn form has no inputs');
    username.value = 'ann';
    password.value = 'secret';
    password.focus();
    password.setSelectionRange(1, 3);
    drawn.dataset.submitted = 'true'; // what the page's first script does with a submit

    renderLogin();
    expect(document.getElementById(STATIC_LOGIN_ID)).toBeNull();
    const live = screen.getByLabelText<HTMLInputElement>(/^Password/);
    expect(live).not.toBe(password);
    expect(live.value).toBe('secret');
    expect(screen.getByLabelText<HTMLInputElement>(/Username/).value).toBe('ann');
    expect(document.activeElement).toBe(live);
    await waitFor(() => expect([live.selectionStart, live.selectionEnd]).toEqual([1, 3]));
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('/desktops'));
    const login = calls.find((call) => call.path === '/authentication/login');
    expect(login?.fields.get('username')).toBe('ann');
    expect(login?.fields.get('password')).toBe('secret');
  });

  it('sends nothing for a drawn form that was not sent, and keeps what the live form has', async () => {
    const calls = fakeServer(() => loginJwt);
    const drawn = drawnForm();
    const username = drawn.querySelector<HTMLInputElement>('input[name=username]');
    if (username) username.value = 'ann';
    renderLogin();
    expect(screen.getByLabelText<HTMLInputElement>(/Username/).value).toBe('ann');
    await waitFor(() => expect(screen.getByTestId('login-submit')).toBeEnabled());
    expect(calls.some((call) => call.path === '/authentication/login')).toBe(false);
    expect(document.getElementById(STATIC_LOGIN_ID)).toBeNull();
  });

  it('sends a held login once the live form has its categories, in the first of them', async () => {
    let answer: (list: unknown) => void = () => undefined;
    const categories = new Promise((resolve) => (answer = resolve));
    const calls = fakeServer(
      () => loginJwt,
      undefined,
      () => categories,
    );
    const drawn = drawnForm();
    typeLogin(drawn);
    drawn.dataset.submitted = 'true';
    renderLogin();
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(calls.some((call) => call.path === '/authentication/login')).toBe(false);
    answer([
      { id: 'c1', name: 'Alpha' },
      { id: 'c2', name: 'Beta' },
    ]);
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('/desktops'));
    const login = calls.find((call) => call.path === '/authentication/login');
    expect(login?.query.get('category_id')).toBe('c1');
    expect(login?.fields.get('username')).toBe('ann');
  });

  it('draws the category choice with its options left to the server, and hands the choice over', async () => {
    const { html } = drawLogin('en', { en: english }, true);
    expect(html).toMatch(
      new RegExp(`<select[^>]*name="category"[^>]*>${CATEGORY_OPTIONS}</select>`),
    );
    const calls = fakeServer(
      () => loginJwt,
      undefined,
      () => [
        { id: 'c1', name: 'Alpha' },
        { id: 'c2', name: 'Beta' },
      ],
    );
    const drawn = document.createElement('div');
    drawn.id = STATIC_LOGIN_ID;
    // as the server fills it in
    drawn.innerHTML = html.replace(
      CATEGORY_OPTIONS,
      '<option value="c1">Alpha</option><option value="c2">Beta</option>',
    );
    document.body.prepend(drawn);
    const select = drawn.querySelector<HTMLSelectElement>('select[name="category"]');
    if (select) select.value = 'c2';
    typeLogin(drawn);
    drawn.dataset.submitted = 'true';
    const categories = drawnCategories();
    expect(categories).toEqual([
      { id: 'c1', name: 'Alpha' },
      { id: 'c2', name: 'Beta' },
    ]);
    renderLogin({ drawnCategories: categories });
    // drawn at once, with the choice made in the drawn form
    expect(screen.getByTestId('login-category')).toHaveValue('c2');
    await waitFor(() => expect(screen.getByTestId('where')).toHaveTextContent('/desktops'));
    const login = calls.find((call) => call.path === '/authentication/login');
    expect(login?.query.get('category_id')).toBe('c2');
  });
});
