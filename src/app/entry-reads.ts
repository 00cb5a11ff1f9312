/**
 * What a visit shows first, decided as the entry's first module evaluates, and the reads that
 * screen needs, started at once: the rest of the login chunk (React, Mantine, the form) takes a
 * hundred milliseconds and more to evaluate on a slow machine, and the catalogues, the login
 * form's two public reads (categories, sign-in providers) or the console's ticket would otherwise
 * leave only after it, one round trip after another. The screens take the answers where they ask
 * (`prefetchOperation`, the browser's module map for the catalogues).
 */
import { preloadCatalogues } from '@/i18n/catalogues';
import { detectLanguage, LOGIN_NAMESPACES } from '@/i18n/languages';
import { decodeToken, getToken, hasStoredSession } from '@/lib/token';
import { takeStartMark } from '@/lib/viewer-start';
import { prefetchOperation } from '@/providers/http-client';
import { LOGIN_PATH } from '@/providers/auth-provider';
import { decideEntry, viewerAloneId } from './guard/entry-decision';

/**
 * The screen this visit starts on without the router: the login form (the login path, or an
 * anonymous visit to a guarded path, whose address becomes the login path), the VNC viewer of a
 * desktop (a usable session on its page), else the application.
 */
export type EntryScreen = { kind: 'login' } | { kind: 'viewer'; id: string } | { kind: 'app' };

function decide(): EntryScreen {
  const { pathname } = window.location;
  if (pathname === LOGIN_PATH) return { kind: 'login' };
  if (decideEntry(pathname, hasStoredSession()) === LOGIN_PATH) {
    window.history.replaceState(null, '', LOGIN_PATH);
    return { kind: 'login' };
  }
  const id = viewerAloneId(pathname, decodeToken(getToken()), Date.now());
  return id ? { kind: 'viewer', id } : { kind: 'app' };
}

function startReads(screen: EntryScreen): void {
  preloadCatalogues(detectLanguage(), LOGIN_NAMESPACES);
  if (screen.kind === 'login') {
    prefetchOperation('session.categories');
    prefetchOperation('session.providers');
  } else if (screen.kind === 'viewer') {
    takeStartMark();
    const ticket = prefetchOperation('desktops.viewer', {
      params: { id: screen.id, viewer: 'browser-vnc' },
    });
    // The console's socket opens as the ticket comes, while the page loads and renders (a small
    // chunk of its own: the login chunk does not carry it).
    if (ticket)
      void Promise.all([ticket, import('@/features/viewers/console-channel')]).then(
        ([answer, channel]) => channel.preopenConsole(answer),
        () => undefined, // the console asks again and shows the failure
      );
    // the page's chunk (noVNC and its start-up checks); root renders it once it is there
    import('./viewer-alone').catch(() => undefined);
  }
}

function enter(): EntryScreen {
  if (typeof window === 'undefined') return { kind: 'app' };
  const screen = decide();
  startReads(screen);
  return screen;
}

export const entryScreen = enter();
