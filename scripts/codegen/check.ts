/**
 * Semantic checks ajv cannot do alone: duplicate $id, actions naming unknown states,
 * access naming an unknown role set, refs that resolve nowhere. Returns a list of problems.
 */
import type Ajv from 'ajv';
import type { SchemaFile } from './load.ts';

const BUILTIN_ACCESS = new Set(['public', 'token']);

interface Operation {
  access: string;
  request?: string;
  response?: string;
  query?: string;
}
interface Actions {
  states: string[];
  fallback?: string;
  actions?: Record<string, { operation?: string }>;
  table: Record<string, string[]>;
  overrides?: { states: string[]; actions: string[] }[];
  rules?: Record<string, { states: string[] }>;
}

export function resolveRef(from: string, ref: string): string {
  const [path = '', pointer = ''] = ref.split('#');
  const base = path ? new URL(path, from).href : from;
  return pointer ? `${base}#${pointer}` : base;
}

export function checkSchemas(ajv: Ajv, files: SchemaFile[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    if (typeof f.$id !== 'string') problems.push(`${f.file}: missing $id`);
    else if (seen.has(f.$id)) problems.push(`${f.file}: duplicate $id ${f.$id} (also in ${seen.get(f.$id)})`);
    else seen.set(f.$id, f.file);
  }
  const resourceNames = new Map<string, string>();
  const refOk = (from: string, ref: string) => {
    try {
      return Boolean(ajv.getSchema(resolveRef(from, ref)));
    } catch {
      return false;
    }
  };
  for (const f of files) {
    const res = f.json['x-resource'] as { name: string; operations?: Record<string, Operation> } | undefined;
    const roles = (f.json['x-roles'] ?? {}) as Record<string, string[]>;
    if (res) {
      if (resourceNames.has(res.name)) problems.push(`${f.file}: resource name ${res.name} also in ${resourceNames.get(res.name)}`);
      resourceNames.set(res.name, f.file);
      for (const [op, def] of Object.entries(res.operations ?? {})) {
        if (!BUILTIN_ACCESS.has(def.access) && !(def.access in roles))
          problems.push(`${f.file}: operation ${op} names access "${def.access}" which is not a role set in x-roles`);
        for (const key of ['request', 'response', 'query'] as const) {
          const ref = def[key];
          if (ref && !refOk(f.$id, ref)) problems.push(`${f.file}: operation ${op} ${key} ref ${ref} does not resolve`);
        }
      }
    }
    const actions = f.json['x-actions'] as Actions | undefined;
    if (actions) {
      const states = new Set(actions.states);
      const known = new Set(Object.keys(actions.actions ?? {}));
      if (actions.fallback && !states.has(actions.fallback)) problems.push(`${f.file}: fallback state ${actions.fallback} is unknown`);
      for (const [state, list] of Object.entries(actions.table)) {
        if (!states.has(state)) problems.push(`${f.file}: x-actions table names unknown state "${state}"`);
        for (const a of list) if (!known.has(a)) problems.push(`${f.file}: x-actions table names unknown action "${a}"`);
      }
      for (const o of actions.overrides ?? []) {
        for (const s of o.states) if (!states.has(s)) problems.push(`${f.file}: x-actions override names unknown state "${s}"`);
        for (const a of o.actions) if (!known.has(a)) problems.push(`${f.file}: x-actions override names unknown action "${a}"`);
      }
      for (const [rule, def] of Object.entries(actions.rules ?? {}))
        for (const s of def.states) if (!states.has(s)) problems.push(`${f.file}: x-actions rule ${rule} names unknown state "${s}"`);
      for (const [a, def] of Object.entries(actions.actions ?? {}))
        if (def.operation && !(res?.operations && def.operation in res.operations))
          problems.push(`${f.file}: action ${a} names unknown operation ${def.operation}`);
    }
    const events = f.json['x-events'] as Record<string, { payload: string; resource?: string }> | undefined;
    for (const [wire, def] of Object.entries(events ?? {})) {
      if (!refOk(f.$id, def.payload)) problems.push(`${f.file}: event ${wire} payload ${def.payload} does not resolve`);
    }
  }
  for (const f of files) {
    const events = f.json['x-events'] as Record<string, { resource?: string }> | undefined;
    for (const [wire, def] of Object.entries(events ?? {}))
      if (def.resource && !resourceNames.has(def.resource)) problems.push(`${f.file}: event ${wire} names unknown resource ${def.resource}`);
  }
  return problems;
}
