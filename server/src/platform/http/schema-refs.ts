/**
 * Maps the generated type names (operation rows say `request: "SessionUserLoginForm"`) to the
 * absolute $ref of the schema they come from, and back: the table is generated with the types
 * (src/generated/schemas.ts `typeRefs`), so the naming rule lives in scripts/codegen only.
 */
import { schemas, typeRefs } from '../../../../src/generated/schemas.ts';

type Json = Record<string, unknown>;

export const schemaList: readonly Json[] = schemas;

const refByType = new Map<string, string>(Object.entries(typeRefs));
const typeByRef = new Map<string, string>(
  Object.entries(typeRefs).map(([type, ref]) => [ref, type]),
);

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

export function allTypeRefs(): ReadonlyMap<string, string> {
  return refByType;
}

function absolutize(node: unknown, baseId: string): unknown {
  if (Array.isArray(node)) return node.map((n) => absolutize(n, baseId));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    out[k] =
      k === '$ref' && typeof v === 'string' ? new URL(v, baseId).href : absolutize(v, baseId);
  }
  return out;
}

/**
 * The schemas with every $ref made absolute: fast-json-stringify (response serialisation) does not
 * resolve relative refs against $id, ajv accepts both.
 */
export const absoluteSchemas: readonly Json[] = schemaList.map(
  (s) => absolutize(s, String(s.$id)) as Json,
);
