/**
 * The dayjs locale Mantine's date pickers name months and weekdays with: the interface language's,
 * loaded the first time it is needed (English is built into dayjs and shows meanwhile).
 */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { DEFAULT_LANGUAGE, matchLanguage, type Language } from '@/i18n/languages';

interface DayjsLocale {
  name: string;
  load: (() => Promise<unknown>) | null;
}

const DAYJS_LOCALES: Record<Language, DayjsLocale> = {
  ca: { name: 'ca', load: () => import('dayjs/locale/ca') },
  de: { name: 'de', load: () => import('dayjs/locale/de') },
  en: { name: 'en', load: null },
  eo: { name: 'eo', load: () => import('dayjs/locale/eo') },
  es: { name: 'es', load: () => import('dayjs/locale/es') },
  eu: { name: 'eu', load: () => import('dayjs/locale/eu') },
  fr: { name: 'fr', load: () => import('dayjs/locale/fr') },
  hi: { name: 'hi', load: () => import('dayjs/locale/hi') },
  ko: { name: 'ko', load: () => import('dayjs/locale/ko') },
  pl: { name: 'pl', load: () => import('dayjs/locale/pl') },
  ru: { name: 'ru', load: () => import('dayjs/locale/ru') },
  zh_Hans: { name: 'zh-cn', load: () => import('dayjs/locale/zh-cn') },
};

const loaded = new Set<string>(['en']);

/** Loads the dayjs locale of `language`; resolves to its name (English when it cannot load). */
export async function loadDayjsLocale(language: string): Promise<string> {
  const { name, load } = DAYJS_LOCALES[matchLanguage(language) ?? DEFAULT_LANGUAGE];
  if (loaded.has(name) || !load) return loaded.has(name) ? name : 'en';
  try {
    await load();
    loaded.add(name);
    return name;
  } catch {
    return 'en';
  }
}

/** The dayjs locale name for the date pickers in the current interface language. */
export function useDatePickerLocale(): string {
  const { i18n } = useTranslation();
  const { name } = DAYJS_LOCALES[matchLanguage(i18n.language) ?? DEFAULT_LANGUAGE];
  const [, setLoads] = useState(0);
  useEffect(() => {
    if (loaded.has(name)) return undefined;
    let live = true;
    void loadDayjsLocale(i18n.language).then(() => {
      if (live) setLoads((count) => count + 1);
    });
    return () => {
      live = false;
    };
  }, [i18n.language, name]);
  return loaded.has(name) ? name : 'en';
}
