/**
 * Maps the generated type names (operation rows say `request: "SessionUserLoginForm"`) to the
 * absolute $ref of the schema they come from, and back. Same naming rule as scripts/codegen:
 * entity title + PascalCase def name; common defs keep their own name.
 */
import { schemas } from '../../../src/generated/schemas.ts';

type Json = Record<string, unknown>;

export const pascal = (s: string) =>
  s
    .replace(/\.schema\.json$|\.json$/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

export const schemaList = schemas as unknown as readonly Json[];

function baseName(schema: Json): string {
  const id = String(schema.$id);
  if (id.includes('/schema/common/')) return '';
  return String(schema.title ?? pascal(id.split('/').pop() ?? ''));
}

const refByType = new Map<string, string>();
const typeByRef = new Map<string, string>();
for (const schema of schemaList) {
  const id = String(schema.$id);
  const base = baseName(schema);
  if (base && schema.type) {
    refByType.set(base, id);
    typeByRef.set(id, base);
  }
  for (const def of Object.keys((schema.$defs as Json | undefined) ?? {})) {
    const ref = `${id}#/$defs/${def}`;
    refByType.set(`${base}${pascal(def)}`, ref);
    typeByRef.set(ref, `${base}${pascal(def)}`);
  }
}

/** Absolute $ref (`https://.../session.json#/$defs/loginForm`) of a generated type name. */
export function refOf(typeName: string): string {
  const ref = refByType.get(typeName);
  if (!ref) throw new Error(`no schema for generated type ${typeName}`);
  return ref;
}

/** Generated type name of an absolute ref, if it names a whole schema or one of its $defs. */
export function typeOfRef(ref: string): string | undefined {
  return typeByRef.get(ref.endsWith('#') ? ref.slice(0, -1) : ref);
}

/** true when the generated type names an array schema (list responses that are already arrays). */
export function isArrayType(typeName: string): boolean {
  const [id, pointer] = refOf(typeName).split('#');
  const schema = schemaList.find((s) => s.$id === id);
  const def = pointer ? ((schema?.$defs as Json | undefined)?.[pointer.replace('/$defs/', '')] as Json | undefined) : schema;
  return def?.type === 'array';
}

export function allTypeRefs(): ReadonlyMap<string, string> {
  return refByType;
}

function absolutize(node: unknown, baseId: string): unknown {
  if (Array.isArray(node)) return node.map((n) => absolutize(n, baseId));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    out[k] = k === '$ref' && typeof v === 'string' ? new URL(v, baseId).href : absolutize(v, baseId);
  }
  return out;
}

/**
 * The schemas with every $ref made absolute: fast-json-stringify (response serialisation) does not
 * resolve relative refs against $id, ajv accepts both.
 */
export const absoluteSchemas: readonly Json[] = schemaList.map((s) => absolutize(s, String(s.$id)) as Json);
