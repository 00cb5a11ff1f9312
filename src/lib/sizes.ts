/** Sizes as the portal shows them: bytes in GB with one decimal, in the interface language. */
import { intlLocale } from '@/i18n/languages';

const GB = 1024 ** 3;

/** "1.5 GB" for a byte count (empty for missing values). */
export function formatGigabytes(bytes: number | null | undefined, language: string): string {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '';
  const value = new Intl.NumberFormat(intlLocale(language), {
    minimumFractionDigits: 1,
    maximumFractionDigits: 1,
  }).format(bytes / GB);
  return `${value} GB`;
}

/** "1.5 GB" for a size already in GB (empty for missing values). */
export function formatGigabyteValue(
  gigabytes: number | null | undefined,
  language: string,
): string {
  if (typeof gigabytes !== 'number' || !Number.isFinite(gigabytes)) return '';
  return formatGigabytes(gigabytes * GB, language);
}
