/**
 * The handover from the login form to the router: a link followed anonymously replaces the form
 * with the page loader at once (nobody types into a form about to go away), while the navigation
 * after a sign-in keeps the form until the next page is ready. The VNC viewer page visited with a
 * login token shows alone (its ticket asked for at entry) and hands over to the router the same way.
 */
import { act, cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { clearToken, setToken } from '@/lib/token';

/** Opened by a test: until then the router's chunk is "loading". */
let openRouter: () => void = () => undefined;
const routerLoaded = () =>
  new Promise<void>((resolve) => {
    openRouter = resolve;
  });
let routerGate = routerLoaded();

vi.mock('./router-root', async () => {
  await routerGate;
  return { RouterRoot: () => <p>router page {window.location.pathname}</p> };
});
vi.mock('@/features/auth/login-page', () => ({
  LoginPage: () => (
    <form aria-label="login form">
      <input aria-label="Username" />
    </form>
  ),
}));
vi.mock('./app-loader', () => ({ loadApp: () => new Promise(() => undefined) }));
vi.mock('./viewer-alone', () => ({
  ViewerAlone: ({ id }: { id: string }) => <p>viewer alone {id}</p>,
}));
const prefetched = vi.hoisted(() => [] as unknown[][]);
vi.mock('@/providers/http-client', async (original) => ({
  ...(await original<typeof import('@/providers/http-client')>()),
  prefetchOperation: (...args: unknown[]) => prefetched.push(args),
}));

/** A fresh root (its lazy router not loaded yet) and the navigation it registers with. */
async function freshRoot() {
  vi.resetModules();
  const [{ Root, rootReady }, { navigateTo }] = await Promise.all([
    import('./root'),
    import('@/lib/navigation'),
  ]);
  return { Root, rootReady, navigateTo };
}

function jwt(claims: Record<string, unknown>): string {
  const enc = (value: unknown): string =>
    btoa(JSON.stringify(value)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${enc({ alg: 'HS256', typ: 'JWT' })}.${enc(claims)}.sig`;
}

describe('Root: leaving the login form', () => {
  beforeEach(() => {
    window.history.replaceState(null, '', '/login');
    routerGate = routerLoaded();
  });
  afterEach(() => {
    cleanup();
    clearToken();
    openRouter();
  });

  it('shows the page loader at once when an anonymous visitor follows a link', async () => {
    const { Root, navigateTo } = await freshRoot();
    render(<Root />);
    expect(screen.getByRole('form', { name: 'login form' })).toBeInTheDocument();
    act(() => navigateTo('/signup'));
    expect(window.location.pathname).toBe('/signup');
    expect(screen.queryByRole('form', { name: 'login form' })).not.toBeInTheDocument();
    expect(screen.getByTestId('page-loading')).toBeInTheDocument();
    await act(async () => {
      openRouter();
      await routerGate;
    });
    expect(await screen.findByText('router page /signup')).toBeInTheDocument();
  });

  it('keeps the form until the next page is ready after a sign-in', async () => {
    const { Root, navigateTo } = await freshRoot();
    render(<Root />);
    setToken(jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) + 600 }));
    act(() => navigateTo('/desktops'));
    expect(screen.getByRole('form', { name: 'login form' })).toBeInTheDocument();
    expect(screen.queryByTestId('page-loading')).not.toBeInTheDocument();
    await act(async () => {
      openRouter();
      await routerGate;
    });
    expect(await screen.findByText('router page /desktops')).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'login form' })).not.toBeInTheDocument();
  });
});

describe('Root: the reads of the first screen', () => {
  beforeEach(() => {
    prefetched.length = 0;
  });
  afterEach(() => {
    clearToken();
  });

  it("asks for the login form's reads as the entry evaluates, also for an anonymous guarded path", async () => {
    for (const path of ['/login', '/desktops']) {
      prefetched.length = 0;
      window.history.replaceState(null, '', path);
      await freshRoot();
      expect(prefetched).toEqual([['session.categories'], ['session.providers']]);
      expect(window.location.pathname).toBe('/login');
    }
  });

  it('asks for nothing of the login form when a session opens the application', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) + 600 }));
    window.history.replaceState(null, '', '/desktops');
    await freshRoot();
    expect(prefetched).toEqual([]);
    expect(window.location.pathname).toBe('/desktops');
  });
});

describe('Root: the VNC viewer page alone', () => {
  beforeEach(() => {
    routerGate = routerLoaded();
    prefetched.length = 0;
  });
  afterEach(() => {
    cleanup();
    clearToken();
    openRouter();
  });

  it('asks for the ticket at entry, draws the console without the application, hands over on leaving', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) + 600 }));
    window.history.replaceState(null, '', '/viewer/vnc/abc');
    const { Root, rootReady, navigateTo } = await freshRoot();
    expect(prefetched).toEqual([
      ['desktops.viewer', { params: { id: 'abc', viewer: 'browser-vnc' } }],
    ]);
    await rootReady();
    render(<Root />);
    expect(screen.getByText('viewer alone abc')).toBeInTheDocument();
    expect(screen.queryByTestId('page-loading')).not.toBeInTheDocument();
    act(() => navigateTo('/desktops'));
    await act(async () => {
      openRouter();
      await routerGate;
    });
    expect(await screen.findByText('router page /desktops')).toBeInTheDocument();
  });

  it('leaves a token due for renewal to the application', async () => {
    setToken(jwt({ kid: 'isardvdi', exp: Math.floor(Date.now() / 1000) + 10 }));
    window.history.replaceState(null, '', '/viewer/vnc/abc');
    const { Root } = await freshRoot();
    expect(prefetched).toEqual([]);
    render(<Root />);
    await act(async () => {
      openRouter();
      await routerGate;
    });
    expect(await screen.findByText('router page /viewer/vnc/abc')).toBeInTheDocument();
  });
});
