/**
 * The plan form's checks before it sends: the cross-field rules the schema declares for the
 * planner's create and update bodies (`constraints.planning`: start not in the past, end after
 * start, the minimum length, no overlap with the card's other plans), and where a server code
 * lands (the field its rule names, else the form's alert).
 */
import { constraints } from '@/generated/constants';
import {
  checkTimeRules,
  fieldOfCode,
  rulesFor,
  type OtherEvent,
  type TimeRule,
  type TimeRuleFailure,
} from '@/lib/time-rules';

const RULES: Readonly<Record<string, TimeRule>> = constraints.planning;

export type PlanFormType = 'PlannerEventCreate' | 'PlannerEventUpdate';

export function planFailures(
  form: PlanFormType,
  values: { start: Date | null; end: Date | null },
  context: { now: number; others: readonly OtherEvent[]; ignoreId?: string | undefined },
): TimeRuleFailure[] {
  return checkTimeRules(RULES, form, values, context);
}

export function planFieldOfCode(form: PlanFormType, code: string | null | undefined) {
  return fieldOfCode(RULES, form, code);
}

/** The figures a server code's message may name (the rule's value). */
export function planCodeParams(form: PlanFormType, code: string | null | undefined) {
  const found = rulesFor(RULES, form).find(
    ([, rule]) => rule.code === code && rule.value !== undefined,
  );
  return found ? { minutes: found[1].value } : {};
}
