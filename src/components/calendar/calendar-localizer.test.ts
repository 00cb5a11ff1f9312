import { describe, expect, it } from 'vitest';
import type {
  DateLocalizer,
  DateRangeFormatFunction,
  DateFormatFunction,
} from 'react-big-calendar';
import { calendarFormats } from './calendar-localizer';

const culture = undefined;
const localizer = {} as DateLocalizer;

function day(format: unknown, date: Date): string {
  return (format as DateFormatFunction)(date, culture, localizer);
}
function range(format: unknown, start: Date, end: Date): string {
  return (format as DateRangeFormatFunction)({ start, end }, culture, localizer);
}

describe('calendar formats', () => {
  const start = new Date(2026, 10, 28, 9, 0);
  const end = new Date(2026, 11, 4, 17, 30);

  it('write every day as YYYY-MM-DD, with weekday names in the interface language', () => {
    const en = calendarFormats('en');
    expect(day(en.agendaDateFormat, start)).toBe('Sat 2026-11-28');
    expect(range(en.agendaHeaderFormat, start, end)).toBe('2026-11-28 – 2026-12-04');
    expect(range(en.dayRangeHeaderFormat, start, end)).toBe('2026-11-28 – 2026-12-04');
    expect(day(en.dayHeaderFormat, start)).toBe('Saturday 2026-11-28');
    expect(day(en.monthHeaderFormat, start)).toBe('November 2026');

    const de = calendarFormats('de');
    expect(day(de.agendaDateFormat, start)).toBe('Sa 2026-11-28');
    expect(day(de.dayHeaderFormat, start)).toBe('Samstag 2026-11-28');
    expect(day(de.weekdayFormat, start)).toBe('Sa');
    expect(day(de.monthHeaderFormat, start)).toBe('November 2026');
  });

  it('write times as 24-hour HH:mm in every language', () => {
    for (const language of ['en', 'ko']) {
      const formats = calendarFormats(language);
      expect(range(formats.eventTimeRangeFormat, start, end)).toBe('09:00 – 17:30');
      expect(day(formats.timeGutterFormat, end)).toBe('17:30');
    }
  });
});
