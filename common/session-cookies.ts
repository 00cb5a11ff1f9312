/**
 * The cookies a browser's session is kept in, and whether a Cookie header (the server's request,
 * or `document.cookie`) carries one: the SPA's guard, the server's choice of the login page drawn
 * at build time and that page's first script read the same rule.
 */

/** The cookie the SPA keeps its session token in (readable by its script). */
export const SESSION_COOKIE = 'vdiportal_session';
/** The cookie a login answers its token in too (a provider's sign-in leaves only this one). */
export const AUTHORIZATION_COOKIE = 'authorization';

/** Whether a Cookie header carries a session (either session cookie, with a value). */
export function hasSessionCookie(cookieHeader: string | undefined): boolean {
  return (cookieHeader ?? '').split(';').some((part) => {
    const [name, ...value] = part.trim().split('=');
    return (name === SESSION_COOKIE || name === AUTHORIZATION_COOKIE) && value.join('=') !== '';
  });
}
