/**
 * The booking rules that need no database: a user's priority and limits for a profile (from the
 * priority rules), and the checks of a booking's dates against them. Every refusal carries the
 * code and status of its rule in the booking schema (`x-constraints`), so the client that reads the
 * same table shows the same message.
 */
import { constants, constraints } from '../../../../src/generated/constants.ts';
import type { BookingRuleRow } from '../../platform/db/schema.ts';
import { ApiError, kindForStatus } from '../../platform/http/api-error.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;

export const BOOKING_STEP_MS = constants.bookings.timeStepMinutes.value * MINUTE_MS;
export const BOOKING_MIN_MS = constants.bookings.minDurationMinutes.value * MINUTE_MS;
export const START_NOW_MIN_MS = constants.bookings.startNowMinMinutes.value * MINUTE_MS;
export const START_NOW_MAX_MS = constants.bookings.startNowMaxMinutes.value * MINUTE_MS;
export const START_MIN_LEFT_MS = constants.bookings.startMinMinutes.value * MINUTE_MS;

type BookingRule = keyof (typeof constraints)['bookings'];

/** The refusal of a booking rule: its code and status from the schema. */
export function ruleError(
  rule: BookingRule,
  description: string,
  params: Record<string, unknown> | null = null,
): ApiError {
  const { code, status } = constraints.bookings[rule];
  return new ApiError(kindForStatus(status), description, code, params, { status });
}

/** Who a priority rule is matched against. */
export interface BookingSubject {
  userId: string;
  groupId: string;
  categoryId: string;
  role: string;
}

/** A user's priority and limits for the bookings of one profile. */
export interface BookingLimits {
  priority: number;
  /** minutes of advance notice */
  forbidTime: number;
  /** longest booking in minutes, null without limit */
  maxTime: number | null;
  /** bookings that have not ended, null without limit */
  maxItems: number | null;
  /** days from now a booking may end at the latest, null without limit */
  maxBookingDays: number | null;
}

/** No rule matched: no priority, no limits. */
export const NO_RULE: BookingLimits = {
  priority: 0,
  forbidTime: 0,
  maxTime: null,
  maxItems: null,
  maxBookingDays: null,
};

type Dimension = 'users' | 'groups' | 'categories' | 'roles';
const DIMENSIONS: readonly [Dimension, (s: BookingSubject) => string][] = [
  ['users', (s) => s.userId],
  ['groups', (s) => s.groupId],
  ['categories', (s) => s.categoryId],
  ['roles', (s) => s.role],
];

const listOf = (allowed: unknown, dimension: Dimension): string[] | null => {
  const list = (allowed as Partial<Record<Dimension, unknown>> | null)?.[dimension];
  return Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : null;
};

/**
 * The rule of a group that applies to the subject: the dimensions are tried in order (users,
 * groups, categories, roles) and, within one, the rules by decreasing priority; a list that is []
 * matches everyone, a missing or false one matches nobody.
 */
function matchIn(rules: readonly BookingRuleRow[], subject: BookingSubject) {
  const ordered = [...rules].sort((a, b) => b.priority - a.priority || a.id.localeCompare(b.id));
  for (const [dimension, valueOf] of DIMENSIONS) {
    const value = valueOf(subject);
    const found = ordered.find((rule) => {
      const list = listOf(rule.allowed, dimension);
      return list !== null && (list.length === 0 || list.includes(value));
    });
    if (found) return found;
  }
  return undefined;
}

/** The subject's limits for a profile whose rule group is `group` (then `default`, then none). */
export function limitsFor(
  rules: readonly BookingRuleRow[],
  group: string,
  subject: BookingSubject,
): BookingLimits {
  const rule =
    matchIn(
      rules.filter((r) => r.ruleId === group),
      subject,
    ) ??
    (group === 'default'
      ? undefined
      : matchIn(
          rules.filter((r) => r.ruleId === 'default'),
          subject,
        ));
  if (!rule) return NO_RULE;
  return {
    priority: rule.priority,
    forbidTime: rule.forbidTime,
    maxTime: rule.maxTime,
    maxItems: rule.maxItems,
    maxBookingDays: rule.maxBookingDays,
  };
}

/** The latest end a booking may have under these limits (null without limit). */
export function maxBookingDate(limits: BookingLimits, now: Date): Date | null {
  return limits.maxBookingDays === null
    ? null
    : new Date(now.getTime() + limits.maxBookingDays * DAY_MS);
}

/** A date on the wire: UTC ISO text. */
export const wireDate = (d: Date): string => d.toISOString();

/** Whether the instant falls on a step of the clock (whole 30 minutes, no seconds). */
export const onStep = (at: number, stepMs = BOOKING_STEP_MS): boolean => at % stepMs === 0;

/** The last step at or before `at`. */
export const stepFloor = (at: number, stepMs = BOOKING_STEP_MS): number =>
  Math.floor(at / stepMs) * stepMs;

export interface BookingDates {
  start: Date;
  end: Date;
}

/**
 * The checks of a booking's dates that need no other booking, in the order a user fixes them:
 * the end after the start (and in the future) and at least the minimum length, both on the time
 * steps (a start-now booking starts now: only its end), the start not in the past and with the
 * advance notice (unless it did not change, or starts now), the length and the end within the
 * limits.
 */
export function checkDates(
  dates: BookingDates,
  limits: BookingLimits,
  options: { now: Date; startsNow: boolean; startUnchanged: boolean; update: boolean },
): void {
  const { start, end } = dates;
  const u = options.update;
  const now = options.now.getTime();
  const length = end.getTime() - start.getTime();
  if (length <= 0 || end.getTime() <= now)
    throw ruleError(
      u ? 'updateEndAfterStart' : 'endAfterStart',
      length <= 0 ? 'The end must be after the start' : 'The end must be in the future',
    );
  if (length < BOOKING_MIN_MS)
    throw ruleError(
      u ? 'updateMinDuration' : 'minDuration',
      'A booking lasts at least the minimum time',
      { min_minutes: constants.bookings.minDurationMinutes.value },
    );
  const stepMinutes = constants.bookings.timeStepMinutes.value;
  if (
    !onStep(end.getTime()) ||
    (!options.startsNow && !options.startUnchanged && !onStep(start.getTime()))
  )
    throw ruleError(
      u ? 'updateTimeStep' : 'timeStep',
      `Bookings start and end on ${stepMinutes}-minute steps`,
      { step_minutes: stepMinutes },
    );
  if (!options.startsNow && !options.startUnchanged) {
    const earliest = now + limits.forbidTime * MINUTE_MS;
    if (start.getTime() < earliest)
      throw ruleError(
        u ? 'updateAdvanceNotice' : 'advanceNotice',
        limits.forbidTime > 0
          ? `A booking starts at least ${limits.forbidTime} minutes from now`
          : 'A booking can not start in the past',
        { forbid_time: limits.forbidTime, earliest: wireDate(new Date(earliest)) },
      );
  }
  if (limits.maxTime !== null && length > limits.maxTime * MINUTE_MS)
    throw ruleError(
      u ? 'updateMaxDuration' : 'maxDuration',
      `A booking lasts at most ${limits.maxTime} minutes`,
      { max_time: limits.maxTime },
    );
  const latest = maxBookingDate(limits, options.now);
  if (latest && end.getTime() > latest.getTime())
    throw ruleError(
      u ? 'updateMaxBookingDate' : 'maxBookingDate',
      'The booking ends after the latest booking date',
      { max_booking_date: wireDate(latest) },
    );
}
