/**
 * Schema facts as policy (policy.ts): the values of every enum definition that declares named
 * sets (`x-state-sets`) or looks (`x-ui.states`), its named sets, the role list and rank, and how
 * each state looks. Both sides import these instead of writing states or roles out by hand.
 */
import type { SchemaFile } from './load.ts';
import { keyOf } from './emit.ts';

type Json = Record<string, unknown>;

interface Look {
  color: string;
  icon: string;
}

/** One enum definition with policy: its generated type name and what it declares. */
interface PolicyEnum {
  file: string;
  type: string;
  values: string[];
  sets: Record<string, string[] | { rule: string }>;
  looks: Record<string, Look>;
}

const camel = (type: string) => type.charAt(0).toLowerCase() + type.slice(1);

function policyEnums(files: SchemaFile[]): PolicyEnum[] {
  return files.flatMap((f) =>
    Object.entries((f.json.$defs ?? {}) as Record<string, Json>)
      .filter(
        ([name, def]) =>
          Array.isArray(def.enum) &&
          (def['x-state-sets'] !== undefined ||
            (def['x-ui'] as Json | undefined)?.states !== undefined ||
            keyOf(f, name) === 'Role'),
      )
      .map(([name, def]) => ({
        file: f.file,
        type: keyOf(f, name),
        values: (def.enum as unknown[]).map(String),
        sets: (def['x-state-sets'] ?? {}) as PolicyEnum['sets'],
        looks: ((def['x-ui'] as Json | undefined)?.states ?? {}) as Record<string, Look>,
      })),
  );
}

/** The states of an x-actions rule named `<resource>.<rule>`, or null when there is none. */
function ruleStates(files: SchemaFile[], ref: string): string[] | null {
  const [resource, rule] = ref.split('.');
  const file = files.find(
    (f) => (f.json['x-resource'] as { name?: string } | undefined)?.name === resource,
  );
  const rules = (file?.json['x-actions'] as { rules?: Record<string, { states?: unknown }> })
    ?.rules;
  const states = rule ? rules?.[rule]?.states : undefined;
  return Array.isArray(states) ? states.map(String) : null;
}

function resolvedSets(files: SchemaFile[], e: PolicyEnum): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(e.sets).map(([name, set]) => [
      name,
      Array.isArray(set) ? set : (ruleStates(files, set.rule) ?? []),
    ]),
  );
}

/** Every problem of the policy declarations: unknown values, unresolved rules, clashing looks. */
export function policyProblems(files: SchemaFile[]): string[] {
  const problems: string[] = [];
  const looks = new Map<string, { look: Look; type: string }>();
  for (const e of policyEnums(files)) {
    for (const [name, set] of Object.entries(e.sets)) {
      const states = Array.isArray(set) ? set : ruleStates(files, set.rule);
      if (!states) {
        problems.push(
          `${e.file}: x-state-sets ${name} names rule ${(set as { rule: string }).rule}, which does not exist`,
        );
        continue;
      }
      for (const s of states)
        if (!e.values.includes(s))
          problems.push(
            `${e.file}: x-state-sets ${name} lists ${s}, which is not a value of ${e.type}`,
          );
    }
    for (const [state, look] of Object.entries(e.looks)) {
      if (!e.values.includes(state))
        problems.push(`${e.file}: x-ui.states names ${state}, which is not a value of ${e.type}`);
      const other = looks.get(state);
      if (other && (other.look.color !== look.color || other.look.icon !== look.icon))
        problems.push(`${e.file}: ${state} looks unlike the ${state} of ${other.type}`);
      looks.set(state, { look, type: e.type });
    }
  }
  return problems;
}

const list = (values: readonly string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`;

/** The text of policy.ts. */
export function emitPolicy(files: SchemaFile[], banner: string): string {
  const enums = policyEnums(files);
  const role = enums.find((e) => e.type === 'Role');
  const roleValues = role?.values ?? [];
  const types = [...new Set(['Role', ...enums.map((e) => e.type)])].sort();
  const out: string[] = [`${banner}import type { ${types.join(', ')} } from './types';\n`];
  for (const e of enums.filter((x) => x.type !== 'Role')) {
    const name = camel(e.type);
    out.push(
      `/** Every ${e.type}, by name (\`${name}.${e.values[0]}\`). */`,
      `export const ${name} = {\n${e.values.map((v) => `  '${v}': '${v}',`).join('\n')}\n} as const satisfies { readonly [K in ${e.type}]: K };\n`,
    );
    const sets = resolvedSets(files, e);
    if (Object.keys(sets).length === 0) continue;
    const plural = name.endsWith('s') ? `${name}es` : `${name}s`;
    out.push(
      `/** The named sets of ${e.type} (x-state-sets). */`,
      `export const ${plural} = {\n${Object.entries(sets)
        .map(([set, states]) => `  ${set}: ${list(states)},`)
        .join('\n')}\n} as const satisfies Readonly<Record<string, readonly ${e.type}[]>>;\n`,
    );
  }
  out.push(
    '/** Every role, highest first: a role may do what every role after it may. */',
    `export const roles = ${list(roleValues)} as const satisfies readonly Role[];\n`,
    '/** Every role, by name (`role.admin`). */',
    `export const role = {\n${roleValues.map((r) => `  ${r}: '${r}',`).join('\n')}\n} as const satisfies { readonly [K in Role]: K };\n`,
    '/** The rank of each role: a higher rank may do what a lower one may. */',
    `export const roleRank: Readonly<Record<Role, number>> = {\n${roleValues
      .map((r, i) => `  ${r}: ${roleValues.length - i},`)
      .join('\n')}\n};\n`,
    '/** Whether `who` is `min` or a role above it (no role is below every role). */',
    'export function hasRoleAtLeast(who: Role | null | undefined, min: Role): boolean {',
    '  return who != null && roleRank[who] >= roleRank[min];',
    '}\n',
    '/** Whether a value is in a set (typed for any string the wire may carry). */',
    'export function inSet<T extends string>(set: readonly T[], value: string | null | undefined): value is T {',
    '  return value != null && (set as readonly string[]).includes(value);',
    '}\n',
  );
  const looks = new Map<string, Look>();
  for (const e of enums) for (const [s, look] of Object.entries(e.looks)) looks.set(s, look);
  out.push(
    '/** How a state looks wherever it is shown (x-ui.states): a Mantine colour and an icon name. */',
    `export const stateLooks: Readonly<Record<string, { readonly color: string; readonly icon: string }>> = {\n${[
      ...looks,
    ]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([s, l]) => `  '${s}': { color: '${l.color}', icon: '${l.icon}' },`)
      .join('\n')}\n};\n`,
  );
  return out.join('\n');
}
