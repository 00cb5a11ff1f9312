/**
 * The compilers behind request validation and response serialisation, shared by every app built in
 * this process and compiled once per distinct schema.
 *
 * Fastify's default serializer hands every shared schema (all of src/generated/schemas.ts) to
 * fast-json-stringify for each route and status code, which walks, validates and indexes all of
 * them again each time: most of an app's start-up. Here a response serialiser gets only the schemas
 * its $refs reach, and a schema met again (another route, another app in the same process: the
 * tests build many) reuses the compiled function. The ajv instances are built once per process for
 * the same reason; a compiled validator is a pure function of its schema.
 *
 * A route's validators and serialisers compile when the route first needs them, so the portal
 * listens without compiling some 400 schemas first; `compilePending` compiles everything not yet
 * compiled (the contract test calls it, so a schema ajv or fast-json-stringify refuses still fails
 * the suite).
 */
import fastJson from 'fast-json-stringify';
import type { AnySchema, ValidateFunction } from 'ajv';
import { createAjv } from './schema-ajv.ts';
import { absoluteSchemas } from './schema-refs.ts';

type Json = Record<string, unknown>;

const schemaById = new Map<string, Json>(absoluteSchemas.map((s) => [String(s.$id), s]));

/** The ids of the shared schemas that `node`'s $refs reach, directly or through each other. */
function reachedSchemas(node: unknown, found: Set<string>): Set<string> {
  if (Array.isArray(node)) {
    for (const item of node) reachedSchemas(item, found);
  } else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node as Json)) {
      if (key === '$ref' && typeof value === 'string') {
        const id = value.split('#')[0] ?? '';
        const target = schemaById.get(id);
        if (target && !found.has(id)) {
          found.add(id);
          reachedSchemas(target, found);
        }
      } else reachedSchemas(value, found);
    }
  }
  return found;
}

/** Compilations asked for and not yet done, by cache key. */
const pending = new Map<string, () => unknown>();

/** Compiles every validator and serialiser asked for so far; throws the first refusal. */
export function compilePending(): number {
  const count = pending.size;
  for (const compile of [...pending.values()]) compile();
  return count;
}

const serializers = new Map<string, (data: unknown) => string>();

function compiledSerializer(schema: unknown, key: string): (data: unknown) => string {
  let serialize = serializers.get(key);
  if (!serialize) {
    type FjsSchema = Parameters<typeof fastJson>[0];
    const externals: Record<string, FjsSchema> = {};
    for (const id of reachedSchemas(schema, new Set()))
      externals[id] = (schemaById.get(id) ?? {}) as unknown as FjsSchema;
    serialize = fastJson(schema as FjsSchema, { schema: externals });
    serializers.set(key, serialize);
  }
  pending.delete(key);
  return serialize;
}

/** The response serialiser of `schema`, compiled on first use. */
export function serializerFor(schema: unknown): (data: unknown) => string {
  const key = JSON.stringify(schema);
  const compiled = serializers.get(key);
  if (compiled) return compiled;
  let serialize: ((data: unknown) => string) | undefined;
  const compile = () => (serialize ??= compiledSerializer(schema, key));
  pending.set(key, compile);
  return (data) => compile()(data);
}

type Part = 'body' | 'params';
let ajvs: Record<Part, ReturnType<typeof createAjv>> | undefined;
const validators = new Map<string, ValidateFunction>();

/**
 * Bodies are validated as sent (no coercion); querystring, params and headers arrive as strings
 * and are coerced.
 */
function ajvFor(part: Part): ReturnType<typeof createAjv> {
  if (!ajvs) {
    const options = { verbose: true, code: { source: false, lines: false } };
    ajvs = {
      body: createAjv({ ...options, coerceTypes: false }),
      params: createAjv({ ...options, coerceTypes: 'array' }),
    };
    for (const schema of absoluteSchemas) {
      ajvs.body.addSchema(schema as AnySchema);
      ajvs.params.addSchema(schema as AnySchema);
    }
  }
  return ajvs[part];
}

function compiledValidator(schema: unknown, part: Part, key: string): ValidateFunction {
  let validate = validators.get(key);
  if (!validate) {
    validate = ajvFor(part).compile(schema as AnySchema);
    validators.set(key, validate);
  }
  pending.delete(key);
  return validate;
}

/** What fastify calls: it reads the errors of a failed call from the function's `errors`. */
interface Validator {
  (data: unknown): boolean;
  errors?: ValidateFunction['errors'];
}

/** The validator of a request part's schema, compiled on first use. */
export function validatorFor(schema: unknown, httpPart: string | undefined): Validator {
  const part: Part = httpPart === 'body' ? 'body' : 'params';
  const key = `${part} ${JSON.stringify(schema)}`;
  const compiled = validators.get(key);
  if (compiled) return compiled;
  let validate: ValidateFunction | undefined;
  const compile = () => (validate ??= compiledValidator(schema, part, key));
  pending.set(key, compile);
  const lazy: Validator = (data) => {
    const run = compile();
    const valid = run(data) as boolean;
    lazy.errors = run.errors;
    return valid;
  };
  return lazy;
}
