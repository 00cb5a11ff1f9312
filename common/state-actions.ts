/**
 * The state machines of `x-actions` (src/generated/actions.ts) as pure functions both sides call:
 * the SPA to show what a record offers, the server to refuse what it does not. A record's state is
 * its `field` (mapped through `valueMap`; unknown values fall back), the offered actions are the
 * state's row (replaced by a matching override) plus the actions offered by a rule (`offer`).
 * A `when` names record fields by dotted path (`api_key.exists`); a listed value matches when the
 * field holds any of the list's values, and a missing field counts as null.
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
  /** The request fields the form asks (default: every field fill and body leave open). */
  fields?: readonly string[];
  /** Form field -> record field: the starting value of a field the record names differently. */
  prefill?: Readonly<Record<string, string>>;
  /** After success the dialog shows the operation's answer (a secret shown once) instead of closing. */
  result?: boolean;
  /**
   * With result: the boolean field of the answer that must be true for the action's result hint
   * to show (a "nothing was written" hint after a check only, not after the real run).
   */
  resultHintWhen?: string;
  /** Route opened after success: a route kind of the resource or `<resource>:<kind>`. */
  then?: string;
  /** Registered effect run after success (switching the interface language). */
  effect?: string;
  /** x-ui section of the details page the action is drawn in (default: the title row). */
  section?: string;
  /** Read operation whose answer (what the action affects) the confirmation or form shows. */
  preview?: string;
  /** Read operation whose answer names the ids the form starts with (`{ id, name }` objects). */
  names?: string;
  handler?: string;
  offer?: {
    rule?: string;
    when?: Readonly<Record<string, unknown>>;
    /** Not offered while the record matches this. */
    unless?: Readonly<Record<string, unknown>>;
  };
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

/** The value at a dotted path of a record (undefined when a step is missing). */
function valueAtPath(record: Readonly<Record<string, unknown>>, path: string): unknown {
  let node: unknown = record;
  for (const key of path.split('.')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Readonly<Record<string, unknown>>)[key];
  }
  return node;
}

/**
 * True when every entry of `when` matches the record: the field at the dotted path equals the
 * value, or one of the values of a list; a missing field matches null.
 */
export function matchesWhen(
  record: Readonly<Record<string, unknown>>,
  when: Readonly<Record<string, unknown>>,
): boolean {
  return Object.entries(when).every(([path, expected]) => {
    const actual = valueAtPath(record, path) ?? null;
    return Array.isArray(expected) ? expected.includes(actual) : actual === expected;
  });
}

const matches = matchesWhen;

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
    const { rule, when, unless } = action.offer;
    if (rule && !ruleAllows(resource, rule, record)) continue;
    if (when && !matches(record, when)) continue;
    if (unless && matches(record, unless)) continue;
    offered.push(name);
  }
  return offered;
}

/** The definition of one action. */
export function actionOf(resource: string, name: string): ActionDefinition | null {
  return machineOf(resource)?.actions[name] ?? null;
}

/**
 * True when a call of `<resource>.<operation>` with these path parameters is the action: its
 * operation with its fixed `param` (a desktop's `start` is `action` with `{ action: "start" }`).
 */
export function callIsAction(
  resource: string,
  action: string,
  key: string,
  params: Readonly<Record<string, unknown>> = {},
): boolean {
  const def = actionOf(resource, action);
  if (!def?.operation || key !== `${resource}.${def.operation}`) return false;
  return Object.entries(def.param ?? {}).every(([name, value]) => String(params[name]) === value);
}
