/**
 * State-machine actions from `src/generated/actions.ts`: which buttons a record shows for its
 * state (table + overrides, unknown states fall back) and which operation each calls.
 */
import { stateActions } from '@/generated/actions';

type Machines = typeof stateActions;
export type MachineResource = keyof Machines;

export interface ActionSpec {
  name: string;
  operation: string;
  color: string;
  icon: string;
  primary: boolean;
  confirm: boolean;
}

interface Machine {
  field: string;
  fallback: string;
  states: readonly string[];
  actions: Record<
    string,
    {
      operation: string;
      param?: Record<string, string>;
      color: string;
      icon: string;
      primary?: boolean;
      confirm?: boolean;
    }
  >;
  table: Record<string, readonly string[] | undefined>;
  overrides: readonly {
    when: Record<string, unknown>;
    states: readonly string[];
    actions: readonly string[];
  }[];
  rules: Record<string, { states: readonly string[]; code: string; status: number } | undefined>;
}

function machine(resource: string): Machine | null {
  return ((stateActions as Record<string, unknown>)[resource] as Machine | undefined) ?? null;
}

/** The record's state as the machine sees it (unknown values become the fallback). */
export function normalisedState(resource: string, record: Record<string, unknown>): string {
  const m = machine(resource);
  if (!m) return String(record.state ?? '');
  const value = String(record[m.field] ?? '');
  return m.states.includes(value) ? value : m.fallback;
}

/** Actions to show for a record: the state's row, replaced by a matching override. */
export function actionsFor(resource: string, record: Record<string, unknown>): ActionSpec[] {
  const m = machine(resource);
  if (!m) return [];
  const state = normalisedState(resource, record);
  let names: readonly string[] = m.table[state] ?? [];
  for (const override of m.overrides) {
    const applies =
      override.states.includes(state) &&
      Object.entries(override.when).every(([key, value]) => record[key] === value);
    if (applies) names = override.actions;
  }
  return names
    .map((name) => {
      const spec = m.actions[name];
      return spec
        ? {
            name,
            operation: spec.operation,
            color: spec.color,
            icon: spec.icon,
            primary: !!spec.primary,
            confirm: !!spec.confirm,
          }
        : null;
    })
    .filter((spec): spec is ActionSpec => spec !== null);
}

/** True when a rule (`edit`, `delete`, `viewer`...) allows the record's current state. */
export function ruleAllows(
  resource: string,
  rule: string,
  record: Record<string, unknown>,
): boolean {
  const r = machine(resource)?.rules[rule];
  return r ? r.states.includes(normalisedState(resource, record)) : true;
}

/** Parameters an action's operation is called with (`x-actions.actions.<name>.param`). */
export function actionParams(resource: string, name: string): Record<string, string> {
  return machine(resource)?.actions[name]?.param ?? {};
}
