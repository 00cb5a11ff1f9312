/**
 * The login page drawn at build time: the build writes one page per offered language (the SPA's
 * index.html with the login form already in it), the server answers `/login` with the one of the
 * visitor's language, and the SPA takes the form over when its script has evaluated. The language
 * cookie carries a person's chosen language to the server, which cannot read the SPA's storage.
 */

/** The cookie the SPA writes with the language it shows (a person's choice or the browser's). */
export const LANGUAGE_COOKIE = 'language';

/** The element holding the form drawn at build time, beside the SPA's root. */
export const STATIC_LOGIN_ID = 'static-login';

/**
 * The prerendered login page of a language, relative to the built SPA's directory; with the
 * category choice (a portal with several categories), whose options the server fills in.
 */
export function prerenderedLoginFile(language: string, withCategories = false): string {
  return `prerendered/login-${language}${withCategories ? '-categories' : ''}.html`;
}

/** Where the category choice of a drawn login page takes its options (the server's categories). */
export const CATEGORY_OPTIONS = '<!--category-options-->';

/**
 * The drawn page's message for a login held while the SPA's script never arrives (a broken
 * network): hidden until its first script shows it, `STALLED_AFTER_MS` after the login was sent.
 */
export const STALLED_MESSAGE_ID = 'static-login-stalled';
export const STALLED_AFTER_MS = 8_000;
