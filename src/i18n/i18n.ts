/**
 * i18next set-up. Catalogues live in `locales/<code>/<namespace>.json` and are loaded lazily, one
 * chunk per file, so the login route only fetches the current language and English, the fallback
 * of every key a locale lacks.
 */
import i18next, { type BackendModule, type ReadCallback } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { LANGUAGE_COOKIE } from '@common/prerendered-login';
import { loadCatalogue } from './catalogues';
import {
  DEFAULT_LANGUAGE,
  LANGUAGE_STORAGE_KEY,
  LANGUAGES,
  NAMESPACES,
  detectLanguage,
  type Language,
  type Namespace,
} from './languages';

const lazyBackend: BackendModule = {
  type: 'backend',
  init: () => undefined,
  read: (language: string, namespace: string, callback: ReadCallback) => {
    const loading = loadCatalogue(language, namespace);
    if (!loading) {
      callback(null, {});
      return;
    }
    loading.then(
      (module) => callback(null, module.default),
      (error: unknown) => callback(error as Error, null),
    );
  },
};

/**
 * Shows `language` on the document and tells the server (which draws the login page in the
 * visitor's language and cannot read this page's storage) through the language cookie.
 */
function showLanguage(language: Language): void {
  document.documentElement.lang = language.replace('_', '-');
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  document.cookie = `${LANGUAGE_COOKIE}=${language}; Path=/; Max-Age=31536000; SameSite=Lax${secure}`;
}

/**
 * Initialises i18next with the detected language; resolves once the catalogues of `namespaces`
 * are loaded (the others load with `loadAllNamespaces`).
 */
export async function initI18n(
  language: Language = detectLanguage(),
  namespaces: readonly Namespace[] = NAMESPACES,
): Promise<typeof i18next> {
  if (!i18next.isInitialized) {
    await i18next
      .use(lazyBackend)
      .use(initReactI18next)
      .init({
        lng: language,
        fallbackLng: DEFAULT_LANGUAGE,
        supportedLngs: [...LANGUAGES],
        load: 'currentOnly',
        ns: [...namespaces],
        defaultNS: 'common',
        interpolation: { escapeValue: false },
        // A key a locale lacks, or holds empty, shows the English text; a key English lacks too
        // shows the key itself (never a label made up from it), and the catalogue tests fail.
        returnNull: false,
        returnEmptyString: false,
        react: { useSuspense: false },
      });
  }
  showLanguage(language);
  return i18next;
}

/** Loads the catalogues of every namespace in the current language (a no-op once loaded). */
export function loadAllNamespaces(): Promise<void> {
  return i18next.loadNamespaces([...NAMESPACES]);
}

/** Switches the language and remembers it (survives reload). */
export async function changeLanguage(language: Language): Promise<void> {
  try {
    localStorage.setItem(LANGUAGE_STORAGE_KEY, language);
  } catch {
    // storage unavailable: the choice lasts for this page only
  }
  await i18next.changeLanguage(language);
  showLanguage(language);
}

export { i18next };
