/**
 * The state machines of `x-actions` (src/generated/actions.ts) as pure functions both sides call:
 * the SPA to show what a record offers, the server to refuse what it does not. A record's state is
 * its `field` (mapped through `valueMap`; unknown values fall back), the offered actions are the
 * state's row (replaced by a matching override) plus the actions offered by a rule (`offer`).
 */
import { stateActions } from '../src/generated/actions.ts';

export type MachineResource = keyof typeof stateActions;

export interface ActionDefinition {
  operation?: string;
  param?: Readonly<Record<string, string>>;
  /** Route kind of this resource, or `<resource>:<kind>` of another. */
  route?: string;
  /** Operation input (path parameter or body field) or route query parameter -> record field. */
  fill?: Readonly<Record<string, string>>;
  /** Fixed body fields. */
  body?: Readonly<Record<string, unknown>>;
  /** Ask the request fields fill and body leave open in a generated form dialog. */
  form?: boolean;
  /** Read operation whose answer (what the action affects) the confirmation or form shows. */
  preview?: string;
  handler?: string;
  offer?: { rule?: string; when?: Readonly<Record<string, unknown>> };
  permanent?: string;
  color?: string;
  icon?: string;
  primary?: boolean;
  confirm?: boolean;
}

export interface RuleDefinition {
  states: readonly string[];
  code: string;
  status?: number;
}

export interface Machine {
  field: string;
  fallback?: string;
  states: readonly string[];
  valueMap?: Readonly<Record<string, string>>;
  actions: Readonly<Record<string, ActionDefinition>>;
  table: Readonly<Record<string, readonly string[]>>;
  overrides?: readonly {
    when: Readonly<Record<string, unknown>>;
    states: readonly string[];
    actions: readonly string[];
  }[];
  rules?: Readonly<Record<string, RuleDefinition>>;
}

/** The state machine of a resource, or null when it has none. */
export function machineOf(resource: string): Machine | null {
  return (stateActions as Readonly<Record<string, Machine>>)[resource] ?? null;
}

const matches = (
  record: Readonly<Record<string, unknown>>,
  when: Readonly<Record<string, unknown>>,
) => Object.entries(when).every(([key, value]) => record[key] === value);

/** The record's state as the machine sees it. */
export function stateOf(resource: string, record: Readonly<Record<string, unknown>>): string {
  const m = machineOf(resource);
  if (!m) return String(record.state ?? '');
  const raw = String(record[m.field] ?? '');
  const value = m.valueMap?.[raw] ?? raw;
  return m.states.includes(value) ? value : (m.fallback ?? value);
}

/** True when the rule (`edit`, `delete`, `viewer`...) allows the record's state; no rule allows. */
export function ruleAllows(
  resource: string,
  rule: string,
  record: Readonly<Record<string, unknown>>,
): boolean {
  const r = machineOf(resource)?.rules?.[rule];
  return r ? r.states.includes(stateOf(resource, record)) : true;
}

/** The states a rule allows (for instance the states in which a desktop has a screen). */
export function ruleStates(resource: string, rule: string): readonly string[] {
  const r = machineOf(resource)?.rules?.[rule];
  if (!r) throw new Error(`${resource} has no rule ${rule}`);
  return r.states;
}

/** Names of the actions the record offers now, in declaration order (table row first). */
export function offeredActions(
  resource: string,
  record: Readonly<Record<string, unknown>>,
): string[] {
  const m = machineOf(resource);
  if (!m) return [];
  const state = stateOf(resource, record);
  let names: readonly string[] = m.table[state] ?? [];
  for (const override of m.overrides ?? [])
    if (override.states.includes(state) && matches(record, override.when)) names = override.actions;
  const offered = [...names];
  for (const [name, action] of Object.entries(m.actions)) {
    if (!action.offer || offered.includes(name)) continue;
    const { rule, when } = action.offer;
    if (rule && !ruleAllows(resource, rule, record)) continue;
    if (when && !matches(record, when)) continue;
    offered.push(name);
  }
  return offered;
}

/** The definition of one action. */
export function actionOf(resource: string, name: string): ActionDefinition | null {
  return machineOf(resource)?.actions[name] ?? null;
}
