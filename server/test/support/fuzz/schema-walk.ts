/**
 * Reads the request schemas of the operation table (src/generated/schemas.ts): resolves a
 * generated type name and its $refs, lists every property of a body (the "sites" a fuzz case
 * mutates, nested objects and the first item of arrays included) and builds a valid sample
 * value of any sub-schema, so that one hostile value can be set at one site of an otherwise
 * valid body.
 */
import { schemas, typeRefs } from '../../../../src/generated/schemas.ts';

export type Json = null | boolean | number | string | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}

/** The JSON Schema keywords this walk reads (draft-07 plus $defs). */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  minProperties?: number;
  items?: Schema | Schema[];
  minItems?: number;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
}

/** A schema with its $refs followed: the document it lives in and the refs that led to it. */
export interface Resolved {
  schema: Schema;
  base: string;
  refs: readonly string[];
}

export type PathSegment = string | number;

/** One place in a body: a property of an object or the first item of an array. */
export interface Site {
  path: readonly PathSegment[];
  key: string | null;
  node: Resolved;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const documents = new Map<string, unknown>();
for (const doc of schemas as readonly unknown[]) {
  if (isRecord(doc) && typeof doc.$id === 'string') documents.set(doc.$id, doc);
}

function pointer(doc: unknown, fragment: string): unknown {
  let node = doc;
  for (const raw of fragment.split('/').filter(Boolean)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isRecord(node) ? node[key] : undefined;
  }
  return node;
}

function at(absoluteRef: string): { node: Schema; base: string } {
  const [base = '', fragment = ''] = absoluteRef.split('#');
  const node = pointer(documents.get(base), fragment);
  if (!isRecord(node)) throw new Error(`fuzz: schema ${absoluteRef} not found`);
  return { node: node as Schema, base };
}

/** Follows $ref (relative to the document's $id) and merges allOf, until a plain schema is left. */
export function resolve(schema: Schema, base: string, refs: readonly string[] = []): Resolved {
  let node = schema;
  let where = base;
  const chain = [...refs];
  for (let hops = 0; node.$ref !== undefined; hops++) {
    if (hops > 32) throw new Error(`fuzz: $ref loop at ${chain.join(' -> ')}`);
    const absolute = new URL(node.$ref, where).href;
    chain.push(absolute);
    ({ node, base: where } = at(absolute));
  }
  if (node.allOf) {
    const parts = node.allOf.map((part) => resolve(part, where).schema);
    const merged: Schema = { ...node };
    delete merged.allOf;
    for (const part of parts) {
      merged.type ??= part.type;
      merged.properties = { ...merged.properties, ...part.properties };
      merged.required = [...(merged.required ?? []), ...(part.required ?? [])];
    }
    node = merged;
  }
  return { schema: node, base: where, refs: chain };
}

/** The request, query or params schema of a generated type name (`DesktopUpdate`). */
export function schemaOfType(typeName: string): Resolved {
  const ref = typeRefs[typeName];
  if (ref === undefined) throw new Error(`fuzz: no schema for type ${typeName}`);
  return resolve({ $ref: ref }, ref);
}

/** The branch of an anyOf/oneOf used for samples: the first one that is not `null` or `false`. */
function mainBranch(node: Resolved): Resolved {
  const branches = node.schema.anyOf ?? node.schema.oneOf;
  if (!branches) return node;
  const resolved = branches.map((b) => resolve(b, node.base, node.refs));
  const chosen =
    resolved.find((b) => b.schema.type !== 'null' && b.schema.const !== false) ?? resolved[0];
  return chosen ? mainBranch(chosen) : node;
}

/** JSON type names a schema admits; empty when it admits anything. */
export function typesOf(node: Resolved): string[] {
  const { schema } = node;
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return [...new Set(branches.flatMap((b) => typesOf(resolve(b, node.base))))];
  if (schema.type !== undefined) return Array.isArray(schema.type) ? schema.type : [schema.type];
  const values = schema.enum ?? ('const' in schema ? [schema.const] : undefined);
  if (values) return [...new Set(values.map((v) => jsonType(v)))];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** Whether a value of JSON type `type` may appear where `types` are allowed. */
export function admits(types: readonly string[], type: string): boolean {
  if (types.length === 0) return true;
  return types.includes(type) || (type === 'integer' && types.includes('number'));
}

function itemsOf(node: Resolved): Resolved | undefined {
  const { items } = node.schema;
  if (!items) return undefined;
  const first = Array.isArray(items) ? items[0] : items;
  return first ? resolve(first, node.base) : undefined;
}

/** The sub-schema one step down: a property of an object or the items of an array. */
export function child(node: Resolved, segment: PathSegment): Resolved | undefined {
  const main = mainBranch(node);
  if (typeof segment === 'number') return itemsOf(main);
  const prop = main.schema.properties?.[segment];
  return prop ? resolve(prop, main.base) : undefined;
}

/** Every property of the body schema, depth first in declaration order, down to `maxDepth`. */
export function sitesOf(root: Resolved, maxDepth = 6): Site[] {
  const sites: Site[] = [];
  const walk = (node: Resolved, path: PathSegment[], seen: ReadonlySet<Schema>) => {
    if (path.length >= maxDepth) return;
    const main = mainBranch(node);
    if (seen.has(main.schema)) return;
    const next = new Set(seen).add(main.schema);
    for (const key of Object.keys(main.schema.properties ?? {})) {
      const sub = child(main, key);
      if (!sub) continue;
      sites.push({ path: [...path, key], key, node: sub });
      walk(sub, [...path, key], next);
    }
    const item = itemsOf(main);
    if (item) {
      sites.push({ path: [...path, 0], key: null, node: item });
      walk(item, [...path, 0], next);
    }
  };
  walk(root, [], new Set());
  return sites;
}

const ID_DEF = /\/common\/defs\.json#\/\$defs\/id$/;

/** A property that names an object by id: `id`, `*_id`, `*Id`, or the shared `id` definition. */
export function isIdSite(site: Pick<Site, 'key' | 'node'>): boolean {
  if (site.key !== null && /^(id|.*_id|.*Id)$/.test(site.key)) return true;
  return site.node.refs.some((ref) => ID_DEF.test(ref));
}

/** Supplies ids of real objects for id properties while a sample is built. */
export type ReferenceOf = (path: readonly PathSegment[], key: string | null) => string;

const FORMAT_SAMPLES: Record<string, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  'date-time': '2030-01-01T10:00:00Z',
  date: '2030-01-01',
  time: '10:00:00Z',
  email: 'fuzz@example.org',
  uri: 'https://example.org/',
  'uri-reference': '/fuzz',
  hostname: 'example.org',
  ipv4: '10.0.0.1',
  ipv6: '::1',
};

let stringSerial = 0;

/**
 * Candidate samples for a string, the first ones unique to each call: two cases never collide on
 * a name that must be unique (a second desktop with the same name would be refused for that).
 */
function stringCandidates(): string[] {
  const n = ++stringSerial;
  return [
    `fuzz sample ${n}`,
    `fuzz-sample-${n}`,
    `fuzzsample${n}`,
    `sample${n}.png`,
    '2030-01-01T10:00+0000',
    'abcd',
    'a',
    'A',
    '1',
  ];
}

function sampleString(schema: Schema): string {
  if (schema.format !== undefined && FORMAT_SAMPLES[schema.format] !== undefined)
    return FORMAT_SAMPLES[schema.format] ?? '';
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Infinity;
  const pattern = schema.pattern !== undefined ? new RegExp(schema.pattern, 'u') : undefined;
  for (const candidate of stringCandidates()) {
    const value = candidate.length < min ? candidate.padEnd(min, 'a') : candidate;
    if (value.length <= max && (!pattern || pattern.test(value))) return value;
  }
  return 'fuzz'.padEnd(min, 'a').slice(0, Math.max(min, Math.min(4, max)));
}

function sampleNumber(schema: Schema, integer: boolean): number {
  const step = schema.multipleOf ?? (integer ? 1 : undefined);
  let value =
    schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
  if (step !== undefined) value = Math.ceil(value / step) * step;
  if (schema.maximum !== undefined && value > schema.maximum) value = schema.maximum;
  return value;
}

/**
 * A valid value for `node`: its const, default or first enum value, or one built from its type
 * (objects with their required properties, arrays with `minItems` items, at least `minItems` 1
 * when `nonEmpty`). Id properties get a real id from `referenceOf`.
 */
export function sample(
  node: Resolved,
  referenceOf: ReferenceOf,
  path: readonly PathSegment[] = [],
  key: string | null = null,
  nonEmpty = false,
): Json {
  const main = mainBranch(node);
  const { schema } = main;
  if ('const' in schema) return schema.const as Json;
  if (schema.default !== undefined) return schema.default as Json;
  if (schema.enum) return (schema.enum.find((v) => v !== null) ?? null) as Json;
  const type = typesOf(main).find((t) => t !== 'null') ?? (typesOf(main)[0] || 'object');
  switch (type) {
    case 'string':
      return isIdSite({ key, node: main }) ? referenceOf(path, key) : sampleString(schema);
    case 'integer':
      return sampleNumber(schema, true);
    case 'number':
      return sampleNumber(schema, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const item = itemsOf(main);
      const count = Math.max(schema.minItems ?? 0, nonEmpty ? 1 : 0);
      return item
        ? Array.from({ length: count }, (_, i) => sample(item, referenceOf, [...path, i]))
        : [];
    }
    default: {
      const out: JsonObject = {};
      const props = Object.keys(schema.properties ?? {});
      const wanted = new Set(schema.required ?? []);
      if ((schema.minProperties ?? 0) > wanted.size)
        for (const p of props.slice(0, schema.minProperties)) wanted.add(p);
      for (const prop of props) {
        if (!wanted.has(prop)) continue;
        const sub = child(main, prop);
        if (sub) out[prop] = sample(sub, referenceOf, [...path, prop], prop);
      }
      return out;
    }
  }
}

/**
 * A valid body with `value` at `path`: the containers on the way are built from their schemas
 * (with their required properties) when the minimal sample does not have them.
 */
export function bodyWith(
  root: Resolved,
  referenceOf: ReferenceOf,
  path: readonly PathSegment[],
  value: Json,
): Json {
  const body = sample(root, referenceOf);
  if (path.length === 0) return value;
  let node: Resolved | undefined = root;
  let container: Json = body;
  for (let i = 0; i < path.length; i++) {
    const segment = path[i] ?? '';
    const last = i === path.length - 1;
    node = node ? child(node, segment) : undefined;
    if (typeof segment === 'number') {
      if (!Array.isArray(container)) throw new Error(`fuzz: no array at ${path.join('.')}`);
      if (last) container[segment] = value;
      else {
        container[segment] ??= node
          ? sample(node, referenceOf, path.slice(0, i + 1), null, true)
          : {};
        container = container[segment] ?? null;
      }
    } else {
      if (container === null || typeof container !== 'object' || Array.isArray(container))
        throw new Error(`fuzz: no object at ${path.join('.')}`);
      if (last) container[segment] = value;
      else {
        const nextSegment = path[i + 1];
        const existing: Json | undefined = container[segment];
        const needsItem = typeof nextSegment === 'number';
        if (existing === undefined || (needsItem && Array.isArray(existing) && !existing.length))
          container[segment] = node
            ? sample(node, referenceOf, path.slice(0, i + 1), segment, needsItem)
            : needsItem
              ? []
              : {};
        container = container[segment] ?? null;
      }
    }
  }
  return body;
}
