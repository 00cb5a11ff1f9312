/**
 * The booking form's checks mirror the generated x-constraints of the create and update bodies:
 * advance notice (priority forbid_time), length (max_time), count (max_items), minimum length,
 * end after start and no overlap except over available or overridable windows.
 */
import { describe, expect, it } from 'vitest';
import { constants, constraints } from '@/generated/constants';
import type { BookingPriority } from '@/generated/types';
import {
  STEP_MINUTES,
  bookingCodeParams,
  bookingFailures,
  bookingFieldOfCode,
  earliestStart,
  firstFreeSpan,
  proposedSpan,
} from './booking-rules';

const MINUTE = 60_000;
const now = new Date(2026, 10, 23, 10, 5).valueOf();
const at = (minutes: number) => new Date(now + minutes * MINUTE);
const priority: BookingPriority = { forbid_time: 60, max_time: 120, max_items: 2 };
const base = { now, priority, others: [], count: 0 };

describe('bookingFailures', () => {
  it('accepts a booking that keeps every limit', () => {
    expect(bookingFailures('BookingCreate', { start: at(60), end: at(120) }, base)).toEqual([]);
  });

  it('refuses a start inside the advance notice with the rule code', () => {
    const [failure] = bookingFailures('BookingCreate', { start: at(30), end: at(90) }, base);
    expect(failure).toMatchObject({
      field: 'start',
      code: constraints.bookings.advanceNotice.code,
      params: { minutes: 60 },
    });
  });

  it('refuses a booking longer than max_time and shorter than the minimum', () => {
    expect(
      bookingFailures('BookingCreate', { start: at(60), end: at(60 + 121) }, base)[0],
    ).toMatchObject({ field: 'end', code: constraints.bookings.maxDuration.code });
    const short = constants.bookings.minDurationMinutes.value - 1;
    expect(
      bookingFailures('BookingCreate', { start: at(60), end: at(60 + short) }, base)[0],
    ).toMatchObject({ field: 'end', code: constraints.bookings.minDuration.code });
  });

  it('refuses an end before the start', () => {
    expect(bookingFailures('BookingCreate', { start: at(90), end: at(60) }, base)[0]?.code).toBe(
      constraints.bookings.endAfterStart.code,
    );
    expect(bookingFailures('BookingUpdate', { start: at(90), end: at(60) }, base)[0]?.code).toBe(
      constraints.bookings.updateEndAfterStart.code,
    );
  });

  it('refuses one booking more than max_items', () => {
    expect(
      bookingFailures('BookingCreate', { start: at(60), end: at(90) }, { ...base, count: 2 }),
    ).toEqual([
      expect.objectContaining({ field: 'element_id', code: constraints.bookings.maxItems.code }),
    ]);
  });

  it('allows overlapping available and overridable windows but not bookings or unavailable time', () => {
    const others = [
      { start: at(0), end: at(600), event_type: 'available' },
      { start: at(0), end: at(600), event_type: 'overridable' },
    ];
    const span = { start: at(60), end: at(90) };
    expect(bookingFailures('BookingCreate', span, { ...base, others })).toEqual([]);
    for (const type of ['event', 'unavailable'])
      expect(
        bookingFailures('BookingCreate', span, {
          ...base,
          others: [...others, { id: 'x', start: at(80), end: at(100), event_type: type }],
        })[0]?.code,
      ).toBe(constraints.bookings.noOverlap.code);
  });

  it('ignores the edited booking itself and checks only the update rules when editing', () => {
    const others = [{ id: 'b1', start: at(60), end: at(90), event_type: 'event' }];
    expect(
      bookingFailures(
        'BookingUpdate',
        { start: at(70), end: at(100) },
        { ...base, others, ignoreId: 'b1' },
      ),
    ).toEqual([]);
    // An edit that keeps its start is not held to the advance notice.
    expect(
      bookingFailures(
        'BookingUpdate',
        { start: at(0), end: at(90) },
        { ...base, others: [], skip: ['updateAdvanceNotice'] },
      ),
    ).toEqual([]);
  });
});

describe('server codes', () => {
  it('land on the field their rule names, with the figures their message needs', () => {
    expect(bookingFieldOfCode('BookingCreate', constraints.bookings.noOverlap.code)).toBe('start');
    expect(bookingFieldOfCode('BookingCreate', 'max_time_reached')).toBe('end');
    expect(bookingFieldOfCode('BookingCreate', 'desktop_not_booked')).toBeNull();
    expect(bookingCodeParams('BookingCreate', 'max_time_reached', priority)).toEqual({
      minutes: 120,
      limit: 120,
    });
    expect(bookingCodeParams('BookingCreate', 'no_such_code', priority)).toEqual({});
  });
});

describe('new booking spans', () => {
  it('start on the first step after the advance notice', () => {
    const start = earliestStart(now, priority);
    expect(start).toEqual(new Date(2026, 10, 23, 11, 30));
    expect(earliestStart(now, null)).toEqual(new Date(2026, 10, 23, 10, 30));
  });

  it('keep a time-grid selection and turn a whole day into one step from the earliest start', () => {
    const selection = { start: at(60), end: at(120), allDay: false };
    expect(proposedSpan(selection, now, priority)).toEqual({ start: at(60), end: at(120) });
    const today = new Date(2026, 10, 23);
    const span = proposedSpan(
      { start: today, end: new Date(2026, 10, 24), allDay: true },
      now,
      priority,
    );
    expect(span.start).toEqual(new Date(2026, 10, 23, 11, 30));
    expect(span.end.valueOf() - span.start.valueOf()).toBe(STEP_MINUTES * MINUTE);
  });
});

describe('firstFreeSpan', () => {
  const step = STEP_MINUTES * MINUTE;
  const start = new Date(2026, 10, 23, 10, 30);
  const event = (from: number, to: number, event_type = 'event') => ({
    id: `${event_type}-${from}`,
    start: new Date(start.valueOf() + from * MINUTE),
    end: new Date(start.valueOf() + to * MINUTE),
    event_type,
  });

  it('keeps the first step when nothing is booked there', () => {
    expect(firstFreeSpan(start, [event(60, 90)])).toEqual({
      start,
      end: new Date(start.valueOf() + step),
    });
  });

  it('moves past bookings and full windows, to the first step after them', () => {
    const span = firstFreeSpan(start, [
      event(0, 45),
      event(60, 90, 'unavailable'),
      event(-600, 6000, 'available'),
      event(-600, 6000, 'overridable'),
    ]);
    expect(span.start).toEqual(new Date(start.valueOf() + 90 * MINUTE));
    expect(span.end).toEqual(new Date(start.valueOf() + 90 * MINUTE + step));
  });
});
