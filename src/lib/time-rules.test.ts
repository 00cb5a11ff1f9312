import { describe, expect, it } from 'vitest';
import { checkTimeRules, fieldOfCode, type TimeRule } from './time-rules';

const MINUTE = 60_000;
const now = Date.UTC(2026, 10, 23, 10, 0);
const at = (minutes: number) => new Date(now + minutes * MINUTE);

const RULES: Record<string, TimeRule> = {
  after: { kind: 'after', fields: ['start', 'end'], code: 'end_after', schemaType: 'Form' },
  min: {
    kind: 'minDuration',
    fields: ['start', 'end'],
    value: 5,
    code: 'too_short',
    schemaType: 'Form',
  },
  max: {
    kind: 'maxDuration',
    fields: ['start', 'end'],
    limit: { field: 'max_time' },
    code: 'too_long',
    schemaType: 'Form',
  },
  lead: {
    kind: 'minLeadTime',
    fields: ['start'],
    limit: { field: 'forbid_time' },
    code: 'too_soon',
    schemaType: 'Form',
  },
  past: { kind: 'notPast', fields: ['start'], code: 'past', schemaType: 'Other' },
  count: {
    kind: 'maxCount',
    fields: ['element_id'],
    limit: { field: 'max_items' },
    code: 'too_many',
    schemaType: 'Form',
  },
  overlap: {
    kind: 'noOverlap',
    fields: ['start', 'end'],
    except: ['available'],
    exceptField: 'event_type',
    code: 'overlap',
    schemaType: 'Form',
  },
};

const limits = { max_time: 60, forbid_time: 30, max_items: 2 };

describe('checkTimeRules', () => {
  it('passes a span that keeps every rule of its form', () => {
    expect(
      checkTimeRules(RULES, 'Form', { start: at(30), end: at(90) }, { now, limits, count: 1 }),
    ).toEqual([]);
  });

  it('puts span failures on the end and start failures on the start, with the figures', () => {
    const failures = checkTimeRules(
      RULES,
      'Form',
      { start: at(10), end: at(12) },
      { now, limits, count: 0 },
    );
    expect(failures).toEqual([
      { rule: 'min', field: 'end', code: 'too_short', params: { minutes: 5 } },
      { rule: 'lead', field: 'start', code: 'too_soon', params: { minutes: 30 } },
    ]);
  });

  it('refuses an end before the start and a span over the limit', () => {
    expect(
      checkTimeRules(RULES, 'Form', { start: at(60), end: at(40) }, { now, limits })[0]?.code,
    ).toBe('end_after');
    expect(
      checkTimeRules(RULES, 'Form', { start: at(60), end: at(180) }, { now, limits })[0],
    ).toMatchObject({ field: 'end', code: 'too_long', params: { minutes: 60 } });
  });

  it('skips a rule whose limit is missing (no limit)', () => {
    expect(
      checkTimeRules(RULES, 'Form', { start: at(0), end: at(600) }, { now, limits: {} }),
    ).toEqual([]);
  });

  it('counts against the limit', () => {
    expect(
      checkTimeRules(RULES, 'Form', { start: at(60), end: at(90) }, { now, limits, count: 2 }),
    ).toEqual([{ rule: 'count', field: 'element_id', code: 'too_many', params: { limit: 2 } }]);
  });

  it('refuses overlaps except over the listed kinds and the edited event itself', () => {
    const others = [
      { id: 'w', start: at(0), end: at(600), event_type: 'available' },
      { id: 'b1', start: at(60), end: at(90), event_type: 'event' },
    ];
    const span = { start: at(70), end: at(100) };
    expect(checkTimeRules(RULES, 'Form', span, { now, limits, others })[0]?.code).toBe('overlap');
    expect(checkTimeRules(RULES, 'Form', span, { now, limits, others, ignoreId: 'b1' })).toEqual(
      [],
    );
    // Touching ends do not overlap.
    expect(
      checkTimeRules(RULES, 'Form', { start: at(90), end: at(120) }, { now, limits, others }),
    ).toEqual([]);
  });

  it('keeps a start in the current minute and refuses one before it', () => {
    expect(
      checkTimeRules(RULES, 'Other', { start: new Date(now + 20_000) }, { now: now + 30_000 }),
    ).toEqual([]);
    expect(checkTimeRules(RULES, 'Other', { start: at(-1) }, { now })[0]?.code).toBe('past');
  });
});

describe('fieldOfCode', () => {
  it('finds the field a code belongs on, or none', () => {
    expect(fieldOfCode(RULES, 'Form', 'too_long')).toBe('end');
    expect(fieldOfCode(RULES, 'Form', 'overlap')).toBe('start');
    expect(fieldOfCode(RULES, 'Form', 'something_else')).toBeNull();
    expect(fieldOfCode(RULES, 'Form', undefined)).toBeNull();
  });
});
