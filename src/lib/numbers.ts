/** Numbers as the portal shows them: grouped and with the decimal sign of the interface language. */
import { intlLocale } from '@/i18n/languages';

const formats = new Map<string, Intl.NumberFormat>();

/** "1,234.5" in en, "1.234,5" in de: `value` in `language` (the i18next language, not the browser's). */
export function formatNumber(value: number, language: string): string {
  let format = formats.get(language);
  if (!format) {
    format = new Intl.NumberFormat(intlLocale(language));
    formats.set(language, format);
  }
  return format.format(value);
}
