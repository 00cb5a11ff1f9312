import { describe, expect, it } from 'vitest';
import { resourceOf } from '@/generated/resources';
import { HOME_PATH } from '@/lib/paths';
import { LOGIN_PATH } from '@/providers/auth-provider';
import { decideEntry, isGuardedPath, matchesRoute, viewerAloneId } from './entry-decision';

const accountPages = Object.values(resourceOf('session')?.meta.extraRoutes ?? {});

describe('the decision before the application loads', () => {
  it('sends an anonymous visit to the index or a guarded route to the login page', () => {
    expect(decideEntry('/', false)).toBe(LOGIN_PATH);
    expect(decideEntry(HOME_PATH, false)).toBe(LOGIN_PATH);
    expect(decideEntry('/deployment/abc/edit', false)).toBe(LOGIN_PATH);
  });

  it('matches a path against static and parameter segments', () => {
    expect(matchesRoute('/deployment/:id', '/deployment/abc')).toBe(true);
    expect(matchesRoute('/deployment/:id', '/deployment/abc/')).toBe(true);
    expect(matchesRoute('/deployment/:id', '/deployment')).toBe(false);
    expect(matchesRoute('/deployment/:id', '/deployment/abc/edit')).toBe(false);
    expect(matchesRoute('/', '/')).toBe(true);
    expect(matchesRoute('/', '/desktops')).toBe(false);
  });

  it('loads the application with a stored session', () => {
    expect(decideEntry('/', true)).toBeNull();
    expect(decideEntry(HOME_PATH, true)).toBeNull();
  });

  it('loads the application for pages without login: account pages, errors, unknown paths', () => {
    expect(accountPages.length).toBeGreaterThan(0);
    for (const page of accountPages) expect(decideEntry(page, false)).toBeNull();
    expect(decideEntry('/error/500', false)).toBeNull();
    expect(decideEntry('/no/such/page', false)).toBeNull();
    expect(isGuardedPath(`${HOME_PATH}/no/such/page`)).toBe(false);
  });

  it('shows the VNC viewer page alone with a login token not due for renewal, only there', () => {
    const now = 1_000_000_000_000;
    const login = { type: 'login' as const, exp: now / 1000 + 300 };
    expect(viewerAloneId('/viewer/vnc/abc', login, now)).toBe('abc');
    expect(viewerAloneId('/viewer/vnc/abc/', login, now)).toBe('abc');
    expect(viewerAloneId('/viewer/vnc', login, now)).toBeNull();
    expect(viewerAloneId(HOME_PATH, login, now)).toBeNull();
    expect(viewerAloneId('/viewer/vnc/abc', null, now)).toBeNull();
    expect(viewerAloneId('/viewer/vnc/abc', { ...login, exp: now / 1000 + 10 }, now)).toBeNull();
    expect(
      viewerAloneId(
        '/viewer/vnc/abc',
        { ...login, type: 'disclaimer-acknowledgement-required' },
        now,
      ),
    ).toBeNull();
  });
});
