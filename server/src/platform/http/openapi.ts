/**
 * OpenAPI 3.1 document built from the operation table and the schemas: every operation with its
 * parameters, request body, response and the error schema; bearer security on token routes.
 * Planned operations (declared, not built yet) carry `x-planned: true`, say so in their summary and
 * document their 501 not_implemented answer.
 */
import { operations, type Operation } from '../../../../src/generated/api.ts';
import { allTypeRefs, schemaList, typeOfRef } from './schema-refs.ts';
import { pathParams, responseSchemaOf, API_BASE, AUTH_BASE } from './route.ts';
import type { Access } from './access.ts';

type Json = Record<string, unknown>;

/** Rewrites $refs (relative or absolute) to #/components/schemas/<Type>; drops $id/$schema/$defs. */
function rewrite(node: unknown, baseId: string): unknown {
  if (Array.isArray(node)) return node.map((n) => rewrite(n, baseId));
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$id' || k === '$schema' || k === '$defs') continue;
    if (k === '$ref' && typeof v === 'string') {
      const abs = new URL(v, baseId).href;
      const type = typeOfRef(abs);
      out.$ref = type ? `#/components/schemas/${type}` : v;
      continue;
    }
    out[k] = rewrite(v, baseId);
  }
  return out;
}

/**
 * Every named type as a component schema. The schemas are the generated ones, fixed for the life of
 * the process: made once, on first use, and shared by every app the process builds (a test worker
 * builds many).
 */
let components: Json | undefined;
function componentSchemas(): Json {
  components ??= makeComponentSchemas();
  return components;
}

function makeComponentSchemas(): Json {
  const out: Json = {};
  const byId = new Map(schemaList.map((s) => [String(s.$id), s]));
  for (const [type, ref] of allTypeRefs()) {
    const [id = '', pointer] = ref.split('#');
    const root = byId.get(id);
    if (!root) continue;
    const def = pointer ? (root.$defs as Json | undefined)?.[pointer.replace('/$defs/', '')] : root;
    out[type] = rewrite(def, id);
  }
  return out;
}

const componentRef = (schema: Json | undefined): Json | undefined =>
  schema ? (rewrite(schema, 'https://vdi-portal.dev/') as Json) : undefined;

export function buildOpenApi(access: Access, version: string): Json {
  const paths: Record<string, Json> = {};
  for (const op of Object.values(operations) as Operation[]) {
    const url = (op.base === 'auth' ? AUTH_BASE : API_BASE) + op.path;
    const roles = access.rolesFor(op);
    const parameters: Json[] = pathParams(op.path).map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    if (op.query) {
      const q = componentSchemas()[op.query] as
        { properties?: Json; required?: string[] } | undefined;
      for (const [name, schema] of Object.entries(q?.properties ?? {})) {
        parameters.push({
          name,
          in: 'query',
          required: q?.required?.includes(name) ?? false,
          schema,
        });
      }
    }
    const response = componentRef(responseSchemaOf(op));
    const errorRef = { $ref: '#/components/schemas/Error' };
    const item: Json = {
      operationId: op.key,
      tags: [op.resource],
      parameters,
      responses: {
        200: {
          description: 'OK',
          content: response
            ? { 'application/json': { schema: response } }
            : { 'application/json': {} },
        },
        default: { description: 'Error', content: { 'application/json': { schema: errorRef } } },
      },
      'x-access': op.access,
      'x-roles': roles,
    };
    if (op.key === 'session.login') {
      (item.responses as Json)[200] = {
        description: 'The raw JWT',
        content: { 'text/plain': { schema: { type: 'string' } } },
      };
    }
    if (op.body !== 'none' && op.request) {
      const schema = { $ref: `#/components/schemas/${op.request}` };
      item.requestBody = {
        required: true,
        content:
          op.body === 'form'
            ? { 'application/x-www-form-urlencoded': { schema }, 'multipart/form-data': { schema } }
            : { 'application/json': { schema } },
      };
    }
    if (roles !== null) item.security = [{ bearer: [] }];
    if (op.planned) {
      item['x-planned'] = true;
      item.summary = 'Not implemented yet (answers 501)';
      item.description =
        roles === null
          ? 'Declared but not built yet: answers 501 not_implemented.'
          : 'Declared but not built yet: answers 501 not_implemented after the token and role checks (401 without a valid token, 403 for a role outside x-roles).';
      (item.responses as Json)[501] = {
        description: 'Not implemented yet',
        content: { 'application/json': { schema: errorRef } },
      };
    }
    paths[url] = { ...paths[url], [op.method.toLowerCase()]: item };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'vdi-portal API', version },
    paths,
    components: {
      schemas: componentSchemas(),
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
