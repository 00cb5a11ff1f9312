/** refine i18n provider backed by i18next. */
import type { I18nProvider } from '@refinedev/core';
import i18next from 'i18next';
import { changeLanguage } from '@/i18n/i18n';
import { matchLanguage } from '@/i18n/languages';

export const i18nProvider: I18nProvider = {
  translate: (key: string, options?: unknown, defaultMessage?: string) => {
    const opts = (options ?? {}) as Record<string, unknown>;
    return String(
      i18next.t(key, { ...(defaultMessage ? { defaultValue: defaultMessage } : {}), ...opts }),
    );
  },
  changeLocale: async (lang: string) => {
    const language = matchLanguage(lang);
    if (language) await changeLanguage(language);
  },
  getLocale: () => i18next.language,
};
