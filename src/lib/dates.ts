/**
 * Dates as the portal shows them: absolute times in the user's time zone as YYYY-MM-DD HH:mm, and
 * recent times as relative text ("5 minutes ago") in the interface language.
 */
import dayjs from 'dayjs';

export const DATE_FORMAT = 'YYYY-MM-DD HH:mm';

type DateInput = number | string | false | null | undefined;

function toDayjs(value: DateInput): dayjs.Dayjs | null {
  if (value === undefined || value === null || value === false || value === '') return null;
  const date = typeof value === 'number' ? dayjs.unix(value) : dayjs(value);
  return date.isValid() ? date : null;
}

/** Formats epoch seconds or a wire date; empty for missing values. */
export function formatDate(value: DateInput): string {
  return toDayjs(value)?.format(DATE_FORMAT) ?? '';
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 3600],
  ['month', 30 * 24 * 3600],
  ['week', 7 * 24 * 3600],
  ['day', 24 * 3600],
  ['hour', 3600],
  ['minute', 60],
  ['second', 1],
];

const formatters = new Map<string, Intl.RelativeTimeFormat>();

/** "5 minutes ago" / "in 2 hours" for epoch seconds or a wire date, in `language`; empty when missing. */
export function formatRelative(value: DateInput, language: string, now = Date.now()): string {
  const date = toDayjs(value);
  if (!date) return '';
  let formatter = formatters.get(language);
  if (!formatter) {
    formatter = new Intl.RelativeTimeFormat(language.replace('_', '-'), { numeric: 'auto' });
    formatters.set(language, formatter);
  }
  const seconds = Math.round((date.valueOf() - now) / 1000);
  for (const [unit, size] of UNITS)
    if (Math.abs(seconds) >= size || unit === 'second')
      return formatter.format(Math.round(seconds / size), unit);
  return '';
}

/** True when epoch seconds or a wire date lie before `now`; false for missing values. */
export function isPast(value: DateInput, now = Date.now()): boolean {
  const date = toDayjs(value);
  return date !== null && date.valueOf() < now;
}
