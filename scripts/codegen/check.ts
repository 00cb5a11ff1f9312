/**
 * Semantic checks ajv cannot do alone: duplicate $id, actions naming unknown states,
 * access naming an unknown role set, refs that resolve nowhere. Returns a list of problems.
 */
import type { SchemaFile } from './load.ts';

const BUILTIN_ACCESS = new Set(['public', 'token']);

/** Finds a schema by URI (a file's `$id`, then a JSON pointer) in the loaded files, without compiling it. */
export interface SchemaLookup {
  getSchema(uri: string): { schema: unknown } | undefined;
}

/** The lookup over the loaded files: each has one `$id`, and refs name a file and a JSON pointer. */
export function schemaLookup(files: readonly SchemaFile[]): SchemaLookup {
  const byId = new Map<string, unknown>(files.map((f) => [f.$id, f.json]));
  return {
    getSchema(uri) {
      const [base = '', fragment = ''] = uri.split('#');
      let node = byId.get(base);
      if (node === undefined) return undefined;
      if (fragment && !fragment.startsWith('/')) return undefined;
      for (const raw of fragment ? fragment.slice(1).split('/') : []) {
        const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
        if (!node || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
        node = (node as Record<string, unknown>)[key];
      }
      return { schema: node };
    },
  };
}

interface Operation {
  method: string;
  path: string;
  base?: string;
  access: string;
  request?: string;
  response?: string;
  query?: string;
  params?: string;
}
interface Filter {
  key: string;
  field?: string;
  operation?: string;
  notMine?: string;
  visibleIf?: string;
}
interface Constraint {
  schema: string;
  fields: string[];
  limit?: { schema: string; field: string };
}
type Json = Record<string, unknown>;
interface Actions {
  field: string;
  states: string[];
  fallback?: string;
  actions?: Record<
    string,
    {
      operation?: string;
      route?: string;
      handler?: string;
      permanent?: string;
      offer?: { rule?: string };
      fill?: Record<string, string>;
      body?: Record<string, unknown>;
      form?: boolean;
      preview?: string;
      names?: string;
      fields?: string[];
      prefill?: Record<string, string>;
      result?: boolean;
      resultHintWhen?: string;
      then?: string;
      section?: string;
    }
  >;
  table: Record<string, string[]>;
  overrides?: { states: string[]; actions: string[] }[];
  rules?: Record<string, { states: string[] }>;
  valueMap?: Record<string, string>;
}

/** The schema object a ref points at (following $ref chains), with the $id it resolves against. */
function schemaAt(
  lookup: SchemaLookup,
  from: string,
  ref: string,
): { id: string; schema: Json } | undefined {
  let id = resolveRef(from, ref);
  for (let depth = 0; depth < 32; depth++) {
    let schema: Json | undefined;
    try {
      schema = lookup.getSchema(id)?.schema as Json | undefined;
    } catch {
      return undefined;
    }
    if (!schema || typeof schema !== 'object') return undefined;
    if (typeof schema.$ref !== 'string' || schema.properties)
      return { id: id.split('#')[0] ?? id, schema };
    id = resolveRef(id.split('#')[0] ?? id, schema.$ref);
  }
  return undefined;
}

/** True when the dotted path names a property of the schema (through $refs, allOf and anyOf). */
function hasPath(lookup: SchemaLookup, from: string, ref: string, path: string): boolean {
  const [head = '', ...rest] = path.split('.');
  const at = schemaAt(lookup, from, ref);
  if (!at) return false;
  const branches = [
    at.schema,
    ...((at.schema.anyOf ?? []) as Json[]).concat((at.schema.allOf ?? []) as Json[]),
  ];
  for (const b of branches) {
    if (typeof b.$ref === 'string' && b !== at.schema && hasPath(lookup, at.id, b.$ref, path))
      return true;
    const prop = (b.properties as Record<string, Json> | undefined)?.[head];
    if (!prop) continue;
    if (rest.length === 0) return true;
    if (typeof prop.$ref === 'string' && hasPath(lookup, at.id, prop.$ref, rest.join('.')))
      return true;
    if (prop.properties && hasPath(lookup, at.id, `#${pointerOf(at, prop)}`, rest.join('.')))
      return true;
  }
  return false;
}

/** JSON pointer of a nested object inside its file (only used for inline nested properties). */
function pointerOf(at: { schema: Json }, target: Json): string {
  const walk = (node: unknown, ptr: string): string | undefined => {
    if (node === target) return ptr;
    if (!node || typeof node !== 'object') return undefined;
    for (const [k, v] of Object.entries(node as Json)) {
      const found = walk(v, `${ptr}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return walk(at.schema, '') ?? '';
}

/** Every x-ui object inside a schema file, with its JSON path (for error messages). */
function uiNodes(node: unknown, path = ''): { path: string; ui: Json }[] {
  if (!node || typeof node !== 'object') return [];
  const out: { path: string; ui: Json }[] = [];
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === 'x-ui' && v && typeof v === 'object') out.push({ path, ui: v as Json });
    else out.push(...uiNodes(v, `${path}/${k}`));
  }
  return out;
}

/** The x-ui sections the top-level properties of an entity use. */
function sectionsOf(properties: unknown): Set<string> {
  const out = new Set<string>();
  for (const prop of Object.values((properties ?? {}) as Record<string, Json>)) {
    const section = (prop['x-ui'] as { section?: unknown } | undefined)?.section;
    if (typeof section === 'string') out.add(section);
  }
  return out;
}

export function resolveRef(from: string, ref: string): string {
  const [path = '', pointer = ''] = ref.split('#');
  const base = path ? new URL(path, from).href : from;
  return pointer ? `${base}#${pointer}` : base;
}

export function checkSchemas(lookup: SchemaLookup, files: SchemaFile[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    if (typeof f.$id !== 'string') problems.push(`${f.file}: missing $id`);
    else if (seen.has(f.$id))
      problems.push(`${f.file}: duplicate $id ${f.$id} (also in ${seen.get(f.$id)})`);
    else seen.set(f.$id, f.file);
  }
  const resourceNames = new Map<string, string>();
  const endpoints = new Map<string, string>();
  const menuFlags: { file: string; flag: string }[] = [];
  const opKeys = new Set<string>();
  for (const f of files) {
    const res = f.json['x-resource'] as { name: string; operations?: Json } | undefined;
    for (const op of Object.keys(res?.operations ?? {})) opKeys.add(`${res?.name}.${op}`);
  }
  // Route kinds per resource (routes and extraRoutes), for actions that open another resource's.
  const routeKindsOf = new Map<string, Set<string>>();
  for (const f of files) {
    const res = f.json['x-resource'] as
      { name: string; routes?: Json; extraRoutes?: Json } | undefined;
    if (res)
      routeKindsOf.set(
        res.name,
        new Set([...Object.keys(res.routes ?? {}), ...Object.keys(res.extraRoutes ?? {})]),
      );
  }
  const wires = new Set<string>();
  for (const f of files)
    for (const w of Object.keys((f.json['x-events'] ?? {}) as Json)) wires.add(w);
  const refOk = (from: string, ref: string) => {
    try {
      return Boolean(lookup.getSchema(resolveRef(from, ref)));
    } catch {
      return false;
    }
  };
  for (const f of files) {
    const res = f.json['x-resource'] as
      { name: string; operations?: Record<string, Operation> } | undefined;
    const roles = (f.json['x-roles'] ?? {}) as Record<string, string[]>;
    if (res) {
      if (resourceNames.has(res.name))
        problems.push(
          `${f.file}: resource name ${res.name} also in ${resourceNames.get(res.name)}`,
        );
      resourceNames.set(res.name, f.file);
      for (const [op, def] of Object.entries(res.operations ?? {})) {
        if (!BUILTIN_ACCESS.has(def.access) && !(def.access in roles))
          problems.push(
            `${f.file}: operation ${op} names access "${def.access}" which is not a role set in x-roles`,
          );
        for (const key of ['request', 'response', 'query', 'params'] as const) {
          const ref = def[key];
          if (ref && !refOk(f.$id, ref))
            problems.push(`${f.file}: operation ${op} ${key} ref ${ref} does not resolve`);
        }
        const route = `${def.base ?? 'api'} ${def.method} ${def.path.replace(/\{[^}]+\}/g, '{}')}`;
        if (endpoints.has(route))
          problems.push(`${f.file}: operation ${op} (${route}) duplicates ${endpoints.get(route)}`);
        else endpoints.set(route, `${res.name}.${op}`);
        const names = [...def.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] ?? '');
        // Every path parameter is validated by a schema: an unchecked one reaches handlers raw.
        if (names.length > 0 && !def.params)
          problems.push(`${f.file}: operation ${op} has path parameters but no params schema`);
        if (def.params && refOk(f.$id, def.params)) {
          for (const n of names)
            if (!hasPath(lookup, f.$id, def.params, n))
              problems.push(
                `${f.file}: operation ${op} path parameter {${n}} is not in its params schema`,
              );
        }
      }
      const r = res as {
        routes?: Record<string, string>;
        extraRoutes?: Record<string, string>;
        routeNames?: Record<string, string>;
        menu?: { visibleIf?: string };
      };
      const forms = (
        res as {
          forms?: Record<
            string,
            { operation: string; then?: string; preview?: string; token?: string; after?: string }
          >;
        }
      ).forms;
      const editPrefill = (res as { editPrefill?: string }).editPrefill;
      if (editPrefill && res.operations?.[editPrefill]?.method !== 'GET')
        problems.push(`${f.file}: editPrefill ${editPrefill} is not a read operation`);
      for (const [kind, form] of Object.entries(forms ?? {})) {
        if (!r.extraRoutes?.[kind])
          problems.push(`${f.file}: form ${kind} is not an extra route of ${res.name}`);
        // A form of an operation without a body is a confirmation page (one button).
        if (!res.operations?.[form.operation])
          problems.push(`${f.file}: form ${kind} names unknown operation ${form.operation}`);
        if (form.preview && res.operations?.[form.preview]?.method !== 'GET')
          problems.push(`${f.file}: form ${kind} preview ${form.preview} is not a read operation`);
        const formOp = res.operations?.[form.operation] as
          { tokenTypes?: string[]; response?: string } | undefined;
        // A bearer from the page's query is only meaningful for a call that names its token types.
        if (form.token === 'query' && !formOp?.tokenTypes?.length)
          problems.push(
            `${f.file}: form ${kind} takes its token from the query but ${form.operation} names no tokenTypes`,
          );
        if ((form.after === 'answer' || form.after === 'answerContinue') && !formOp?.response)
          problems.push(
            `${f.file}: form ${kind} shows the answer of ${form.operation}, which has none`,
          );
        if (form.after && form.then)
          problems.push(
            `${f.file}: form ${kind} has both after and then (after replaces the then-route)`,
          );
        if (form.then) {
          const [target, then] = form.then.includes(':')
            ? form.then.split(':')
            : [res.name, form.then];
          if (!routeKindsOf.get(target ?? '')?.has(then ?? ''))
            problems.push(`${f.file}: form ${kind} then-route ${form.then} does not exist`);
        }
      }
      if (r.routes?.list && !roles.view)
        problems.push(`${f.file}: resource ${res.name} has routes.list but no x-roles.view set`);
      if (r.menu?.visibleIf) menuFlags.push({ file: f.file, flag: r.menu.visibleIf });
    }
    const actions = f.json['x-actions'] as Actions | undefined;
    if (actions) {
      const states = new Set(actions.states);
      const known = new Set(Object.keys(actions.actions ?? {}));
      if (actions.fallback && !states.has(actions.fallback))
        problems.push(`${f.file}: fallback state ${actions.fallback} is unknown`);
      for (const [state, list] of Object.entries(actions.table)) {
        if (!states.has(state))
          problems.push(`${f.file}: x-actions table names unknown state "${state}"`);
        for (const a of list)
          if (!known.has(a))
            problems.push(`${f.file}: x-actions table names unknown action "${a}"`);
      }
      for (const o of actions.overrides ?? []) {
        for (const s of o.states)
          if (!states.has(s))
            problems.push(`${f.file}: x-actions override names unknown state "${s}"`);
        for (const a of o.actions)
          if (!known.has(a))
            problems.push(`${f.file}: x-actions override names unknown action "${a}"`);
      }
      for (const [rule, def] of Object.entries(actions.rules ?? {}))
        for (const s of def.states)
          if (!states.has(s))
            problems.push(`${f.file}: x-actions rule ${rule} names unknown state "${s}"`);
      for (const [raw, s] of Object.entries(actions.valueMap ?? {}))
        if (!states.has(s))
          problems.push(`${f.file}: x-actions valueMap maps ${raw} to unknown state "${s}"`);
      const routeKinds = new Set([
        ...Object.keys((res as { routes?: Json } | undefined)?.routes ?? {}),
        ...Object.keys((res as { extraRoutes?: Json } | undefined)?.extraRoutes ?? {}),
      ]);
      for (const [a, def] of Object.entries(actions.actions ?? {})) {
        if (def.operation && !(res?.operations && def.operation in res.operations))
          problems.push(`${f.file}: action ${a} names unknown operation ${def.operation}`);
        if (def.permanent && !(res?.operations && def.permanent in res.operations))
          problems.push(
            `${f.file}: action ${a} names unknown permanent operation ${def.permanent}`,
          );
        if (def.route) {
          const [target, kind] = def.route.includes(':')
            ? def.route.split(':')
            : [undefined, def.route];
          const kinds = target ? routeKindsOf.get(target) : routeKinds;
          if (!kinds?.has(kind ?? ''))
            problems.push(`${f.file}: action ${a} opens route ${def.route}, which does not exist`);
        }
        const operation = def.operation ? res?.operations?.[def.operation] : undefined;
        for (const key of [...Object.keys(def.fill ?? {}), ...Object.keys(def.body ?? {})]) {
          if (!operation) continue;
          const inPath = operation.path.includes(`{${key}}`);
          const inBody = !!operation.request && hasPath(lookup, f.$id, operation.request, key);
          if (!inPath && !inBody)
            problems.push(
              `${f.file}: action ${a} sets ${key}, which is neither a path parameter nor a body field of ${def.operation}`,
            );
        }
        if (def.preview && !res?.operations?.[def.preview])
          problems.push(`${f.file}: action ${a} previews with unknown operation ${def.preview}`);
        if (def.names && res?.operations?.[def.names]?.method !== 'GET')
          problems.push(`${f.file}: action ${a} names its values with ${def.names}, not a read`);
        if (def.names && !def.form)
          problems.push(`${f.file}: action ${a} names the values of a form it does not ask`);
        if (def.body && !operation)
          problems.push(`${f.file}: action ${a} has a body but no operation`);
        if (def.form && !operation?.request && !operation?.params)
          problems.push(`${f.file}: action ${a} asks a form, but its operation takes no input`);
        const ways = [def.operation, def.route, def.handler].filter(Boolean).length;
        if (ways !== 1)
          problems.push(`${f.file}: action ${a} needs exactly one of operation, route and handler`);
        if (def.offer?.rule && !(def.offer.rule in (actions.rules ?? {})))
          problems.push(`${f.file}: action ${a} is offered by unknown rule ${def.offer.rule}`);
        // What the dialog asks: top-level fields of the request body (or path parameters).
        const input = operation?.request ?? operation?.params;
        const asks = (key: string) => !!input && hasPath(lookup, f.$id, input, key);
        if ((def.fields || def.prefill) && !def.form)
          problems.push(`${f.file}: action ${a} names fields or prefill but asks no form`);
        for (const key of [...(def.fields ?? []), ...Object.keys(def.prefill ?? {})])
          if (key.includes('.') || !asks(key))
            problems.push(
              `${f.file}: action ${a} asks ${key}, which is not a top-level input of ${def.operation}`,
            );
        if (def.result && !operation?.response)
          problems.push(`${f.file}: action ${a} shows a result, but ${def.operation} answers none`);
        if (def.resultHintWhen) {
          const answer = operation?.response
            ? schemaAt(lookup, f.$id, operation.response)
            : undefined;
          const field = (answer?.schema.properties as Record<string, Json> | undefined)?.[
            def.resultHintWhen
          ];
          if (!def.result || field?.type !== 'boolean')
            problems.push(
              `${f.file}: action ${a} shows its hint when ${def.resultHintWhen}, which is not a boolean field of the result it shows`,
            );
        }
        if (def.then) {
          const [target, kind] = def.then.includes(':')
            ? def.then.split(':')
            : [undefined, def.then];
          if (!(target ? routeKindsOf.get(target) : routeKinds)?.has(kind ?? ''))
            problems.push(`${f.file}: action ${a} then-route ${def.then} does not exist`);
        }
        if (def.section && !sectionsOf(f.json.properties).has(def.section))
          problems.push(
            `${f.file}: action ${a} is drawn in section ${def.section}, which no property has`,
          );
      }
    }
    const live = f.json['x-live'] as
      | {
          created?: string;
          updated?: string;
          deleted?: string;
          extra?: Record<string, string>;
          removeWhen?: { field: string; values: string[] };
        }
      | undefined;
    if (live) {
      for (const w of [
        live.created,
        live.updated,
        live.deleted,
        ...Object.values(live.extra ?? {}),
      ])
        if (w && !wires.has(w))
          problems.push(`${f.file}: x-live names wire event ${w} which is not in any x-events`);
      if (live.removeWhen) {
        if (!hasPath(lookup, f.$id, '#', live.removeWhen.field))
          problems.push(
            `${f.file}: x-live removeWhen field ${live.removeWhen.field} is not a property`,
          );
        const states =
          actions && actions.field === live.removeWhen.field ? new Set(actions.states) : null;
        for (const v of live.removeWhen.values)
          if (states && !states.has(v))
            problems.push(`${f.file}: x-live removeWhen value "${v}" is not an x-actions state`);
      }
    }
    const constraints = (f.json['x-constraints'] ?? {}) as Record<string, Constraint>;
    for (const [name, c] of Object.entries(constraints)) {
      if (!refOk(f.$id, c.schema)) {
        problems.push(`${f.file}: x-constraints ${name} schema ${c.schema} does not resolve`);
        continue;
      }
      for (const field of c.fields)
        if (!hasPath(lookup, f.$id, c.schema, field))
          problems.push(`${f.file}: x-constraints ${name} field ${field} is not in ${c.schema}`);
      if (c.limit) {
        if (!refOk(f.$id, c.limit.schema))
          problems.push(
            `${f.file}: x-constraints ${name} limit schema ${c.limit.schema} does not resolve`,
          );
        else if (!hasPath(lookup, f.$id, c.limit.schema, c.limit.field))
          problems.push(
            `${f.file}: x-constraints ${name} limit field ${c.limit.field} is not in ${c.limit.schema}`,
          );
      }
    }
    for (const { path, ui } of uiNodes(f.json)) {
      const opt = ui.options;
      if (typeof opt !== 'string') continue;
      const key = opt.includes('.') ? opt : `${res?.name ?? ''}.${opt}`;
      if (!opKeys.has(key))
        problems.push(`${f.file}: x-ui options at ${path || '/'} names unknown operation ${opt}`);
    }
    const events = f.json['x-events'] as
      Record<string, { payload: string; resource?: string }> | undefined;
    for (const [wire, def] of Object.entries(events ?? {})) {
      if (!refOk(f.$id, def.payload))
        problems.push(`${f.file}: event ${wire} payload ${def.payload} does not resolve`);
    }
  }
  for (const f of files) {
    const events = f.json['x-events'] as Record<string, { resource?: string }> | undefined;
    for (const [wire, def] of Object.entries(events ?? {}))
      if (def.resource && !resourceNames.has(def.resource))
        problems.push(`${f.file}: event ${wire} names unknown resource ${def.resource}`);
  }
  for (const f of files) {
    const list = ((f.json['x-ui'] ?? {}) as { list?: Json }).list as
      | {
          views?: string[];
          view?: string;
          card?: string;
          tabs?: Filter[];
          toggles?: Filter[];
          sort?: { field: string };
          preview?: number;
          empty?: { action?: string };
          details?: string;
          actions?: string[];
          keyColumns?: string[];
        }
      | undefined;
    if (list) {
      const res = f.json['x-resource'] as { routes?: Json; extraRoutes?: Json } | undefined;
      if (!res) problems.push(`${f.file}: x-ui.list needs an x-resource`);
      const views = list.views ?? (list.view ? [list.view] : []);
      if (list.view && !views.includes(list.view))
        problems.push(`${f.file}: x-ui.list view ${list.view} is not in views`);
      if (views.includes('cards') && !list.card)
        problems.push(`${f.file}: x-ui.list shows cards but names no card renderer`);
      const listOps = (res as { operations?: Json } | undefined)?.operations ?? {};
      for (const filter of [...(list.tabs ?? []), ...(list.toggles ?? [])]) {
        for (const field of [filter.field, filter.notMine])
          if (field && !hasPath(lookup, f.$id, '#', field))
            problems.push(`${f.file}: x-ui.list filter ${filter.key} names unknown field ${field}`);
        if (filter.operation && !(filter.operation in listOps))
          problems.push(
            `${f.file}: x-ui.list tab ${filter.key} is listed by unknown operation ${filter.operation}`,
          );
        if (!filter.field && !filter.operation && !filter.notMine)
          problems.push(`${f.file}: x-ui.list filter ${filter.key} filters nothing`);
        if (filter.visibleIf) menuFlags.push({ file: f.file, flag: filter.visibleIf });
      }
      if (list.sort && !hasPath(lookup, f.$id, '#', list.sort.field))
        problems.push(`${f.file}: x-ui.list sorts by unknown field ${list.sort.field}`);
      // The first records are read with the list operation's own limit.
      const listQuery = (listOps as Record<string, Operation | undefined>).list?.query;
      if (list.preview && !(listQuery && hasPath(lookup, f.$id, listQuery, 'limit')))
        problems.push(`${f.file}: x-ui.list preview needs a limit in the list operation's query`);
      for (const field of list.keyColumns ?? [])
        if (!hasPath(lookup, f.$id, '#', field))
          problems.push(`${f.file}: x-ui.list key column ${field} is an unknown field`);
      const kinds = new Set([
        ...Object.keys(res?.routes ?? {}),
        ...Object.keys(res?.extraRoutes ?? {}),
      ]);
      const actionNames = Object.keys(
        ((f.json['x-actions'] ?? {}) as { actions?: Json }).actions ?? {},
      );
      for (const name of list.actions ?? [])
        if (!actionNames.includes(name))
          problems.push(`${f.file}: x-ui.list action ${name} is not an x-actions action`);
      for (const kind of [list.empty?.action, list.details])
        if (kind && !kinds.has(kind))
          problems.push(
            `${f.file}: x-ui.list names route ${kind}, which the resource does not have`,
          );
    }
    const walkRoles = (node: unknown, path: string): void => {
      if (!node || typeof node !== 'object') return;
      for (const [k, v] of Object.entries(node as Json)) {
        if (k === 'x-roles' && path.includes('/properties/'))
          for (const set of Object.keys(v as Json))
            if (set !== 'read' && set !== 'write')
              problems.push(
                `${f.file}: field roles at ${path} name set ${set} (only read and write)`,
              );
        if (k !== 'x-roles') walkRoles(v, `${path}/${k}`);
      }
    };
    walkRoles(f.json, '');
  }
  const menuKeys = new Set<string>(resourceNames.keys());
  for (const f of files)
    for (const key of Object.keys((f.json['x-menu'] ?? {}) as Json)) {
      if (menuKeys.has(key))
        problems.push(`${f.file}: x-menu entry ${key} duplicates a resource or another entry`);
      menuKeys.add(key);
    }
  const configFile = files.find(
    (f) => (f.json['x-resource'] as { name?: string } | undefined)?.name === 'config',
  );
  for (const f of files) {
    for (const [key, def] of Object.entries((f.json['x-menu'] ?? {}) as Record<string, Json>)) {
      if (def.operation && !opKeys.has(String(def.operation)))
        problems.push(
          `${f.file}: x-menu entry ${key} names unknown operation ${String(def.operation)}`,
        );
      if (def.parent && !menuKeys.has(String(def.parent)))
        problems.push(`${f.file}: x-menu entry ${key} names unknown parent ${String(def.parent)}`);
      if (
        def.hrefFrom &&
        (!configFile || !hasPath(lookup, configFile.$id, '#', String(def.hrefFrom)))
      )
        problems.push(
          `${f.file}: x-menu entry ${key} hrefFrom ${String(def.hrefFrom)} is not a config property`,
        );
      if (def.kind === 'link' && !def.href === !def.hrefFrom)
        problems.push(`${f.file}: x-menu link ${key} needs exactly one of href and hrefFrom`);
      if (def.kind === 'download' && !def.operation)
        problems.push(`${f.file}: x-menu download ${key} needs an operation`);
    }
  }
  const config = files.find(
    (f) => f.json['x-resource'] && (f.json['x-resource'] as { name: string }).name === 'config',
  );
  for (const { file, flag } of menuFlags)
    if (!config || !hasPath(lookup, config.$id, '#', flag))
      problems.push(`${file}: menu visibleIf ${flag} is not a property of the config entity`);
  return problems;
}
