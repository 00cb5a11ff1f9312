/**
 * The first script of the login page drawn at build time, run before the page is drawn (a plain
 * script in its head, built on its own): it gives the page the colour scheme the SPA will show,
 * so a dark page is never drawn light first, and it holds back a login sent from the drawn form
 * before the SPA has taken it over (a native submission would put the password in the address);
 * the SPA sends it once it has (`static-login.ts`); if the SPA has still not taken the form over
 * some seconds later (its script did not arrive), the page says so. A browser that holds a session (a link from
 * another site does not send its SameSite=Strict cookies, so the server drew the login page) is
 * not shown the form: the SPA draws the application.
 */
import { STALLED_AFTER_MS, STALLED_MESSAGE_ID, STATIC_LOGIN_ID } from '@common/prerendered-login';
import { hasSessionCookie } from '@common/session-cookies';

/** Where Mantine's colour scheme manager keeps a person's choice (its default key). */
const SCHEME_KEY = 'mantine-color-scheme-value';

let scheme: string | null = null;
try {
  scheme = localStorage.getItem(SCHEME_KEY);
} catch {
  scheme = null; // storage unavailable: the system's scheme
}
if (scheme !== 'light' && scheme !== 'dark')
  scheme = window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
document.documentElement.setAttribute('data-mantine-color-scheme', scheme);

if (hasSessionCookie(document.cookie)) {
  const hide = document.createElement('style');
  hide.textContent = `#${STATIC_LOGIN_ID}{display:none}`;
  document.head.append(hide);
}

document.addEventListener(
  'submit',
  (event) => {
    const drawn = document.getElementById(STATIC_LOGIN_ID);
    if (!drawn || !(event.target instanceof Node) || !drawn.contains(event.target)) return;
    event.preventDefault();
    if (drawn.dataset.submitted === 'true') return;
    drawn.dataset.submitted = 'true';
    setTimeout(() => {
      const message = document.getElementById(STALLED_MESSAGE_ID);
      if (message && drawn.isConnected) message.style.display = '';
    }, STALLED_AFTER_MS);
  },
  true,
);
