/**
 * Dates as the portal shows them, the one place that formats them: absolute times in the user's
 * time zone as YYYY-MM-DD HH:mm (a day alone as YYYY-MM-DD, a time alone as 24-hour HH:mm), and
 * every word (weekday and month names, "5 minutes ago") in the interface language, the i18next
 * language passed in, never the browser's.
 */
import dayjs from 'dayjs';
import { intlLocale } from '@/i18n/languages';
import { formatDay } from './times-of-day';

export { formatDay, formatTime, formatTimeWithSeconds } from './times-of-day';

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

const nameFormats = new Map<string, Intl.DateTimeFormat>();

function names(language: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const id = `${language} ${JSON.stringify(options)}`;
  let format = nameFormats.get(id);
  if (!format) {
    format = new Intl.DateTimeFormat(intlLocale(language), options);
    nameFormats.set(id, format);
  }
  return format;
}

/** The weekday's name in `language` ("Sat", "Saturday"; "sáb", "sábado" in es). */
export function formatWeekday(date: Date, language: string, width: 'short' | 'long'): string {
  return names(language, { weekday: width }).format(date);
}

/** The month and year in `language` ("November 2026"; "noviembre de 2026" in es). */
export function formatMonthYear(date: Date, language: string): string {
  return names(language, { month: 'long', year: 'numeric' }).format(date);
}

/** A local day with its weekday name in `language` first ("Sat 2026-11-28"). */
export function formatDayWithWeekday(
  date: Date,
  language: string,
  width: 'short' | 'long' = 'short',
): string {
  return `${formatWeekday(date, language, width)} ${formatDay(date)}`;
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
    formatter = new Intl.RelativeTimeFormat(intlLocale(language), { numeric: 'auto' });
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

/**
 * A wire date (UTC with an offset, `YYYY-MM-DDTHH:mm+0000`, seconds and `+00:00` accepted) or
 * epoch milliseconds as a Date; null for missing or unreadable values.
 */
export function parseWireDate(value: string | number | Date | null | undefined): Date | null {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return Number.isNaN(value.valueOf()) ? null : value;
  if (typeof value === 'number') return new Date(value);
  // `+0000` is not an ISO offset for every engine: write it `+00:00`.
  const iso = value
    .trim()
    .replace(' ', 'T')
    .replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const date = new Date(iso);
  return Number.isNaN(date.valueOf()) ? null : date;
}

/** A moment as the wire carries it: UTC, to the minute, `YYYY-MM-DDTHH:mm+0000`. */
export function toWireDate(value: Date | number): string {
  return `${new Date(value).toISOString().slice(0, 16)}+0000`;
}

/**
 * The first moment at or after `value` that falls on a `minutes` step of the local clock
 * (14:07 with 30 -> 14:30; 14:30 stays), seconds dropped.
 */
export function ceilToStep(value: Date | number, minutes: number): Date {
  const date = new Date(value);
  const exact = date.getSeconds() === 0 && date.getMilliseconds() === 0;
  date.setSeconds(0, 0);
  const over = (date.getHours() * 60 + date.getMinutes()) % minutes;
  if (over !== 0 || !exact)
    date.setMinutes(date.getMinutes() + (over === 0 ? minutes : minutes - over));
  return date;
}

/** The last moment at or before `value` that falls on a `minutes` step of the local clock. */
export function floorToStep(value: Date | number, minutes: number): Date {
  const date = new Date(value);
  date.setSeconds(0, 0);
  date.setMinutes(date.getMinutes() - ((date.getHours() * 60 + date.getMinutes()) % minutes));
  return date;
}
