/** Supported locales (spec: ca de en eo es eu fr hi ko pl ru zh_Hans) and namespaces. */
export const LANGUAGES = [
  'ca',
  'de',
  'en',
  'eo',
  'es',
  'eu',
  'fr',
  'hi',
  'ko',
  'pl',
  'ru',
  'zh_Hans',
] as const;
export type Language = (typeof LANGUAGES)[number];
export const NAMESPACES = ['common', 'errors', 'resources'] as const;
export type Namespace = (typeof NAMESPACES)[number];
/** What the login page renders with; the other namespaces load while the user types. */
export const LOGIN_NAMESPACES: readonly Namespace[] = ['common'];
export const DEFAULT_LANGUAGE: Language = 'en';
export const LANGUAGE_STORAGE_KEY = 'language';

/** Native names shown by the language switcher (not translated on purpose). */
export const LANGUAGE_NAMES: Record<Language, string> = {
  ca: 'Català',
  de: 'Deutsch',
  en: 'English',
  eo: 'Esperanto',
  es: 'Español',
  eu: 'Euskara',
  fr: 'Français',
  hi: 'हिन्दी',
  ko: '한국어',
  pl: 'Polski',
  ru: 'Русский',
  zh_Hans: '简体中文',
};

/** Maps a browser tag (`zh-CN`, `es-ES`) to a supported locale, or null. */
export function matchLanguage(tag: string | null | undefined): Language | null {
  if (!tag) return null;
  const normalised = tag.replace('-', '_');
  if ((LANGUAGES as readonly string[]).includes(normalised)) return normalised as Language;
  const base = normalised.split('_')[0]?.toLowerCase();
  if (base === 'zh') return 'zh_Hans';
  return (LANGUAGES as readonly string[]).includes(base ?? '') ? (base as Language) : null;
}

/** The BCP 47 tag Intl formatters take for a locale code (`zh_Hans` -> `zh-Hans`). */
export function intlLocale(language: string): string {
  return language.replace(/_/g, '-');
}

/** Locale from localStorage, then the browser, then English. */
export function detectLanguage(): Language {
  let stored: string | null = null;
  try {
    stored = localStorage.getItem(LANGUAGE_STORAGE_KEY);
  } catch {
    stored = null;
  }
  const fromStorage = matchLanguage(stored);
  if (fromStorage) return fromStorage;
  const browser =
    typeof navigator !== 'undefined' ? (navigator.languages ?? [navigator.language]) : [];
  for (const tag of browser) {
    const found = matchLanguage(tag);
    if (found) return found;
  }
  return DEFAULT_LANGUAGE;
}
