/**
 * Codegen: schema/ -> src/generated/. Runs before dev, build, typecheck and test.
 * Usage: tsx scripts/codegen/index.ts [--schema DIR] [--out DIR] [--check-only]
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import standaloneCode from 'ajv/dist/standalone/index.js';
import { compile } from 'json-schema-to-typescript';
import { createAjv } from '../../server/src/platform/http/schema-ajv.ts';
import { loadSchemas, type SchemaFile } from './load.ts';
import { checkSchemas, resolveRef, schemaLookup } from './check.ts';
import { emitDb } from './emit-db-code.ts';
import { emitPolicy, policyProblems } from './emit-policy.ts';
import { operationTypes } from './emit.ts';
import { banner, fieldsOf, flatSchema, keyOf, literal, operations, refTable } from './emit.ts';

type Json = Record<string, unknown>;

export interface CodegenOptions {
  schemaDir: string;
  outDir?: string;
  checkOnly?: boolean;
}

/**
 * Schemas known good: a file's content that passed the meta-schema, and a file whose compilation
 * succeeded together with everything it references (by digest). A later check in the same process
 * (the codegen tests, a watcher) skips that work for what did not change; anything that did change
 * is validated and compiled again.
 */
const metaValid = new Set<string>();
const compiledOk = new Set<string>();

const digest = (text: string) => createHash('sha1').update(text).digest('hex');

/** The `$id`s of the files a schema refers to (its `$ref`s, resolved against its `$id`). */
function referencedIds(json: unknown, from: string, into: Set<string>): Set<string> {
  if (Array.isArray(json)) for (const item of json) referencedIds(item, from, into);
  else if (json && typeof json === 'object')
    for (const [key, value] of Object.entries(json))
      if (key === '$ref' && typeof value === 'string')
        into.add(resolveRef(from, value).split('#')[0] ?? '');
      else referencedIds(value, from, into);
  return into;
}

/**
 * For each file, a digest of its content and of every file it reaches through `$ref`s: what its
 * compilation depends on.
 */
function closureDigests(files: readonly SchemaFile[]): Map<string, string> {
  const own = new Map(files.map((f) => [f.$id, digest(JSON.stringify(f.json))]));
  const refs = new Map(files.map((f) => [f.$id, referencedIds(f.json, f.$id, new Set())]));
  const closures = new Map<string, string>();
  for (const f of files) {
    const reached = new Set([f.$id]);
    const queue = [f.$id];
    while (queue.length) {
      for (const next of refs.get(queue.pop() ?? '') ?? [])
        if (!reached.has(next)) {
          reached.add(next);
          queue.push(next);
        }
    }
    closures.set(
      f.$id,
      digest(
        [...reached]
          .sort()
          .map((id) => `${id} ${own.get(id) ?? 'missing'}`)
          .join('\n'),
      ),
    );
  }
  return closures;
}

/** Validates the schemas; throws with every problem listed. Returns the loaded files and ajv. */
export function validateSchemas(schemaDir: string) {
  const files = loadSchemas(schemaDir);
  const ajv = createAjv();
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const f of files) {
    const other = seen.get(f.$id);
    if (other) {
      problems.push(`${f.file}: duplicate $id ${f.$id} (also in ${other})`);
      continue;
    }
    seen.set(f.$id, f.file);
    const content = digest(JSON.stringify(f.json));
    try {
      ajv.addSchema(f.json, undefined, undefined, !metaValid.has(content));
      metaValid.add(content);
    } catch (e) {
      problems.push(`${f.file}: ${(e as Error).message}`);
    }
  }
  if (problems.length === 0) {
    const closures = closureDigests(files);
    for (const f of files) {
      const closure = closures.get(f.$id) ?? '';
      if (compiledOk.has(closure)) continue;
      try {
        ajv.getSchema(f.$id);
        for (const def of Object.keys((f.json.$defs as Json | undefined) ?? {}))
          ajv.getSchema(`${f.$id}#/$defs/${def}`);
        compiledOk.add(closure);
      } catch (e) {
        problems.push(`${f.file}: ${(e as Error).message}`);
      }
    }
    problems.push(...checkSchemas(schemaLookup(files), files), ...policyProblems(files));
  }
  if (problems.length) throw new Error(`schema check failed:\n- ${problems.join('\n- ')}`);
  return { files, ajv };
}

const RESOURCE_TYPES = `import type { Role, UserConfig } from './types';
export interface RecordFilter {
  key: string;
  /** a tab listed by another operation of the resource (default list) */
  operation?: string;
  params?: Readonly<Record<string, string>>;
  /** owner field: only records another user owns */
  notMine?: string;
  field?: string;
  values?: readonly (string | number | boolean | null)[];
  visibleIf?: keyof UserConfig;
}
export interface FormRoute {
  /** operation of the resource the form calls */
  operation: string;
  /** generated type of its request body */
  type: string | null;
  /** route opened after success: a route kind of the resource or <resource>:<kind> */
  then: string;
  /** read operation whose answer the page shows above the form */
  preview?: string;
  /** the preview renderer the preview's answer definition names (x-ui.widget); absent = item lists */
  previewWidget?: string;
  /** query: the call's bearer is the page's ?token= when present */
  token?: 'query';
  /** after success instead of the then-route: a done text, logging in with the same token, a countdown to the login, or the operation's answer */
  after?: 'message' | 'continueLogin' | 'loginCountdown' | 'answer' | 'answerContinue';
  /** logout: the page offers a cancel that ends the session */
  cancel?: 'logout';
}
export interface ListDefinition {
  view?: 'cards' | 'table';
  views?: readonly ('cards' | 'table')[];
  card?: string;
  tabs?: readonly RecordFilter[];
  toggles?: readonly RecordFilter[];
  sort?: { field: string; order?: 'asc' | 'desc' };
  /** records drawn first (the list operation's limit query) while the whole list loads */
  preview?: number;
  empty?: { icon?: string; action?: string };
  details?: string;
  title?: string;
  /** table columns a phone shows; default: the title (or first) column and the first state column */
  keyColumns?: readonly string[];
  actions?: readonly string[];
}
export interface LiveDefinition {
  created?: string;
  updated?: string;
  deleted?: string;
  extra?: Readonly<Record<string, string>>;
  patch?: boolean;
  /** with patch: created/updated events carry the whole list record, which replaces the cached one */
  whole?: boolean;
  removeWhen?: { field: string; values: readonly string[] };
  /** records that also live inside a parent's show answer: the parent, the field naming it, the list path */
  parent?: { resource: string; field: string; path: string };
}
export interface ResourceDefinition {
  name: string;
  identifier?: string;
  list?: string;
  create?: string;
  edit?: string;
  show?: string;
  meta: {
    label: string;
    icon: string | null;
    order: number;
    parent: string | null;
    hide: boolean;
    roles: readonly Role[] | null;
    routeNames: Readonly<Record<string, string>>;
    entity: string;
    operations: readonly string[];
    listKey: string | null;
    idField: string;
    live: LiveDefinition | null;
    extraRoutes: Readonly<Record<string, string>>;
    /** extra routes that are an operation's generated form: its operation, request type, next route */
    forms: Readonly<Record<string, FormRoute>>;
    /** one record per user: the show route has no id and the show operation none */
    singleton: boolean;
    /** read operation whose answer gives the edit form the update fields the show answer lacks */
    editPrefill: string | null;
    visibleIf: keyof UserConfig | null;
    list: ListDefinition | null;
    /** generated type names of the list item, create and update bodies and show answer */
    types: { list: string | null; create: string | null; update: string | null; show: string | null };
  };
}
`;

function resourcesOf(files: SchemaFile[]) {
  return files
    .filter((f) => f.json['x-resource'])
    .map((f) => {
      const res = f.json['x-resource'] as Json & {
        name: string;
        routes?: Json;
        menu?: Json;
        routeNames?: Json;
        operations?: Json;
      };
      const roles = (f.json['x-roles'] ?? {}) as Record<string, string[]>;
      const table = refTable(files);
      const typeOf = (op: string, part: 'request' | 'response'): string | null => {
        const ref = (res.operations?.[op] as Json | undefined)?.[part];
        return typeof ref === 'string' ? (table.get(resolveRef(f.$id, ref)) ?? null) : null;
      };
      // The renderer an operation's answer definition names (`x-ui.widget` on the definition).
      const answerWidget = (op: string | undefined): string | null => {
        const ref = op ? (res.operations?.[op] as Json | undefined)?.response : undefined;
        if (typeof ref !== 'string') return null;
        const [base, pointer = ''] = resolveRef(f.$id, ref).split('#');
        const file = files.find((other) => other.$id === base);
        const node = pointer.startsWith('/$defs/')
          ? ((file?.json.$defs ?? {}) as Record<string, Json>)[pointer.slice('/$defs/'.length)]
          : file?.json;
        const widget = ((node?.['x-ui'] ?? {}) as Json).widget;
        return typeof widget === 'string' ? widget : null;
      };
      return {
        name: res.name,
        ...(res.identifier ? { identifier: res.identifier } : {}),
        ...(res.routes ?? {}),
        meta: {
          label: `resources:${res.name}.title`,
          icon: (res.menu?.icon as string | undefined) ?? null,
          order: (res.menu?.order as number | undefined) ?? 100,
          parent: (res.menu?.parent as string | undefined) ?? null,
          hide: res.menu?.hide === true || !res.routes?.list,
          roles: roles.view ?? null,
          routeNames: res.routeNames ?? {},
          entity: keyOf(f),
          operations: Object.keys(res.operations ?? {}).sort(),
          listKey: (res.listKey as string | undefined) ?? null,
          idField: (res.idField as string | undefined) ?? 'id',
          live: f.json['x-live'] ?? null,
          extraRoutes: (res.extraRoutes as Record<string, string> | undefined) ?? {},
          forms: Object.fromEntries(
            Object.entries(
              (res.forms as Record<string, Json & { operation: string }> | undefined) ?? {},
            ).map(([kind, { operation, then, ...rest }]) => {
              const previewWidget = answerWidget(rest.preview as string | undefined);
              return [
                kind,
                {
                  operation,
                  type: typeOf(operation, 'request'),
                  then: (then as string | undefined) ?? 'list',
                  ...rest,
                  ...(previewWidget ? { previewWidget } : {}),
                },
              ];
            }),
          ),
          singleton: res.singleton === true,
          editPrefill: (res.editPrefill as string | undefined) ?? null,
          visibleIf: (res.menu?.visibleIf as string | undefined) ?? null,
          list: ((f.json['x-ui'] as Json | undefined)?.list as Json | undefined) ?? null,
          types: {
            list: f.json.type ? keyOf(f) : null,
            create: typeOf('create', 'request'),
            update: typeOf('update', 'request'),
            show: typeOf('show', 'response'),
          },
        },
      };
    })
    .sort((a, b) => a.meta.order - b.meta.order || a.name.localeCompare(b.name));
}

function menuOf(files: SchemaFile[]) {
  const entries: Json[] = [];
  for (const f of files) {
    const res = f.json['x-resource'] as
      { name: string; routes?: { list?: string }; menu?: Json; operations?: Json } | undefined;
    // A singleton's entry opens its show route (the profile).
    const single = (res as { singleton?: boolean } | undefined)?.singleton === true;
    const path =
      res?.routes?.list ?? (single ? (res?.routes as Json | undefined)?.show : undefined);
    if (res && typeof path === 'string' && res.menu?.hide !== true) {
      const roles = (f.json['x-roles'] ?? {}) as Record<string, string[]>;
      entries.push({
        key: res.name,
        kind: 'resource',
        order: (res.menu?.order as number | undefined) ?? 100,
        icon: (res.menu?.icon as string | undefined) ?? null,
        parent: (res.menu?.parent as string | undefined) ?? null,
        path,
        href: null,
        hrefFrom: null,
        external: false,
        operation:
          res.operations && (single ? 'show' : 'list') in res.operations
            ? `${res.name}.${single ? 'show' : 'list'}`
            : null,
        roles: roles.view ?? null,
        visibleIf: (res.menu?.visibleIf as string | undefined) ?? null,
        planned: false,
      });
    }
    for (const [key, def] of Object.entries((f.json['x-menu'] ?? {}) as Record<string, Json>)) {
      entries.push({
        key,
        kind: def.kind,
        order: def.order,
        icon: def.icon,
        parent: (def.parent as string | undefined) ?? null,
        path: null,
        href: (def.href as string | undefined) ?? null,
        hrefFrom: (def.hrefFrom as string | undefined) ?? null,
        external: def.external === true,
        operation: (def.operation as string | undefined) ?? null,
        roles: (def.roles as string[] | undefined) ?? null,
        visibleIf: null,
        planned: def.planned === true,
      });
    }
  }
  return entries.sort(
    (a, b) => Number(a.order) - Number(b.order) || String(a.key).localeCompare(String(b.key)),
  );
}

export async function runCodegen({ schemaDir, outDir, checkOnly }: CodegenOptions) {
  const { files, ajv } = validateSchemas(schemaDir);
  if (checkOnly || !outDir) return { files };
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const write = (name: string, text: string) => writeFileSync(join(outDir, name), text);

  // 1. types
  const flat = flatSchema(files);
  const ts = await compile(flat as never, 'PortalSchemas', {
    bannerComment: '',
    unreachableDefinitions: true,
    additionalProperties: false,
    declareExternallyReferenced: true,
    strictIndexSignatures: true,
    format: false,
  });
  write('types.ts', `${banner}/* eslint-disable */\n${ts}`);

  // 2. bundled schemas (server addSchema, OpenAPI)
  const typeRefs = Object.fromEntries(
    [...refTable(files).entries()]
      .map(([ref, key]): [string, string] => [key, ref])
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  write(
    'schemas.ts',
    `${banner}export const schemas = ${literal(files.map((f) => f.json))} as const;\n\n/** Generated type name -> absolute $ref of its schema (same names as types.ts and validators.js). */\nexport const typeRefs: Record<string, string> = ${literal(typeRefs)};\n`,
  );

  // 3. precompiled validators
  const table = refTable(files);
  const refs: Record<string, string> = {};
  for (const [ref, key] of [...table.entries()].sort(([, a], [, b]) => a.localeCompare(b)))
    refs[key] = ref;
  const standalone = (subset: Record<string, string>, runtime: string) => {
    const code = standaloneCode(ajv, subset)
      .replaceAll('require("ajv/dist/runtime/ucs2length").default', '__rt.ucs2length')
      .replaceAll('require("ajv/dist/runtime/equal").default', '__rt.equal')
      .replace(/require\("ajv-formats\/dist\/formats"\)\.fullFormats/g, '__rt.formats');
    if (code.includes('require('))
      throw new Error(
        'validators still contain require(): add the module to common/validator-runtime.ts',
      );
    return `${banner}/* eslint-disable */\n// @ts-nocheck\nimport * as __rt from '${runtime}';\n${code.replace('"use strict";', '')}\n`;
  };
  write('validators.js', standalone(refs, '../../common/validator-runtime'));
  // One small module per form body (create and update of each resource): a form loads only its own.
  // Forms are the create and update bodies, the form routes' bodies and those of form actions.
  const actionFormTypes = files.flatMap((f) => {
    const res = f.json['x-resource'] as { operations?: Record<string, Json> } | undefined;
    const acts = (f.json['x-actions'] as { actions?: Record<string, Json> } | undefined)?.actions;
    return Object.values(acts ?? {}).flatMap((def) => {
      const op = res?.operations?.[def.operation as string];
      // The form of an operation without a body asks its path parameters (a disk's increase).
      const ref = op?.request ?? op?.params;
      return def.form === true && typeof ref === 'string'
        ? [table.get(resolveRef(f.$id, ref)) ?? null]
        : [];
    });
  });
  const formTypes = [
    ...new Set([
      ...resourcesOf(files).flatMap((r) => [
        r.meta.types.create,
        r.meta.types.update,
        ...Object.values(r.meta.forms).map((form) => form.type),
      ]),
      ...actionFormTypes,
    ]),
  ]
    .filter((t): t is string => typeof t === 'string' && t in refs)
    .sort();
  mkdirSync(join(outDir, 'form-validators'), { recursive: true });
  const kebab = (t: string) => t.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  for (const t of formTypes) {
    write(
      `form-validators/${kebab(t)}.js`,
      standalone({ [t]: refs[t] as string }, '../../../common/validator-runtime'),
    );
    write(
      `form-validators/${kebab(t)}.d.ts`,
      `${banner}import type { ValidateFunction } from 'ajv';\nexport declare const ${t}: ValidateFunction;\n`,
    );
  }
  write(
    'form-validators.ts',
    `${banner}import type { ValidateFunction } from 'ajv';\n\n/** Loads the precompiled validator of a form body (its own small chunk). */\nexport const formValidators: Readonly<Record<string, () => Promise<ValidateFunction>>> = {\n${formTypes
      .map((t) => `  ${t}: () => import('./form-validators/${kebab(t)}.js').then((m) => m.${t}),`)
      .join('\n')}\n};\n`,
  );
  write(
    'validators.d.ts',
    `${banner}import type { ValidateFunction } from 'ajv';\n${Object.keys(refs)
      .map((k) => `export declare const ${k}: ValidateFunction;`)
      .join('\n')}\n`,
  );
  write(
    'validator-keys.ts',
    `${banner}export const validatorKeys = ${literal(Object.keys(refs))} as const;\nexport type ValidatorKey = (typeof validatorKeys)[number];\n`,
  );

  // 4. operation/endpoint table and role tables
  const ops = operations(files);
  write(
    'api.ts',
    `${banner}import type { Role } from './types';\nexport interface Operation {\n  key: string;\n  resource: string;\n  name: string;\n  base: 'api' | 'auth';\n  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';\n  path: string;\n  body: 'none' | 'json' | 'form';\n  access: string;\n  roles: readonly Role[] | null;\n  tokenTypes: readonly string[];\n  request: string | null;\n  response: string | null;\n  query: string | null;\n  params: string | null;\n  timeoutMs: number | null;\n  planned: boolean;\n  responseList: boolean;\n}\nexport const operations = ${literal(Object.fromEntries(ops.map((o) => [o.key, o])))} as const satisfies Record<string, Operation>;\nexport type OperationKey = keyof typeof operations;\n`,
  );
  write('operation-types.ts', `${banner}${operationTypes(ops)}`);
  const roleTable: Record<string, Record<string, string[]>> = {};
  for (const f of files) {
    const res = f.json['x-resource'] as { name: string } | undefined;
    if (res) roleTable[res.name] = (f.json['x-roles'] ?? {}) as Record<string, string[]>;
  }
  write(
    'roles.ts',
    `${banner}import type { Role } from './types';\nexport const roles = ['admin', 'manager', 'advanced', 'user'] as const satisfies readonly Role[];\nexport const roleSets = ${literal(roleTable)} as const satisfies Record<string, Record<string, readonly Role[]>>;\n`,
  );

  // 5. refine resources
  write(
    'resources.ts',
    `${banner}${RESOURCE_TYPES}export const resources = ${literal(resourcesOf(files))} as const satisfies readonly ResourceDefinition[];\nexport type ResourceName = (typeof resources)[number]['name'];\n/** The same list, typed by the common definition (optional routes readable on every entry). */\nexport const resourceList: readonly ResourceDefinition[] = resources;\n/** One resource by name. */\nexport function resourceOf(name: string): ResourceDefinition | undefined {\n  return resourceList.find((r) => r.name === name);\n}\n`,
  );

  // 5b. navbar: the resources' list routes (x-resource.menu) and the x-menu entries, by order
  write(
    'menu.ts',
    `${banner}import type { Role, UserConfig } from './types';\nimport type { OperationKey } from './api';\nexport interface MenuEntry {\n  key: string;\n  kind: 'resource' | 'link' | 'download' | 'logout' | 'group';\n  order: number;\n  icon: string | null;\n  parent: string | null;\n  /** resource entries: the list route */\n  path: string | null;\n  href: string | null;\n  hrefFrom: keyof UserConfig | null;\n  external: boolean;\n  /** the operation the entry needs: a resource's list, a download's call */\n  operation: OperationKey | null;\n  /** null = every logged-in role */\n  roles: readonly Role[] | null;\n  visibleIf: keyof UserConfig | null;\n  planned: boolean;\n}\nexport const menu = ${literal(menuOf(files))} as const satisfies readonly MenuEntry[];\n`,
  );

  // 5c. storage: drizzle tables and row <-> wire mapping (x-db)
  write('db.ts', emitDb(files, banner));

  // 6. state-action tables
  const actions: Record<string, unknown> = {};
  for (const f of files) {
    const res = f.json['x-resource'] as { name: string } | undefined;
    if (res && f.json['x-actions']) actions[res.name] = f.json['x-actions'];
  }
  write('actions.ts', `${banner}export const stateActions = ${literal(actions)} as const;\n`);
  write('policy.ts', emitPolicy(files, banner));

  // 7. socket event map
  const events: Record<string, Json> = {};
  for (const f of files) {
    for (const [wire, def] of Object.entries((f.json['x-events'] ?? {}) as Record<string, Json>)) {
      const payloadKey = table.get(
        new URL(String(def.payload).split('#')[0] || f.$id, f.$id).href +
          (String(def.payload).includes('#') ? `#${String(def.payload).split('#')[1]}` : ''),
      );
      events[wire] = { ...def, payloadType: payloadKey };
    }
  }
  const wires = Object.keys(events).sort();
  const ev = (w: string) => events[w] ?? {};
  const eventTypeImports = [...new Set(wires.map((w) => String(ev(w).payloadType)))].sort();
  write(
    'events.ts',
    `${banner}import type { ${eventTypeImports.join(', ')} } from './types';\nexport const events = ${literal(Object.fromEntries(wires.map((w) => [w, ev(w)])))} as const;\nexport type WireEvent = keyof typeof events;\nexport type EventName = (typeof events)[WireEvent]['name'];\nexport interface EventPayloads {\n${wires.map((w) => `  '${String(ev(w).name)}': ${String(ev(w).payloadType)};`).join('\n')}\n}\n/** socket.io ServerToClientEvents, keyed by wire name */\nexport interface ServerToClientEvents {\n${wires.map((w) => `  '${w}': (payload: ${String(ev(w).payloadType)}) => void;`).join('\n')}\n}\nexport const wireByName = ${literal(Object.fromEntries(wires.map((w) => [ev(w).name, w])))} as const;\n`,
  );

  // 7b. documented constants and cross-field rules (x-constants, x-constraints), keyed by resource or type name
  const constants: Record<string, unknown> = {};
  const constraints: Record<string, unknown> = {};
  for (const f of files) {
    const owner = (f.json['x-resource'] as { name: string } | undefined)?.name ?? keyOf(f);
    if (f.json['x-constants']) constants[owner] = f.json['x-constants'];
    const c = f.json['x-constraints'] as Record<string, Json> | undefined;
    if (c)
      constraints[owner] = Object.fromEntries(
        Object.entries(c).map(([name, rule]) => [
          name,
          {
            ...rule,
            schemaType: table.get(resolveRef(f.$id, String(rule.schema))) ?? null,
            ...(rule.limit
              ? {
                  limitType:
                    table.get(resolveRef(f.$id, String((rule.limit as Json).schema))) ?? null,
                }
              : {}),
          },
        ]),
      );
  }
  // the `default` of every definition (an object's defaults gathered from its properties), by type name
  const defaults: Record<string, unknown> = {};
  for (const f of files)
    for (const [def, schema] of Object.entries((f.json.$defs ?? {}) as Record<string, Json>)) {
      if (schema.default !== undefined) defaults[keyOf(f, def)] = schema.default;
      else if (schema.properties) {
        const inner = Object.entries(schema.properties as Record<string, Json>).filter(
          ([, p]) => p.default !== undefined,
        );
        if (inner.length)
          defaults[keyOf(f, def)] = Object.fromEntries(inner.map(([k, p]) => [k, p.default]));
      }
    }
  write(
    'constants.ts',
    `${banner}export const constants = ${literal(constants)} as const;\nexport const constraints = ${literal(constraints)} as const;\n/** Schema defaults by generated type name. */\nexport const defaults = ${literal(Object.fromEntries(Object.entries(defaults).sort(([a], [b]) => a.localeCompare(b))))} as const;\n`,
  );

  // 8. field metadata for forms and lists
  const flatUi = flatSchema(files, true);
  const fields: Record<string, unknown> = {};
  const sections: Record<string, unknown> = {};
  const extensions: Record<string, string> = {};
  // Only the shapes screens show: list items, and what operations send and answer (with the item
  // types of their lists); nested objects are flattened into their parent's fields.
  const shown = new Set<string>();
  for (const r of resourcesOf(files)) if (r.meta.types.list) shown.add(r.meta.types.list);
  for (const o of ops) for (const t of [o.request, o.response]) if (t) shown.add(t);
  for (const t of actionFormTypes) if (t) shown.add(t);
  const flatDefs = flatUi.$defs as Record<string, Json>;
  const queue = [...shown];
  for (let key = queue.pop(); key !== undefined; key = queue.pop()) {
    const def = flatDefs[key];
    if (!def) continue;
    for (const meta of def.type === 'object' && def.properties ? fieldsOf(flatUi, key) : [])
      if (meta.items && !shown.has(meta.items)) {
        shown.add(meta.items);
        queue.push(meta.items);
      }
    const items = (def.items as Json | undefined)?.$ref;
    if (typeof items === 'string') {
      const name = items.replace('#/$defs/', '');
      if (!shown.has(name)) {
        shown.add(name);
        queue.push(name);
      }
    }
  }
  for (const key of Object.keys(flatUi.$defs as Json)) {
    const def = (flatUi.$defs as Record<string, Json>)[key];
    if (shown.has(key) && def?.type === 'object' && def.properties)
      fields[key] = fieldsOf(flatUi, key);
    const order = ((def?.['x-ui'] ?? {}) as Json).sections;
    if (Array.isArray(order)) sections[key] = order;
    const extension = ((def?.['x-ui'] ?? {}) as Json).form;
    if (typeof extension === 'string') extensions[key] = extension;
  }
  write(
    'fields.ts',
    `${banner}import type { Role } from './types';\nexport interface FieldMeta {\n  path: string;\n  type: string;\n  required: boolean;\n  nullable: boolean;\n  enum?: readonly unknown[];\n  minimum?: number;\n  maximum?: number;\n  minLength?: number;\n  maxLength?: number;\n  step?: number;\n  widget: string;\n  order: number;\n  section?: string;\n  unit?: string;\n  options?: string;\n  optionsWhen?: Readonly<Record<string, readonly unknown[]>>;\n  hidden: boolean;\n  secret: boolean;\n  column: boolean;\n  card: boolean;\n  filter: boolean;\n  codes?: readonly string[];\n  roles?: { read?: readonly Role[]; write?: readonly Role[] };\n  items?: string;\n}\nexport const fields = ${literal(fields)} as const satisfies Record<string, readonly FieldMeta[]>;\n/** Form section order of a type (x-ui.sections); sections not listed follow in field order. */\nexport const formSections: Readonly<Record<string, readonly string[]>> = ${literal(sections)};\n/** The registered form extension of a type (x-ui.form). */\nexport const formExtensions: Readonly<Record<string, string>> = ${literal(extensions)};\n`,
  );
  // 9. description codes for validation failures (x-error), matched on the ajv error's schemaPath
  const codes: [string, string][] = [];
  const collect = (node: unknown, pointer: string) => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((n, i) => collect(n, `${pointer}/${i}`));
    const obj = node as Json;
    for (const [keyword, code] of Object.entries(
      (obj['x-error'] ?? {}) as Record<string, string>,
    )) {
      codes.push([`${pointer}/${keyword}`, code]);
      const rel = pointer.replace(/^\/\$defs\/[^/]+/, '');
      if (rel !== pointer) codes.push([`${rel}/${keyword}`, code]);
    }
    for (const [k, v] of Object.entries(obj))
      if (!k.startsWith('x-')) collect(v, `${pointer}/${k}`);
  };
  for (const f of files) collect(f.json, '');
  const uniqueCodes = [
    ...new Map(codes.map(([k, v]) => [`${k}=${v}`, [k, v] as const])).values(),
  ].sort(([a], [b]) => b.length - a.length || a.localeCompare(b));
  // 10. the description codes of a quota or limit refusal (the quota popup's), from $defs.quotaCode
  const defs = files.find((f) => f.file.replace(/\\/g, '/') === 'common/defs.schema.json');
  const quotaCodes = ((defs?.json.$defs as Json | undefined)?.quotaCode as Json | undefined)?.enum;
  if (!Array.isArray(quotaCodes) || !quotaCodes.every((code) => typeof code === 'string'))
    throw new Error('common/defs.schema.json: $defs.quotaCode needs an enum of description codes');
  write(
    'error-codes.ts',
    `${banner}/** schemaPath suffix -> description_code, longest suffix first. */\nexport const errorCodes = ${literal(uniqueCodes)} as const;\n\n/** The description_code of one ajv error: its x-error code, else the ajv keyword. */\nexport function errorCodeOf(error: { schemaPath: string; keyword: string }): string {\n  for (const [suffix, code] of errorCodes) if (error.schemaPath.endsWith(suffix)) return code;\n  return error.keyword;\n}\n\n/** The description_codes of a quota or limit refusal ($defs.quotaCode): the quota popup's. */\nexport const quotaCodes: readonly string[] = ${literal(quotaCodes)};\n\n/** Whether a description_code is a quota or limit refusal. */\nexport function isQuotaCode(code: string | null | undefined): boolean {\n  return !!code && quotaCodes.includes(code);\n}\n`,
  );
  return { files };
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const root = resolve(import.meta.dirname, '../..');
  const started = performance.now();
  runCodegen({
    schemaDir: resolve(arg('--schema') ?? join(root, 'schema')),
    outDir: resolve(arg('--out') ?? join(root, 'src/generated')),
    checkOnly: process.argv.includes('--check-only'),
  })
    .then(({ files }) =>
      console.log(
        `codegen: ${files.length} schema files ok (${Math.round(performance.now() - started)} ms)`,
      ),
    )
    .catch((e: Error) => {
      console.error(e.message);
      process.exit(1);
    });
}
