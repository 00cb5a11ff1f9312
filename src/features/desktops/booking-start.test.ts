import { describe, expect, it } from 'vitest';
import { constants } from '@/generated/constants';
import { endChoices, needsBookingNow, promptForFailure } from './booking-start';

const MINUTE = 60_000;
const STEP = constants.bookings.timeStepMinutes.value;

describe('endChoices', () => {
  const now = new Date(2026, 10, 23, 10, 7).valueOf();

  it('offers every 30-minute step from the first one after now up to the maximum', () => {
    const choices = endChoices(now, new Date(2026, 10, 23, 12, 15));
    expect(choices).toEqual([
      new Date(2026, 10, 23, 10, 30),
      new Date(2026, 10, 23, 11, 0),
      new Date(2026, 10, 23, 11, 30),
      new Date(2026, 10, 23, 12, 0),
    ]);
    for (const [index, choice] of choices.entries())
      if (index > 0)
        expect(choice.valueOf() - (choices[index - 1]?.valueOf() ?? 0)).toBe(STEP * MINUTE);
  });

  it('includes the maximum when it falls on a step and skips ends closer than the minimum length', () => {
    const close = new Date(2026, 10, 23, 10, 27).valueOf();
    const choices = endChoices(close, new Date(2026, 10, 23, 11, 30));
    // 10:30 is less than the minimum booking length after 10:27.
    expect(choices[0]).toEqual(new Date(2026, 10, 23, 11, 0));
    expect(choices.at(-1)).toEqual(new Date(2026, 10, 23, 11, 30));
  });

  it('stops at the start-now cap however far the maximum is', () => {
    const choices = endChoices(now, new Date(2026, 11, 31));
    const last = choices.at(-1)?.valueOf() ?? 0;
    expect(last - now).toBeLessThanOrEqual(constants.bookings.startNowMaxMinutes.value * MINUTE);
    expect(last - now).toBeGreaterThan(
      (constants.bookings.startNowMaxMinutes.value - STEP) * MINUTE,
    );
  });

  it('offers nothing without a maximum or with less time than the start-now minimum', () => {
    expect(endChoices(now, null)).toEqual([]);
    const short = new Date(now + (constants.bookings.startNowMinMinutes.value - 1) * MINUTE);
    expect(endChoices(now, short)).toEqual([]);
  });
});

describe('promptForFailure', () => {
  const start = { id: 'd1', action: 'start' };

  it('opens cannot-start-now for the GPU plan codes and start-now without a booking', () => {
    expect(
      promptForFailure('desktops.action', start, { description_code: 'current_plan_doesnt_match' }),
    ).toEqual({ desktopId: 'd1', kind: 'cannotStartNow', code: 'current_plan_doesnt_match' });
    expect(
      promptForFailure('desktops.action', start, { description_code: 'no_available_profile' })
        ?.kind,
    ).toBe('cannotStartNow');
    expect(
      promptForFailure('desktops.action', start, { description_code: 'desktop_not_booked' })?.kind,
    ).toBe('startNow');
  });

  it('leaves other calls and other codes alone', () => {
    expect(promptForFailure('desktops.action', start, { description_code: 'quota' })).toBeNull();
    expect(
      promptForFailure(
        'desktops.action',
        { id: 'd1', action: 'stop' },
        { description_code: 'no_available_profile' },
      ),
    ).toBeNull();
    expect(
      promptForFailure('media.delete', { id: 'd1' }, { description_code: 'no_available_profile' }),
    ).toBeNull();
  });
});

describe('needsBookingNow', () => {
  it('is true only for a desktop that needs a booking and has none in force', () => {
    const gpu = { vgpus: ['A16-2Q'] };
    expect(needsBookingNow({ reservables: gpu })).toBe(true);
    expect(needsBookingNow({ reservables: gpu, booking_id: 'b1' })).toBe(false);
    expect(needsBookingNow({ reservables: { vgpus: null } })).toBe(false);
    expect(needsBookingNow({})).toBe(false);
  });
});
