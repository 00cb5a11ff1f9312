/**
 * Units of a bookable profile over time, without the database: the plans that offer the profile
 * (their units add up where plans of several items overlap) against the bookings that take them.
 * One sweep over the start and end instants splits a time range into segments with, for each, the
 * units offered, the units booked, and the units booked by bookings at least as important as the
 * caller's (those a booking can not take away). Everything else here reads those segments:
 *
 * - whether a booking fits: every instant offered (else `outside`), enough units left (`fits`), or
 *   enough once lower-priority bookings give theirs up (`override`), else `full`;
 * - which lower-priority bookings a booking over an overridable window cancels;
 * - the availability windows a calendar shows: available (units left), overridable (units left
 *   once lower-priority bookings give theirs up) and unavailable, the item's own bookings cut out;
 * - which bookings no longer fit after the plans changed (the most important and oldest stay).
 *
 * Times are epoch milliseconds; spans are half-open [start, end).
 */

export interface Span {
  start: number;
  end: number;
}

/** A plan: the profile is offered with `units` units over the span. */
export interface PlanSpan extends Span {
  units: number;
}

/** A booking taking `units` units over the span. */
export interface BookingSpan extends Span {
  id: string;
  itemId: string;
  units: number;
  priority: number;
  /** creation time: among bookings of one priority the older stays */
  createdAt: number;
}

export interface Segment extends Span {
  /** units the plans offer */
  offered: number;
  /** units all bookings take */
  booked: number;
  /** units taken by bookings whose priority is not below the caller's */
  kept: number;
  /** the item's own bookings covering the segment */
  own: number;
}

export type WindowType = 'available' | 'overridable' | 'unavailable';

export interface Window extends Span {
  type: WindowType;
  /** units free (available), free once overridden (overridable), or free at all (unavailable) */
  units: number;
}

export type Fit = 'fits' | 'override' | 'full' | 'outside';

export const overlaps = (a: Span, b: Span): boolean => a.start < b.end && b.start < a.end;

interface Delta {
  at: number;
  offered: number;
  booked: number;
  kept: number;
  own: number;
}

/**
 * The segments of [from, to): consecutive spans over which nothing starts or ends. `priority` is
 * the caller's (bookings below it count as overridable); `ownItem` marks the item's own bookings.
 */
export function segmentsOf(
  range: Span,
  plans: readonly PlanSpan[],
  bookings: readonly BookingSpan[],
  options: { priority: number; ownItem?: string | undefined },
): Segment[] {
  if (range.end <= range.start) return [];
  const deltas: Delta[] = [];
  const push = (span: Span, d: Omit<Delta, 'at'>) => {
    if (!overlaps(span, range)) return;
    const start = Math.max(span.start, range.start);
    const end = Math.min(span.end, range.end);
    deltas.push({ at: start, ...d });
    deltas.push({
      at: end,
      offered: -d.offered,
      booked: -d.booked,
      kept: -d.kept,
      own: -d.own,
    });
  };
  for (const p of plans) push(p, { offered: p.units, booked: 0, kept: 0, own: 0 });
  for (const b of bookings)
    push(b, {
      offered: 0,
      booked: b.units,
      kept: b.priority >= options.priority ? b.units : 0,
      own: options.ownItem !== undefined && b.itemId === options.ownItem ? 1 : 0,
    });
  deltas.push({ at: range.start, offered: 0, booked: 0, kept: 0, own: 0 });
  deltas.push({ at: range.end, offered: 0, booked: 0, kept: 0, own: 0 });
  deltas.sort((a, b) => a.at - b.at);
  const segments: Segment[] = [];
  const now = { offered: 0, booked: 0, kept: 0, own: 0 };
  for (let i = 0; i < deltas.length;) {
    const at = deltas[i]?.at ?? range.end;
    while (i < deltas.length && deltas[i]?.at === at) {
      const d = deltas[i] as Delta;
      now.offered += d.offered;
      now.booked += d.booked;
      now.kept += d.kept;
      now.own += d.own;
      i++;
    }
    const next = deltas[i]?.at;
    if (next !== undefined && next > at && at < range.end)
      segments.push({ start: at, end: next, ...now });
  }
  return segments;
}

/** Whether `units` units fit over every segment (see the file comment). */
export function fitOf(segments: readonly Segment[], units: number): Fit {
  if (segments.length === 0 || segments.some((s) => s.offered === 0)) return 'outside';
  if (segments.some((s) => s.offered - s.kept < units)) return 'full';
  if (segments.some((s) => s.offered - s.booked < units)) return 'override';
  return 'fits';
}

/**
 * The lower-priority bookings a booking of `units` over `span` cancels to fit: the least important
 * first, and of those the newest, until it fits. Empty when it fits without any.
 */
export function evictionsFor(
  span: Span,
  plans: readonly PlanSpan[],
  bookings: readonly BookingSpan[],
  units: number,
  priority: number,
): BookingSpan[] {
  const candidates = bookings
    .filter((b) => b.priority < priority && overlaps(b, span))
    .sort((a, b) => a.priority - b.priority || b.createdAt - a.createdAt);
  let remaining = [...bookings];
  const evicted: BookingSpan[] = [];
  for (const candidate of candidates) {
    if (fitOf(segmentsOf(span, plans, remaining, { priority }), units) === 'fits') break;
    remaining = remaining.filter((b) => b.id !== candidate.id);
    evicted.push(candidate);
  }
  return evicted;
}

/**
 * The availability windows of an item over a range: segments the plans cover and none of the
 * item's own bookings does, typed for a booking of `units` by the caller (`priority`), adjacent
 * ones of the same type and units merged.
 */
export function windowsOf(
  range: Span,
  plans: readonly PlanSpan[],
  bookings: readonly BookingSpan[],
  options: { units: number; priority: number; ownItem?: string | undefined },
): Window[] {
  const windows: Window[] = [];
  for (const s of segmentsOf(range, plans, bookings, options)) {
    if (s.offered === 0 || s.own > 0) continue;
    const free = s.offered - s.booked;
    const overridable = s.offered - s.kept;
    const window: Window =
      free >= options.units
        ? { start: s.start, end: s.end, type: 'available', units: free }
        : overridable >= options.units
          ? { start: s.start, end: s.end, type: 'overridable', units: overridable }
          : { start: s.start, end: s.end, type: 'unavailable', units: Math.max(0, free) };
    const last = windows[windows.length - 1];
    if (
      last &&
      last.end === window.start &&
      last.type === window.type &&
      last.units === window.units
    )
      last.end = window.end;
    else windows.push(window);
  }
  return windows;
}

/**
 * After the plans changed: which of `changed` (the bookings the change may affect) no longer fit
 * beside `others` (those it does not). The most important and, among equals, the oldest keep
 * their units.
 */
export function misfitsAfterChange(
  plans: readonly PlanSpan[],
  changed: readonly BookingSpan[],
  others: readonly BookingSpan[],
): BookingSpan[] {
  const kept: BookingSpan[] = [...others];
  const misfits: BookingSpan[] = [];
  const ordered = [...changed].sort((a, b) => b.priority - a.priority || a.createdAt - b.createdAt);
  for (const booking of ordered) {
    const around = kept.filter((b) => overlaps(b, booking));
    const fit = fitOf(
      segmentsOf(booking, plans, around, { priority: Number.NEGATIVE_INFINITY }),
      booking.units,
    );
    if (fit === 'fits') kept.push(booking);
    else misfits.push(booking);
  }
  return misfits;
}
