/**
 * The cross-field time rules of the generated `constraints` table (`x-constraints`), checked in a
 * form before it sends: each rule names its kind, its fields, its code and its value or the
 * field of another answer that holds its limit (a booking's `max_time` comes from the item's
 * priority). The kinds read here are the calendar ones; other kinds are left to the server.
 * - `after`: the second field is later than the first.
 * - `minDuration` / `maxDuration`: the span between the two fields, in minutes, is at least
 *   `value` / at most the limit.
 * - `minLeadTime`: the field is at least the limit in minutes after now.
 * - `notPast`: the field is not before the current minute.
 * - `maxCount`: the count given by the caller is below the limit.
 * - `noOverlap`: the span overlaps none of the other events, except those whose `exceptField`
 *   value is listed in `except` and the edited event itself.
 * A missing limit (null: no limit) skips its rule. Failures land on the rule's last date field
 * for spans and on its first field otherwise, with the rule's code and the figures it used.
 */

export interface TimeRule {
  kind: string;
  fields: readonly string[];
  code: string;
  schemaType?: string;
  value?: number;
  limit?: { readonly field: string };
  except?: readonly string[];
  exceptField?: string;
}

export interface OtherEvent {
  id?: string | undefined;
  start: Date;
  end: Date;
  [field: string]: unknown;
}

export interface TimeRuleContext {
  /** The current time (ms). */
  now: number;
  /** Limits by field name (`max_time`, `forbid_time`...); null or missing means no limit. */
  limits?: Readonly<Record<string, number | null | undefined>>;
  /** The other events a span must not overlap. */
  others?: readonly OtherEvent[];
  /** The edited event, ignored by the overlap rules. */
  ignoreId?: string | undefined;
  /** What `maxCount` rules count (the caller's future bookings). */
  count?: number;
  /** Rule names not checked here (the lead time of a start-now booking). */
  skip?: readonly string[];
}

export interface TimeRuleFailure {
  rule: string;
  field: string;
  code: string;
  params: Record<string, unknown>;
}

const MINUTE = 60_000;

function dateOf(value: unknown): Date | null {
  if (value instanceof Date) return Number.isNaN(value.valueOf()) ? null : value;
  return null;
}

function spanMinutes(start: Date, end: Date): number {
  return (end.valueOf() - start.valueOf()) / MINUTE;
}

/** The rules of the table that apply to the form type `schemaType`, by name. */
export function rulesFor(
  table: Readonly<Record<string, TimeRule>>,
  schemaType: string,
): [string, TimeRule][] {
  return Object.entries(table).filter(([, rule]) => rule.schemaType === schemaType);
}

/**
 * Checks `values` (dates as Date objects) against the rules of `schemaType`; returns every
 * failure, at most one per field (the first rule in table order wins).
 */
export function checkTimeRules(
  table: Readonly<Record<string, TimeRule>>,
  schemaType: string,
  values: Readonly<Record<string, unknown>>,
  context: TimeRuleContext,
): TimeRuleFailure[] {
  const failures: TimeRuleFailure[] = [];
  const taken = new Set<string>();
  const fail = (rule: string, def: TimeRule, field: string, params: Record<string, unknown>) => {
    if (taken.has(field)) return;
    taken.add(field);
    failures.push({ rule, field, code: def.code, params });
  };
  for (const [name, rule] of rulesFor(table, schemaType)) {
    if (context.skip?.includes(name)) continue;
    const [first = '', second = ''] = rule.fields;
    const a = dateOf(values[first]);
    const b = dateOf(values[second]);
    const limit = rule.limit ? context.limits?.[rule.limit.field] : undefined;
    switch (rule.kind) {
      case 'after':
        if (a && b && b.valueOf() <= a.valueOf()) fail(name, rule, second, {});
        break;
      case 'minDuration':
        if (a && b && rule.value !== undefined && spanMinutes(a, b) < rule.value)
          fail(name, rule, second, { minutes: rule.value });
        break;
      case 'maxDuration':
        if (a && b && typeof limit === 'number' && spanMinutes(a, b) > limit)
          fail(name, rule, second, { minutes: limit });
        break;
      case 'minLeadTime':
        if (a && typeof limit === 'number' && a.valueOf() < context.now + limit * MINUTE)
          fail(name, rule, first, { minutes: limit });
        break;
      case 'notPast': {
        const minute = Math.floor(context.now / MINUTE) * MINUTE;
        if (a && a.valueOf() < minute) fail(name, rule, first, {});
        break;
      }
      case 'maxCount':
        if (typeof limit === 'number' && (context.count ?? 0) >= limit)
          fail(name, rule, first, { limit });
        break;
      case 'noOverlap': {
        if (!a || !b) break;
        const clash = (context.others ?? []).find(
          (other) =>
            (context.ignoreId === undefined || other.id !== context.ignoreId) &&
            !(rule.exceptField && rule.except?.includes(String(other[rule.exceptField]))) &&
            other.start.valueOf() < b.valueOf() &&
            other.end.valueOf() > a.valueOf(),
        );
        if (clash) fail(name, rule, first, {});
        break;
      }
      default:
        break;
    }
  }
  return failures;
}

/** The field a server code belongs on, by the rule that declares it (null: a form-wide error). */
export function fieldOfCode(
  table: Readonly<Record<string, TimeRule>>,
  schemaType: string,
  code: string | null | undefined,
): string | null {
  if (!code) return null;
  const found = rulesFor(table, schemaType).find(([, rule]) => rule.code === code);
  if (!found) return null;
  const [, rule] = found;
  const spans = new Set(['after', 'minDuration', 'maxDuration']);
  return (spans.has(rule.kind) ? rule.fields[1] : rule.fields[0]) ?? null;
}
