/**
 * The unit arithmetic of bookings without a database: segments, fit, evictions of lower-priority
 * bookings, the availability windows a calendar shows, misfits after a plan change, and the
 * priority rules.
 */
import { describe, expect, it } from 'vitest';
import {
  evictionsFor,
  fitOf,
  misfitsAfterChange,
  segmentsOf,
  windowsOf,
  type BookingSpan,
  type PlanSpan,
} from './booking-availability.ts';
import { limitsFor, NO_RULE } from './booking-rules.ts';
import type { BookingRuleRow } from '../../platform/db/schema.ts';

const H = 3_600_000;
const plan = (start: number, end: number, units: number): PlanSpan => ({
  start: start * H,
  end: end * H,
  units,
});
let seq = 0;
const booking = (
  start: number,
  end: number,
  options: Partial<Omit<BookingSpan, 'start' | 'end'>> = {},
): BookingSpan => ({
  id: options.id ?? `b${++seq}`,
  itemId: options.itemId ?? `item${seq}`,
  start: start * H,
  end: end * H,
  units: options.units ?? 1,
  priority: options.priority ?? 1,
  createdAt: options.createdAt ?? seq,
});
const span = (start: number, end: number) => ({ start: start * H, end: end * H });

describe('segments and fit', () => {
  it('adds the units of overlapping plans and of overlapping bookings', () => {
    const segments = segmentsOf(
      span(0, 10),
      [plan(0, 6, 2), plan(4, 10, 1)],
      [booking(1, 5, { priority: 5 }), booking(3, 8, { priority: 0 })],
      { priority: 1 },
    );
    expect(segments.map((s) => [s.start / H, s.end / H, s.offered, s.booked, s.kept])).toEqual([
      [0, 1, 2, 0, 0],
      [1, 3, 2, 1, 1],
      [3, 4, 2, 2, 1],
      [4, 5, 3, 2, 1],
      [5, 6, 3, 1, 0],
      [6, 8, 1, 1, 0],
      [8, 10, 1, 0, 0],
    ]);
  });

  it('fits, overrides, is full or lies outside the plans', () => {
    const plans = [plan(0, 10, 1)];
    const low = booking(2, 4, { priority: 0 });
    const high = booking(6, 8, { priority: 9 });
    const fit = (from: number, to: number) =>
      fitOf(segmentsOf(span(from, to), plans, [low, high], { priority: 1 }), 1);
    expect(fit(0, 2)).toBe('fits');
    expect(fit(1, 3)).toBe('override');
    expect(fit(5, 7)).toBe('full');
    expect(fit(9, 11)).toBe('outside');
  });

  it('cancels the least important and newest bookings first, only as many as needed', () => {
    const plans = [plan(0, 10, 2)];
    const older = booking(0, 4, { priority: 0, createdAt: 1 });
    const newer = booking(0, 4, { priority: 0, createdAt: 2 });
    const evicted = evictionsFor(span(1, 3), plans, [older, newer], 1, 5);
    expect(evicted.map((b) => b.id)).toEqual([newer.id]);
    expect(evictionsFor(span(5, 6), plans, [older, newer], 1, 5)).toEqual([]);
  });
});

describe('availability windows', () => {
  it('types the windows for the caller and cuts out the own bookings', () => {
    const plans = [plan(0, 12, 1)];
    const own = booking(0, 2, { itemId: 'mine' });
    const low = booking(4, 6, { priority: 0 });
    const high = booking(8, 10, { priority: 5 });
    const windows = windowsOf(span(0, 12), plans, [own, low, high], {
      units: 1,
      priority: 1,
      ownItem: 'mine',
    });
    expect(windows.map((w) => [w.type, w.start / H, w.end / H, w.units])).toEqual([
      ['available', 2, 4, 1],
      ['overridable', 4, 6, 1],
      ['available', 6, 8, 1],
      ['unavailable', 8, 10, 0],
      ['available', 10, 12, 1],
    ]);
  });

  it('shows nothing where no plan offers the profile', () => {
    expect(windowsOf(span(0, 5), [], [], { units: 1, priority: 1 })).toEqual([]);
  });
});

describe('misfits after a plan change', () => {
  it('keeps the most important and the oldest bookings', () => {
    const plans = [plan(0, 10, 1)];
    const a = booking(1, 3, { priority: 1, createdAt: 1 });
    const b = booking(2, 4, { priority: 1, createdAt: 2 });
    const c = booking(2, 3, { priority: 9, createdAt: 3 });
    const outside = booking(11, 12, { priority: 9 });
    const misfits = misfitsAfterChange(plans, [a, b, c, outside], []);
    expect(misfits.map((m) => m.id).sort()).toEqual([a.id, b.id, outside.id].sort());
  });
});

describe('priority rules', () => {
  const rule = (values: Partial<BookingRuleRow> & Pick<BookingRuleRow, 'id'>): BookingRuleRow => ({
    ruleId: 'default',
    name: values.id,
    description: null,
    allowed: {},
    priority: 0,
    forbidTime: 0,
    maxTime: null,
    maxItems: null,
    maxBookingDays: null,
    ...values,
  });
  const subject = { userId: 'u1', groupId: 'g1', categoryId: 'c1', role: 'user' };
  const rules = [
    rule({ id: 'everyone', allowed: { roles: [] }, priority: 1, maxTime: 60 }),
    rule({ id: 'admins', allowed: { roles: ['admin'] }, priority: 9, maxTime: 600 }),
    rule({ id: 'group', allowed: { groups: ['g1'] }, priority: 3, maxTime: 120 }),
    rule({ id: 'vip', ruleId: 'vip', allowed: { users: ['u1'] }, priority: 7, maxTime: 300 }),
  ];

  it('tries users, then groups, categories and roles, by decreasing priority', () => {
    expect(limitsFor(rules, 'default', subject).maxTime).toBe(120);
    expect(limitsFor(rules, 'default', { ...subject, groupId: 'g2' }).maxTime).toBe(60);
    expect(limitsFor(rules, 'default', { ...subject, groupId: 'g2', role: 'admin' }).maxTime).toBe(
      600,
    );
  });

  it("uses the profile's group, then the default group, then no limits", () => {
    expect(limitsFor(rules, 'vip', subject).priority).toBe(7);
    expect(limitsFor(rules, 'vip', { ...subject, userId: 'u2' }).priority).toBe(3);
    expect(limitsFor([], 'vip', subject)).toEqual(NO_RULE);
  });
});
