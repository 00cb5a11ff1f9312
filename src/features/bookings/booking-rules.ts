/**
 * The booking form's checks before it sends: the cross-field rules the schema declares for the
 * create and update bodies (`constraints.bookings`, with the limits of the item's priority), and
 * where a server code lands (the field its rule names, else the form's alert). Also where a new
 * booking starts by default: the first step after the advance notice.
 */
import { constants, constraints } from '@/generated/constants';
import type { BookingPriority } from '@/generated/types';
import { ceilToStep } from '@/lib/dates';
import {
  checkTimeRules,
  fieldOfCode,
  rulesFor,
  type OtherEvent,
  type TimeRule,
  type TimeRuleFailure,
} from '@/lib/time-rules';

const RULES: Readonly<Record<string, TimeRule>> = constraints.bookings;

export type BookingFormType = 'BookingCreate' | 'BookingUpdate';

/** Minutes between time choices (start-now and calendar). */
export const STEP_MINUTES = constants.bookings.timeStepMinutes.value;

export interface BookingCheckContext {
  now: number;
  priority: BookingPriority | null | undefined;
  /** The item's other events and windows. */
  others: readonly OtherEvent[];
  /** The edited booking (its own span does not overlap itself). */
  ignoreId?: string | undefined;
  /** The caller's future bookings of the item. */
  count: number;
  /** Rules not checked (the advance notice of an edit that keeps its start). */
  skip?: readonly string[];
}

function limitsOf(
  priority: BookingPriority | null | undefined,
): Readonly<Record<string, number | null>> {
  return {
    forbid_time: priority?.forbid_time ?? null,
    max_time: priority?.max_time ?? null,
    max_items: priority?.max_items ?? null,
  };
}

/** Every rule failure of the form's values. */
export function bookingFailures(
  form: BookingFormType,
  values: { start: Date | null; end: Date | null },
  context: BookingCheckContext,
): TimeRuleFailure[] {
  return checkTimeRules(RULES, form, values, {
    now: context.now,
    limits: limitsOf(context.priority),
    others: context.others,
    ignoreId: context.ignoreId,
    count: context.count,
    ...(context.skip ? { skip: context.skip } : {}),
  });
}

/** The field a server code is shown on (null: the form's alert). */
export function bookingFieldOfCode(form: BookingFormType, code: string | null | undefined) {
  return fieldOfCode(RULES, form, code);
}

/** The figures a code's message may name (the rule's value or its limit), for server codes. */
export function bookingCodeParams(
  form: BookingFormType,
  code: string | null | undefined,
  priority: BookingPriority | null | undefined,
): Record<string, unknown> {
  const found = rulesFor(RULES, form).find(([, rule]) => rule.code === code);
  if (!found) return {};
  const [, rule] = found;
  if (rule.value !== undefined) return { minutes: rule.value };
  const limit = rule.limit ? limitsOf(priority)[rule.limit.field] : null;
  return typeof limit === 'number' ? { minutes: limit, limit } : {};
}

/** The earliest start a new booking may have: now plus the advance notice, on the step grid. */
export function earliestStart(now: number, priority: BookingPriority | null | undefined): Date {
  return ceilToStep(now + (priority?.forbid_time ?? 0) * 60_000, STEP_MINUTES);
}

/**
 * The first span of one step from `from` on that the create body's overlap rules allow: a
 * clash (a booking, a window without a free unit) moves it to the first step after the clash.
 */
export function firstFreeSpan(
  from: Date,
  others: readonly OtherEvent[],
): { start: Date; end: Date } {
  const overlapRules = rulesFor(RULES, 'BookingCreate').filter(
    ([, rule]) => rule.kind === 'noOverlap',
  );
  const blocking = others.filter((other) =>
    overlapRules.some(
      ([, rule]) => !(rule.exceptField && rule.except?.includes(String(other[rule.exceptField]))),
    ),
  );
  const length = STEP_MINUTES * 60_000;
  let start = from;
  // Each clash is passed once and never met again, so this ends.
  for (;;) {
    const end = new Date(start.valueOf() + length);
    const clash = blocking.find(
      (other) => other.start.valueOf() < end.valueOf() && other.end.valueOf() > start.valueOf(),
    );
    if (!clash) return { start, end };
    start = ceilToStep(clash.end, STEP_MINUTES);
  }
}

/**
 * The span a calendar selection proposes: a time-grid selection as it is; a whole day (month
 * view) from the later of its start and the earliest start, one step long.
 */
export function proposedSpan(
  selection: { start: Date; end: Date; allDay: boolean },
  now: number,
  priority: BookingPriority | null | undefined,
): { start: Date; end: Date } {
  if (!selection.allDay) return { start: selection.start, end: selection.end };
  const earliest = earliestStart(now, priority);
  const start = selection.start < earliest ? earliest : selection.start;
  return { start, end: new Date(start.valueOf() + STEP_MINUTES * 60_000) };
}
