/**
 * Booking records as calendar events (pure): the item's bookings (`event`) become events, the
 * plan's availability windows (available, overridable, unavailable) become the shading behind
 * them, and the month view shades each day by the best window it holds. Records of another item
 * (a socket event for a booking elsewhere) are left out of an item's calendar.
 */
import type { Booking, BookingEventType } from '@/generated/types';
import type { CalendarEvent, DayShade } from '@/components/calendar/portal-calendar';
import { formatDay, parseWireDate } from '@/lib/dates';
import type { OtherEvent } from '@/lib/time-rules';

export interface BookingEventTexts {
  /** Title of a booking without one. */
  untitled: string;
  /** Title of an availability window. */
  window: (type: BookingEventType, units: number | undefined) => string;
  /** Accessible name of an event. */
  label: (title: string, start: Date, end: Date) => string;
}

export interface BookingCalendar {
  events: CalendarEvent<Booking>[];
  background: CalendarEvent<Booking>[];
  /** Everything a new booking must not overlap (by `event_type`), with ids. */
  others: OtherEvent[];
}

/** Splits the records into events and background windows; `itemId` keeps one item's. */
export function bookingCalendar(
  records: readonly Booking[],
  texts: BookingEventTexts,
  itemId?: string,
): BookingCalendar {
  const events: CalendarEvent<Booking>[] = [];
  const background: CalendarEvent<Booking>[] = [];
  const others: OtherEvent[] = [];
  records.forEach((record, index) => {
    const start = parseWireDate(record.start);
    const end = parseWireDate(record.end);
    if (!start || !end) return;
    if (record.event_type === 'event') {
      if (itemId !== undefined && record.item_id !== undefined && record.item_id !== itemId) return;
      const title = record.title?.trim() || texts.untitled;
      events.push({
        key: record.id ?? `event-${index}`,
        title,
        label: texts.label(title, start, end),
        start,
        end,
        kind: 'event',
        record,
      });
    } else {
      const title = texts.window(record.event_type, record.units);
      background.push({
        key: `${record.event_type}-${record.start}-${index}`,
        title,
        label: texts.label(title, start, end),
        start,
        end,
        kind: record.event_type,
        record,
      });
    }
    others.push({ id: record.id, start, end, event_type: record.event_type });
  });
  return { events, background, others };
}

const SHADE_RANK: Readonly<Record<DayShade, number>> = {
  unavailable: 1,
  overridable: 2,
  available: 3,
};

/**
 * The shading of each day (YYYY-MM-DD, local) between `from` and `to`: the best availability a
 * window gives it (available over overridable over unavailable).
 */
export function dayShades(
  windows: readonly CalendarEvent<Booking>[],
  from: Date,
  to: Date,
): Map<string, DayShade> {
  const shades = new Map<string, DayShade>();
  for (const window of windows) {
    const kind = window.kind;
    if (kind !== 'available' && kind !== 'overridable' && kind !== 'unavailable') continue;
    const first = new Date(Math.max(window.start.valueOf(), from.valueOf()));
    const last = new Date(Math.min(window.end.valueOf() - 1, to.valueOf()));
    const day = new Date(first.getFullYear(), first.getMonth(), first.getDate());
    while (day.valueOf() <= last.valueOf()) {
      const key = formatDay(day);
      const current = shades.get(key);
      if (!current || SHADE_RANK[current] < SHADE_RANK[kind]) shades.set(key, kind);
      day.setDate(day.getDate() + 1);
    }
  }
  return shades;
}
