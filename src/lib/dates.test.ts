import { describe, expect, it } from 'vitest';
import {
  ceilToStep,
  floorToStep,
  formatDate,
  formatDay,
  formatDayWithWeekday,
  formatMonthYear,
  formatRelative,
  formatTime,
  formatWeekday,
  parseWireDate,
  toWireDate,
} from './dates';
import { formatGigabytes } from './sizes';

describe('dates', () => {
  const now = Date.UTC(2026, 10, 23, 12, 0, 0);

  it('formats epoch seconds and wire dates as YYYY-MM-DD HH:mm and nothing for missing values', () => {
    expect(formatDate(0)).toMatch(/^19(69|70)-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(formatDate('2026-11-23T10:00+0000')).toMatch(/^2026-11-23 \d{2}:00$/);
    expect(formatDate(null)).toBe('');
    expect(formatDate(false)).toBe('');
  });

  it('writes days as YYYY-MM-DD and times as HH:mm whatever the language', () => {
    const day = new Date(2026, 10, 28, 9, 5);
    expect(formatDay(day)).toBe('2026-11-28');
    expect(formatTime(day)).toBe('09:05');
    expect(formatDate(day.valueOf() / 1000)).toBe('2026-11-28 09:05');
  });

  it('names weekdays and months in the interface language passed in', () => {
    const day = new Date(2026, 10, 28, 9, 5);
    expect(formatDayWithWeekday(day, 'en')).toBe('Sat 2026-11-28');
    expect(formatDayWithWeekday(day, 'es')).toBe('sáb 2026-11-28');
    expect(formatDayWithWeekday(day, 'fr', 'long')).toBe('samedi 2026-11-28');
    expect(formatWeekday(day, 'zh_Hans', 'long')).toBe('星期六');
    expect(formatMonthYear(day, 'en')).toBe('November 2026');
    expect(formatMonthYear(day, 'es')).toBe('noviembre de 2026');
    expect(formatMonthYear(day, 'zh_Hans')).toBe('2026年11月');
  });

  it('says how long ago in the interface language, in the largest fitting unit', () => {
    expect(formatRelative(now / 1000 - 5 * 60, 'en', now)).toBe('5 minutes ago');
    expect(formatRelative(now / 1000 - 2 * 3600, 'en', now)).toBe('2 hours ago');
    expect(formatRelative(now / 1000 - 24 * 3600, 'en', now)).toBe('yesterday');
    expect(formatRelative(now / 1000 - 5 * 60, 'es', now)).toBe('hace 5 minutos');
    expect(formatRelative(undefined, 'en', now)).toBe('');
  });

  it('shows sizes in GB with one decimal, localised', () => {
    expect(formatGigabytes(1.5 * 1024 ** 3, 'en')).toBe('1.5 GB');
    expect(formatGigabytes(1.5 * 1024 ** 3, 'es')).toBe('1,5 GB');
    expect(formatGigabytes(null, 'en')).toBe('');
  });
});

describe('wire dates and time steps', () => {
  it('reads wire dates with either offset form and writes UTC to the minute', () => {
    const date = parseWireDate('2026-11-23T10:00+0000');
    expect(date?.toISOString()).toBe('2026-11-23T10:00:00.000Z');
    expect(parseWireDate('2026-11-23 10:00:30+01:00')?.toISOString()).toBe(
      '2026-11-23T09:00:30.000Z',
    );
    expect(parseWireDate('nope')).toBeNull();
    expect(parseWireDate(null)).toBeNull();
    expect(toWireDate(Date.UTC(2026, 10, 23, 10, 7, 45))).toBe('2026-11-23T10:07+0000');
  });

  it('rounds up and down to the step of the local clock', () => {
    const local = (h: number, m: number, s = 0) => new Date(2026, 10, 23, h, m, s);
    expect(ceilToStep(local(14, 7), 30)).toEqual(local(14, 30));
    expect(ceilToStep(local(14, 30), 30)).toEqual(local(14, 30));
    expect(ceilToStep(local(14, 30, 5), 30)).toEqual(local(15, 0));
    expect(ceilToStep(local(23, 50), 30)).toEqual(new Date(2026, 10, 24, 0, 0));
    expect(floorToStep(local(14, 59), 30)).toEqual(local(14, 30));
  });
});
