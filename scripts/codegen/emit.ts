/**
 * Emitters: each turns the loaded schemas into one generated file's text. Pure functions,
 * deterministic output (sorted keys, no timestamps), so codegen twice gives the same bytes.
 */
import type { SchemaFile } from './load.ts';
import { resolveRef } from './check.ts';

type Json = Record<string, unknown>;

export const pascal = (s: string) =>
  s
    .replace(/\.schema\.json$|\.json$/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

/** Flat key of a schema or one of its $defs, used for both type names and validator names. */
export function keyOf(file: SchemaFile, def?: string): string {
  const base = file.file.startsWith('common/') ? '' : String(file.json.title ?? pascal(file.file));
  return def ? `${base}${pascal(def)}` : base;
}

/** Map of absolute ref (id or id#/$defs/x) to flat key. */
export function refTable(files: SchemaFile[]): Map<string, string> {
  const table = new Map<string, string>();
  for (const f of files) {
    if (!f.file.startsWith('common/') && f.json.type) table.set(f.$id, keyOf(f));
    for (const def of Object.keys((f.json.$defs as Json | undefined) ?? {}).sort())
      table.set(`${f.$id}#/$defs/${def}`, keyOf(f, def));
  }
  return table;
}

function rewrite(node: unknown, from: string, table: Map<string, string>, keepUi = false): unknown {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, from, table, keepUi));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (
      (k.startsWith('x-') && !(keepUi && (k === 'x-ui' || k === 'x-roles'))) ||
      k === '$schema' ||
      k === '$id'
    )
      continue;
    if (k === '$ref' && typeof v === 'string') {
      const abs = resolveRef(from, v);
      const key = table.get(abs);
      if (!key) throw new Error(`unresolvable $ref ${v} in ${from}`);
      out.$ref = `#/$defs/${key}`;
    } else if (k === '$defs') continue;
    else out[k] = rewrite(v, from, table, keepUi);
  }
  return out;
}

/** One schema whose $defs hold every entity and definition, refs rewritten to local ones. */
export function flatSchema(files: SchemaFile[], keepUi = false): Json {
  const table = refTable(files);
  const defs: Json = {};
  for (const f of files) {
    if (!f.file.startsWith('common/') && f.json.type) {
      defs[keyOf(f)] = { ...(rewrite(f.json, f.$id, table, keepUi) as Json), title: keyOf(f) };
    }
    for (const [name, def] of Object.entries((f.json.$defs as Json | undefined) ?? {})) {
      defs[keyOf(f, name)] = {
        ...(rewrite(def, f.$id, table, keepUi) as Json),
        title: keyOf(f, name),
      };
    }
  }
  const sorted: Json = {};
  for (const k of Object.keys(defs).sort()) sorted[k] = defs[k];
  return {
    title: 'PortalSchemas',
    type: 'object',
    additionalProperties: false,
    properties: {},
    $defs: sorted,
  };
}

export interface OperationRow {
  key: string;
  resource: string;
  name: string;
  base: 'api' | 'auth';
  method: string;
  path: string;
  body: 'none' | 'json' | 'form';
  access: string;
  roles: string[] | null;
  tokenTypes: string[];
  request: string | null;
  response: string | null;
  query: string | null;
  params: string | null;
  timeoutMs: number | null;
  /** declared but not built: the server answers 501 and the SPA hides what needs it */
  planned: boolean;
  /** the answer is an array of the response type (list operations whose response is one item) */
  responseList: boolean;
}

const ALL_ROLES = ['admin', 'manager', 'advanced', 'user'];

/** True when the schema a ref names is an array (list operations that already answer arrays). */
function isArraySchema(files: SchemaFile[], from: string, ref: string): boolean {
  const abs = resolveRef(from, ref);
  const [id = '', pointer = ''] = abs.split('#');
  let node: unknown = files.find((f) => f.$id === id)?.json;
  for (const part of pointer.split('/').filter(Boolean)) node = (node as Json | undefined)?.[part];
  return (node as Json | undefined)?.type === 'array';
}

/** The TypeScript request and response types of every operation (params, query, body, response). */
export function operationTypes(rows: OperationRow[]): string {
  const names = new Set<string>();
  const lines = rows.map((o) => {
    const params = pathParamNames(o.path);
    const paramsType = o.params
      ? o.params
      : params.length
        ? `{ ${params.map((p) => `${p}: string`).join('; ')} }`
        : 'Record<string, never>';
    for (const t of [o.params, o.query, o.request, o.response]) if (t) names.add(t);
    const response = o.response ? (o.responseList ? `${o.response}[]` : o.response) : 'unknown';
    return `  '${o.key}': {\n    params: ${paramsType};\n    query: ${o.query ?? 'undefined'};\n    body: ${o.request ?? 'undefined'};\n    response: ${response};\n  };`;
  });
  return `import type { ${[...names].sort().join(', ')} } from './types';\n\n/** Request and response types of every operation, by key. */\nexport interface OperationTypes {\n${lines.join('\n')}\n}\nexport type OperationKey = keyof OperationTypes;\nexport type OperationParams<K extends OperationKey> = OperationTypes[K]['params'];\nexport type OperationQuery<K extends OperationKey> = OperationTypes[K]['query'];\nexport type OperationBody<K extends OperationKey> = OperationTypes[K]['body'];\nexport type OperationResponse<K extends OperationKey> = OperationTypes[K]['response'];\n`;
}

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
}

export function operations(files: SchemaFile[]): OperationRow[] {
  const table = refTable(files);
  const rows: OperationRow[] = [];
  for (const f of files) {
    const res = f.json['x-resource'] as
      { name: string; operations?: Record<string, Json> } | undefined;
    if (!res) continue;
    const roles = (f.json['x-roles'] ?? {}) as Record<string, string[]>;
    for (const [name, op] of Object.entries(res.operations ?? {}).sort(([a], [b]) =>
      a.localeCompare(b),
    )) {
      const access = String(op.access);
      const ref = (k: string) =>
        op[k] ? (table.get(resolveRef(f.$id, String(op[k]))) ?? null) : null;
      rows.push({
        key: `${res.name}.${name}`,
        resource: res.name,
        name,
        base: (op.base as 'api' | 'auth' | undefined) ?? 'api',
        method: String(op.method),
        path: String(op.path),
        body: (op.body as OperationRow['body'] | undefined) ?? 'none',
        access,
        roles: access === 'public' ? null : access === 'token' ? ALL_ROLES : (roles[access] ?? []),
        tokenTypes: (op.tokenTypes as string[] | undefined) ?? [],
        request: ref('request'),
        response: ref('response'),
        query: ref('query'),
        params: ref('params'),
        timeoutMs: (op.timeoutMs as number | undefined) ?? null,
        planned: op.planned === true,
        responseList:
          name === 'list' && !!op.response && !isArraySchema(files, f.$id, String(op.response)),
      });
    }
  }
  return rows.sort((a, b) => a.key.localeCompare(b.key));
}

export interface FieldRow {
  path: string;
  type: string;
  required: boolean;
  nullable: boolean;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  step?: number;
  widget: string;
  order: number;
  section?: string;
  unit?: string;
  options?: string;
  optionsWhen?: Record<string, unknown[]>;
  hidden: boolean;
  secret: boolean;
  column: boolean;
  card: boolean;
  filter: boolean;
  /** description_codes a server answer reports for this field */
  codes?: string[];
  /** roles that may set (write) or see (read) the field; absent = every role the operation allows */
  roles?: { read?: string[]; write?: string[] };
  /** arrays of objects: the generated type of one item */
  items?: string;
}

/** Fields of one flat definition, nested objects flattened to dotted paths. */
export function fieldsOf(flat: Json, key: string): FieldRow[] {
  const defs = flat.$defs as Record<string, Json>;
  const deref = (s: Json): Json => {
    let cur = s;
    const ui = (s['x-ui'] ?? {}) as Json;
    // follow $ref chains; siblings of an inner $ref win over the target (draft 2019 style), the chain is bounded
    for (let depth = 0; typeof cur.$ref === 'string'; depth++) {
      if (depth > 32) throw new Error(`$ref chain too deep at ${cur.$ref}`);
      const { $ref, ...rest } = cur;
      cur = { ...(defs[$ref.replace('#/$defs/', '')] ?? {}), ...(cur === s ? {} : rest) };
    }
    return { ...cur, 'x-ui': { ...((cur['x-ui'] as Json | undefined) ?? {}), ...ui } };
  };
  const itemsType = (s: Json): string | null => {
    const items = s.items as Json | undefined;
    if (!items || typeof items.$ref !== 'string') return null;
    const name = items.$ref.replace('#/$defs/', '');
    return defs[name]?.properties ? name : null;
  };
  /** `anyOf: [<object with properties>, { type: null }]`: the object, else null. */
  const nullableObject = (s: Json): Json | null => {
    const variants = Array.isArray(s.anyOf) ? (s.anyOf as Json[]) : [];
    if (variants.length !== 2) return null;
    const isNull = (v: Json) => v.type === 'null' || v.const === null;
    const other = variants.find((v) => !isNull(v));
    if (!other || !variants.some(isNull)) return null;
    const object = deref(other);
    return object.type === 'object' && object.properties ? object : null;
  };
  const out: FieldRow[] = [];
  // A hidden object hides its fields: a show answer's `owner` or `allowed` stays out of the screen.
  // Fields without a section of their own take their nullable parent's (`parentSection`).
  const walk = (
    schema: Json,
    prefix: string,
    requiredSet: Set<string>,
    parentHidden = false,
    parentSection?: string,
  ) => {
    const props = (schema.properties ?? {}) as Record<string, Json>;
    for (const [name, raw] of Object.entries(props)) {
      const s = deref(raw);
      const ui: Json = {
        ...(parentSection ? { section: parentSection } : {}),
        ...((s['x-ui'] ?? {}) as Json),
      };
      const path = prefix ? `${prefix}.${name}` : name;
      const types = Array.isArray(s.type) ? (s.type as string[]) : s.type ? [String(s.type)] : [];
      // An object or null (a quota of its own, or none): one row for the object itself (its
      // widget switches it between null and an object), then its fields under its path.
      const optional = ui.widget ? null : nullableObject(s);
      if (optional) types.push('object', 'null');
      const main =
        types.find((t) => t !== 'null') ?? (s.enum ? 'enum' : s.anyOf ? 'any' : 'unknown');
      if (main === 'object' && s.properties && !ui.widget) {
        walk(
          s,
          path,
          new Set((s.required as string[] | undefined) ?? []),
          parentHidden || ui.hidden === true,
        );
        continue;
      }
      const widget = String(
        ui.widget ??
          (optional
            ? 'nullableObject'
            : s.enum
              ? 'select'
              : main === 'boolean'
                ? 'switch'
                : main === 'integer' || main === 'number'
                  ? 'number'
                  : main === 'array'
                    ? 'multiSelect'
                    : 'text'),
      );
      // A hidden one shows none of its fields, so they are left out.
      if (optional && !(parentHidden || ui.hidden === true))
        walk(
          optional,
          path,
          new Set((optional.required as string[] | undefined) ?? []),
          false,
          typeof ui.section === 'string' ? ui.section : undefined,
        );
      // A list of enum values offers the item enum as its choices (roles, displays).
      const itemEnum =
        main === 'array' && s.items
          ? (deref(s.items as Json).enum as unknown[] | undefined)
          : undefined;
      out.push({
        path,
        type: s.enum ? 'enum' : main,
        required: requiredSet.has(name),
        nullable: types.includes('null'),
        ...(s.enum ? { enum: s.enum as unknown[] } : itemEnum ? { enum: itemEnum } : {}),
        ...(typeof s.minimum === 'number' ? { minimum: s.minimum } : {}),
        ...(typeof s.maximum === 'number' ? { maximum: s.maximum } : {}),
        ...(typeof s.minLength === 'number' ? { minLength: s.minLength } : {}),
        ...(typeof s.maxLength === 'number' ? { maxLength: s.maxLength } : {}),
        ...(typeof ui.step === 'number'
          ? { step: ui.step }
          : typeof s.multipleOf === 'number'
            ? { step: s.multipleOf }
            : {}),
        widget,
        order: typeof ui.order === 'number' ? ui.order : 100,
        ...(ui.section ? { section: String(ui.section) } : {}),
        ...(ui.unit ? { unit: String(ui.unit) } : {}),
        ...(ui.options ? { options: String(ui.options) } : {}),
        ...(ui.optionsWhen ? { optionsWhen: ui.optionsWhen as Record<string, unknown[]> } : {}),
        hidden: parentHidden || ui.hidden === true,
        secret: ui.secret === true,
        column: ui.column === true,
        card: ui.card === true,
        filter: ui.filter === true,
        ...(Array.isArray(ui.codes) ? { codes: ui.codes as string[] } : {}),
        ...(raw['x-roles'] ? { roles: raw['x-roles'] as FieldRow['roles'] } : {}),
        ...(itemsType(s) ? { items: itemsType(s) as string } : {}),
      });
    }
  };
  const root = defs[key];
  if (!root) throw new Error(`no definition ${key}`);
  walk(deref(root), '', new Set((deref(root).required as string[] | undefined) ?? []));
  return out.sort((a, b) => a.order - b.order || a.path.localeCompare(b.path));
}

export const banner = '// Generated by scripts/codegen from schema/. Do not edit.\n';
export const literal = (v: unknown) => JSON.stringify(v, null, 2);
