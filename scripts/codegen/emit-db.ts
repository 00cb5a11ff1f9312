/**
 * Storage from the schema (`x-db`): one drizzle `pgTable` per entity with `x-db.table`, its row
 * types, and the row <-> wire mapping of the entity and of each `$defs` shape that carries stored
 * fields (show answers, create and update bodies). drizzle-kit reads the emitted tables to write
 * the SQL migrations in server/migrations.
 */
import type { SchemaFile } from './load.ts';
import { resolveRef } from './check.ts';
import { keyOf, refTable } from './emit.ts';

type Json = Record<string, unknown>;

export type SqlType =
  'text' | 'integer' | 'bigint' | 'double' | 'boolean' | 'jsonb' | 'timestamptz' | 'uuid';

interface ColumnOptions {
  column?: string;
  sql?: SqlType;
  nullable?: boolean;
  default?: unknown;
  defaultNow?: boolean;
  primaryKey?: boolean;
  unique?: boolean;
  references?: string;
  onDelete?: 'cascade' | 'set null' | 'restrict';
  enumCheck?: boolean;
  values?: string[];
  schema?: string;
  tsType?: string;
  /** a read-only wire property computed by this SQL expression in every read */
  computed?: string;
}

export interface Column {
  /** row key (camel case of the column) */
  key: string;
  column: string;
  sql: SqlType;
  nullable: boolean;
  options: ColumnOptions;
  /** wire property the column stores (entity properties), else null (extra columns) */
  wire: string | null;
  /** wire name used to match $defs properties: the property name, or the column name */
  name: string;
  /** the wire type accepts null (a nullable column whose wire type does not is sent as absent) */
  wireNullable: boolean;
  /** how a value crosses the wire: epoch seconds or ISO text for timestamps */
  conversion: 'plain' | 'epoch' | 'iso';
  /** TypeScript type given to the column with $type<>(), if any */
  tsType: string | null;
  /** the values of a CHECK (column IN ...) */
  check: string[] | null;
  /** shape signature, to match same-named $defs properties */
  shape: string;
}

export interface Table {
  file: string;
  entity: string;
  table: string;
  variable: string;
  columns: Column[];
  indexes: { name: string; columns: string[]; unique: boolean; where: string | null }[];
  owner: string | null;
  category: string | null;
  version: string | null;
  /** read-only wire properties computed in every read (x-db.computed): row key, wire name, SQL */
  computed: { key: string; name: string; sql: string }[];
  /** wire properties the audit snapshots leave out (x-secret) */
  secrets: string[];
  /** $defs shapes with stored fields: type name -> [property, column key] */
  shapes: { type: string; fields: Column[]; read: boolean; write: boolean }[];
}

const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** Resolves $ref chains across files; returns the final schema and the last ref's type name. */
function resolver(files: SchemaFile[]) {
  const byId = new Map(files.map((f) => [f.$id, f.json as Json]));
  const types = refTable(files);
  const at = (abs: string): Json | undefined => {
    const [id = '', pointer = ''] = abs.split('#');
    let node: unknown = byId.get(id);
    for (const part of pointer.split('/').filter(Boolean))
      node = (node as Json | undefined)?.[part];
    return node as Json | undefined;
  };
  return function resolve(
    base: string,
    schema: Json,
  ): { schema: Json; type: string | null; base: string } {
    let cur = schema;
    let from = base;
    let type: string | null = null;
    for (let depth = 0; typeof cur.$ref === 'string'; depth++) {
      if (depth > 32) throw new Error(`$ref chain too deep at ${cur.$ref}`);
      const abs = resolveRef(from, cur.$ref);
      type = types.get(abs) ?? type;
      const next = at(abs);
      if (!next) throw new Error(`unresolvable $ref ${cur.$ref} in ${from}`);
      from = abs.split('#')[0] ?? from;
      cur = next;
    }
    return { schema: cur, type, base: from };
  };
}

function jsonTypes(schema: Json): string[] {
  if (Array.isArray(schema.type)) return (schema.type as string[]).filter((t) => t !== 'null');
  if (typeof schema.type === 'string') return schema.type === 'null' ? [] : [schema.type];
  if (Array.isArray(schema.enum))
    return [
      ...new Set((schema.enum as unknown[]).map((v) => (v === null ? 'null' : typeof v))),
    ].filter((t) => t !== 'null');
  if (Array.isArray(schema.anyOf)) return ['any'];
  return [];
}

function allowsNull(schema: Json): boolean {
  if (Array.isArray(schema.type)) return (schema.type as string[]).includes('null');
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).includes(null);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).some((s) => s.type === 'null');
  return false;
}

function stable(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stable).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.entries(value as Json)
      .filter(([k]) => !k.startsWith('x-') && k !== 'description')
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}:${stable(v)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

type Resolve = ReturnType<typeof resolver>;

/** Same-shape test for a property of a $def and a stored column: scalars by JSON type, objects by type. */
function shapeOf(resolve: Resolve, base: string, schema: Json): string {
  const { schema: s, type } = resolve(base, schema);
  const types = jsonTypes(s);
  if (types.includes('object') || types.includes('array')) return `obj:${type ?? stable(s)}`;
  return `scalar:${types
    .map((t) => (t === 'integer' ? 'number' : t))
    .sort()
    .join('|')}`;
}

function inferSql(s: Json): SqlType {
  const types = jsonTypes(s);
  if (types.includes('object') || types.includes('array') || types.includes('any')) return 'jsonb';
  if (types.length === 1 && types[0] === 'integer') return 'integer';
  if (types.length === 1 && types[0] === 'number') return 'double';
  if (types.length === 1 && types[0] === 'boolean') return 'boolean';
  if (types.length === 1 && types[0] === 'string') return 'text';
  throw new Error(`cannot infer a column type for ${JSON.stringify(s)}: give x-db.sql`);
}

/** Every table declared by the schemas, in file order. */
export function tablesOf(files: SchemaFile[]): Table[] {
  const resolve = resolver(files);
  const types = refTable(files);
  const tables: Table[] = [];
  for (const f of files) {
    const root = f.json['x-db'] as (Json & { table?: string }) | undefined;
    if (!root?.table) continue;
    const entity = keyOf(f);
    const required = new Set((f.json.required as string[] | undefined) ?? []);
    const columns: Column[] = [];
    const computed: Table['computed'] = [];
    const secrets: string[] = [];
    for (const [name, prop] of Object.entries((f.json.properties ?? {}) as Record<string, Json>)) {
      if (prop['x-secret'] === true) secrets.push(name);
      const raw = prop['x-db'];
      if (raw === undefined) continue;
      const opts: ColumnOptions = raw === true ? {} : (raw as ColumnOptions);
      if (opts.computed !== undefined) {
        computed.push({ key: camel(opts.column ?? name), name, sql: opts.computed });
        continue;
      }
      const { schema } = resolve(f.$id, prop);
      const sql = opts.sql ?? inferSql(schema);
      const hasDefault = opts.default !== undefined || opts.defaultNow === true;
      const nullable =
        opts.primaryKey === true
          ? false
          : (opts.nullable ?? (allowsNull(schema) || (!required.has(name) && !hasDefault)));
      const wireTypes = jsonTypes(schema);
      const conversion: Column['conversion'] =
        sql === 'timestamptz'
          ? wireTypes.includes('number') || wireTypes.includes('integer')
            ? 'epoch'
            : 'iso'
          : 'plain';
      const enumValues = Array.isArray(schema.enum)
        ? (schema.enum as unknown[]).filter((v): v is string => typeof v === 'string')
        : null;
      const typed = sql === 'jsonb' || (sql === 'text' && enumValues !== null);
      const column = opts.column ?? name;
      columns.push({
        key: camel(column),
        column,
        sql,
        nullable,
        options: opts,
        wire: name,
        name,
        wireNullable: allowsNull(schema),
        conversion,
        tsType: opts.tsType ?? (typed ? `NonNullable<${entity}[${JSON.stringify(name)}]>` : null),
        check: opts.values ?? (opts.enumCheck && enumValues ? enumValues : null),
        shape: shapeOf(resolve, f.$id, prop),
      });
    }
    for (const [column, opts] of Object.entries(
      (root.columns ?? {}) as Record<string, ColumnOptions>,
    )) {
      const schemaType = opts.schema ? (types.get(resolveRef(f.$id, opts.schema)) ?? null) : null;
      if (opts.schema && !schemaType)
        throw new Error(`${f.file}: x-db column ${column} schema ${opts.schema} does not resolve`);
      const sql = opts.sql ?? 'text';
      columns.push({
        key: camel(column),
        column,
        sql,
        nullable: opts.primaryKey === true ? false : (opts.nullable ?? true),
        options: opts,
        wire: null,
        name: column,
        wireNullable: true,
        conversion: 'plain',
        tsType: opts.tsType ?? schemaType,
        check: opts.values ?? null,
        shape: opts.schema ? shapeOf(resolve, f.$id, { $ref: opts.schema }) : `column:${sql}`,
      });
    }
    const byColumn = new Map(columns.map((c) => [c.column, c]));
    // The shapes this entity's operations send or answer: show answers are read from a row, create
    // and update bodies are written to one.
    const ops = Object.values(
      ((f.json['x-resource'] as Json | undefined)?.operations ?? {}) as Record<string, Json>,
    );
    const local = (ref: unknown) =>
      typeof ref === 'string' && ref.startsWith('#/$defs/') ? ref.slice('#/$defs/'.length) : null;
    const shapes: Table['shapes'] = [];
    for (const [def, schema] of Object.entries((f.json.$defs ?? {}) as Record<string, Json>)) {
      const read = ops.some((op) => local(op.response) === def);
      const write = ops.some((op) => local(op.request) === def);
      if (!read && !write) continue;
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const fields: Column[] = [];
      for (const [name, prop] of Object.entries(props)) {
        const col =
          columns.find((c) => c.name === name) ??
          (byColumn.get(name)?.wire === null ? byColumn.get(name) : undefined);
        if (!col || (write && !read && col.options.primaryKey)) continue;
        if (shapeOf(resolve, f.$id, prop) === col.shape) fields.push(col);
      }
      if (fields.length) shapes.push({ type: keyOf(f, def), fields, read, write });
    }
    tables.push({
      file: f.file,
      entity,
      table: root.table,
      variable: camel(root.table),
      columns,
      indexes: (
        (root.indexes ?? []) as {
          name: string;
          columns: string[];
          unique?: boolean;
          where?: string;
        }[]
      ).map((i) => ({
        name: i.name,
        columns: i.columns,
        unique: i.unique === true,
        where: i.where ?? null,
      })),
      owner: (root.owner as string | undefined) ?? null,
      category: (root.category as string | undefined) ?? null,
      version: (root.version as string | undefined) ?? null,
      computed,
      secrets,
      shapes,
    });
  }
  return tables;
}

/** Problems with the storage declarations (unknown tables, columns, duplicates). */
export function checkTables(tables: Table[]): string[] {
  const problems: string[] = [];
  const byTable = new Map(tables.map((t) => [t.table, t]));
  for (const t of tables) {
    if (byTable.get(t.table) !== t) problems.push(`${t.file}: table ${t.table} is declared twice`);
    const names = new Set<string>();
    for (const c of t.columns) {
      if (names.has(c.column))
        problems.push(`${t.file}: column ${t.table}.${c.column} is declared twice`);
      names.add(c.column);
      if (c.options.references) {
        const [table = '', column = ''] = c.options.references.split('.');
        const target = byTable.get(table);
        if (!target || !target.columns.some((x) => x.column === column))
          problems.push(`${t.file}: column ${c.column} references unknown ${c.options.references}`);
      }
    }
    if (!t.columns.some((c) => c.options.primaryKey))
      problems.push(`${t.file}: table ${t.table} has no primary key`);
    for (const [what, column] of [
      ['owner', t.owner],
      ['category', t.category],
      ['version', t.version],
    ] as const)
      if (column && !names.has(column))
        problems.push(`${t.file}: x-db ${what} ${column} is not a column of ${t.table}`);
    for (const i of t.indexes)
      for (const c of i.columns)
        if (!names.has(c)) problems.push(`${t.file}: index ${i.name} names unknown column ${c}`);
  }
  return problems;
}

const BUILDERS: Record<SqlType, (column: string) => string> = {
  text: (c) => `text('${c}')`,
  integer: (c) => `integer('${c}')`,
  bigint: (c) => `bigint('${c}', { mode: 'number' })`,
  double: (c) => `doublePrecision('${c}')`,
  boolean: (c) => `boolean('${c}')`,
  jsonb: (c) => `jsonb('${c}')`,
  timestamptz: (c) => `timestamp('${c}', { withTimezone: true, mode: 'date' })`,
  uuid: (c) => `uuid('${c}')`,
};

function columnCode(c: Column, t: Table, tables: Table[]): string {
  let code = BUILDERS[c.sql](c.column);
  if (c.tsType) code += `.$type<${c.tsType}>()`;
  if (c.options.primaryKey) code += '.primaryKey()';
  else if (!c.nullable) code += '.notNull()';
  if (c.options.default !== undefined) code += `.default(${JSON.stringify(c.options.default)})`;
  if (c.options.defaultNow) code += '.defaultNow()';
  if (c.options.unique) code += `.unique('${t.table}_${c.column}_key')`;
  if (c.options.references) {
    const [table = '', column = ''] = c.options.references.split('.');
    const target = tables.find((t) => t.table === table);
    const key = target?.columns.find((x) => x.column === column)?.key ?? camel(column);
    const onDelete = c.options.onDelete ? `, { onDelete: '${c.options.onDelete}' }` : '';
    code += `.references((): AnyPgColumn => ${target?.variable ?? camel(table)}.${key}${onDelete})`;
  }
  return code;
}

function tableCode(t: Table, tables: Table[]): string {
  const cols = t.columns.map((c) => `  ${c.key}: ${columnCode(c, t, tables)},`).join('\n');
  const extras: string[] = [];
  for (const c of t.columns)
    if (c.check)
      extras.push(
        `  check('${t.table}_${c.column}_check', sql.raw(${JSON.stringify(`${c.column} IN (${c.check.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')})`)})),`,
      );
  for (const i of t.indexes) {
    const on = i.columns.map((c) => `t.${camel(c)}`).join(', ');
    extras.push(
      `  ${i.unique ? 'uniqueIndex' : 'index'}('${i.name}').on(${on})${i.where ? `.where(sql.raw(${JSON.stringify(i.where)}))` : ''},`,
    );
  }
  const third = extras.length ? `, (t) => [\n${extras.join('\n')}\n]` : '';
  return `export const ${t.variable} = pgTable('${t.table}', {\n${cols}\n}${third});\nexport type ${t.entity}Row = typeof ${t.variable}.$inferSelect;\nexport type ${t.entity}Insert = typeof ${t.variable}.$inferInsert;`;
}

function toWireValue(c: Column, from: string): string {
  const v = `${from}.${c.key}`;
  if (c.conversion === 'epoch')
    return c.nullable
      ? `${v} === null ? null : Math.floor(${v}.getTime() / 1000)`
      : `Math.floor(${v}.getTime() / 1000)`;
  if (c.conversion === 'iso')
    return c.nullable ? `${v} === null ? null : ${v}.toISOString()` : `${v}.toISOString()`;
  return c.nullable && !c.wireNullable ? `${v} ?? undefined` : v;
}

function fromWireValue(c: Column, v: string): string {
  if (c.conversion === 'epoch')
    return c.nullable ? `${v} === null ? null : new Date(${v} * 1000)` : `new Date(${v} * 1000)`;
  if (c.conversion === 'iso')
    return c.nullable ? `${v} === null ? null : new Date(${v})` : `new Date(${v})`;
  return v;
}

function mappers(t: Table): string {
  const fn = lowerFirst(t.entity);
  const wire = t.columns.filter((c) => c.wire);
  const keys = (cols: Column[]) => cols.map((c) => JSON.stringify(c.name)).join(' | ');
  const out: string[] = [];
  out.push(
    `/** The stored fields of a ${t.entity} as they go on the wire. */\nexport function ${fn}ToWire(row: ${t.entity}Row): Pick<${t.entity}, ${keys(wire)}> {\n  return {\n${wire.map((c) => `    ${JSON.stringify(c.name)}: ${toWireValue(c, 'row')},`).join('\n')}\n  };\n}`,
  );
  const computedKeys = t.computed.map((c) => JSON.stringify(c.name)).join(' | ');
  if (t.computed.length > 0)
    out.push(
      `/** A ${t.entity} row with its computed properties (read with ${t.variable}Computed). */\nexport type ${t.entity}ReadRow = ${t.entity}Row & { ${t.computed.map((c) => `${c.key}: ${t.entity}[${JSON.stringify(c.name)}]`).join('; ')} };\n\n/** The computed properties of a ${t.entity}, selected with its columns. */\nexport const ${t.variable}Computed = {\n${t.computed.map((c) => `  ${c.key}: sql<${t.entity}[${JSON.stringify(c.name)}]>\`\${sql.raw(${JSON.stringify(c.sql)})}\`,`).join('\n')}\n};\n\n/** A ${t.entity} as it goes on the wire: its stored and its computed properties. */\nexport function ${fn}ReadToWire(row: ${t.entity}ReadRow): Pick<${t.entity}, ${keys(wire)} | ${computedKeys}> {\n  return {\n    ...${fn}ToWire(row),\n${t.computed.map((c) => `    ${JSON.stringify(c.name)}: row.${c.key},`).join('\n')}\n  };\n}`,
    );
  const kept = wire.filter((c) => !t.secrets.includes(c.name));
  out.push(
    `/** What the audit keeps of a ${t.entity}: its stored wire properties${t.secrets.length ? ` but the secrets (${t.secrets.join(', ')})` : ''}. */\nexport function ${fn}Snapshot(row: ${t.entity}Row): Record<string, unknown> {\n  return {\n${kept.map((c) => `    ${JSON.stringify(c.name)}: ${toWireValue(c, 'row')},`).join('\n')}\n  };\n}`,
  );
  for (const s of t.shapes) {
    const short = s.type.slice(t.entity.length) || s.type;
    if (s.read)
      out.push(
        `/** The stored fields of ${s.type}, read from a ${t.entity} row. */\nexport function ${fn}To${short}(row: ${t.entity}Row): Pick<${s.type}, ${keys(s.fields)}> {\n  return {\n${s.fields.map((c) => `    ${JSON.stringify(c.name)}: ${toWireValue(c, 'row')},`).join('\n')}\n  };\n}`,
      );
    const writable = s.fields.filter((c) => !c.options.primaryKey);
    if (s.write && writable.length)
      out.push(
        `/** The columns a ${s.type} sets (fields left out stay as they are). */\nexport function ${fn}From${short}(body: Partial<Pick<${s.type}, ${keys(writable)}>>): Partial<${t.entity}Insert> {\n  const out: Partial<${t.entity}Insert> = {};\n${writable
          .map(
            (c) =>
              `  if (body[${JSON.stringify(c.name)}] !== undefined) out.${c.key} = ${fromWireValue(c, `body[${JSON.stringify(c.name)}]`)} as ${t.entity}Insert['${c.key}'];`,
          )
          .join('\n')}\n  return out;\n}`,
      );
  }
  return out.join('\n\n');
}

/**
 * The entities that read another file's table (`x-db: { "view": "<table>" }` at the root): each
 * property with `x-db: true` is the table's wire property of the same name and shape, so a read
 * view (the booking screens' reservable item) is mapped from the stored row by the generated
 * `<entity>ToWire` as well; a field added to both files reaches both answers.
 */
export interface View {
  file: string;
  entity: string;
  table: Table;
  fields: Column[];
}

export function viewsOf(
  files: SchemaFile[],
  tables: Table[],
): { views: View[]; problems: string[] } {
  const resolve = resolver(files);
  const views: View[] = [];
  const problems: string[] = [];
  for (const f of files) {
    const view = (f.json['x-db'] as (Json & { view?: string }) | undefined)?.view;
    if (!view) continue;
    const table = tables.find((t) => t.table === view);
    if (!table) {
      problems.push(`${f.file}: x-db view ${view} is not a declared table`);
      continue;
    }
    const fields: Column[] = [];
    for (const [name, prop] of Object.entries((f.json.properties ?? {}) as Record<string, Json>)) {
      if (prop['x-db'] === undefined) continue;
      const col = table.columns.find((c) => c.wire === name);
      if (prop['x-db'] !== true || !col)
        problems.push(`${f.file}: ${name} is not a wire property of ${view} (a view reads them)`);
      else if (shapeOf(resolve, f.$id, prop) !== col.shape)
        problems.push(`${f.file}: ${name} has not the shape of ${view}.${col.column}`);
      else fields.push(col);
    }
    views.push({ file: f.file, entity: keyOf(f), table, fields });
  }
  return { views, problems };
}

function viewMapper(v: View): string {
  const keys = v.fields.map((c) => JSON.stringify(c.name)).join(' | ');
  return `/** The stored fields of a ${v.entity}, read from a ${v.table.entity} row (${v.table.table}). */\nexport function ${lowerFirst(v.entity)}ToWire(row: ${v.table.entity}Row): Pick<${v.entity}, ${keys}> {\n  return {\n${v.fields.map((c) => `    ${JSON.stringify(c.name)}: ${toWireValue(c, 'row')},`).join('\n')}\n  };\n}`;
}

/** src/generated/db.ts: tables, row types, mappers and the storage table of every entity. */
export function emitDb(files: SchemaFile[], banner: string): string {
  const tables = tablesOf(files);
  const { views, problems: viewProblems } = viewsOf(files, tables);
  const problems = [...checkTables(tables), ...viewProblems];
  if (problems.length) throw new Error(`schema check failed:\n- ${problems.join('\n- ')}`);
  const typeNames = new Set<string>();
  for (const t of tables) {
    typeNames.add(t.entity);
    for (const c of t.columns)
      for (const m of (c.tsType ?? '').matchAll(/\b([A-Z][A-Za-z0-9]*)\b/g))
        typeNames.add(m[1] ?? '');
    for (const s of t.shapes) typeNames.add(s.type);
  }
  for (const v of views) typeNames.add(v.entity);
  for (const builtin of ['NonNullable', 'Record', 'Partial', 'Pick']) typeNames.delete(builtin);
  const storage = tables
    .map(
      (t) =>
        `  ${t.variable}: { table: ${t.variable}, entity: '${t.entity}', owner: ${t.owner ? `'${camel(t.owner)}'` : 'null'}, category: ${t.category ? `'${camel(t.category)}'` : 'null'}, version: ${t.version ? `'${camel(t.version)}'` : 'null'}, toWire: ${lowerFirst(t.entity)}ToWire, snapshot: ${lowerFirst(t.entity)}Snapshot, computed: ${t.computed.length ? `${t.variable}Computed` : 'null'} },`,
    )
    .join('\n');
  return `${banner}/* eslint-disable */
import { sql } from 'drizzle-orm';
import { bigint, boolean, check, doublePrecision, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import type { ${[...typeNames].sort().join(', ')} } from './types';

${tables.map((t) => tableCode(t, tables)).join('\n\n')}

${tables.map(mappers).join('\n\n')}

${views.map(viewMapper).join('\n\n')}

/** Every stored entity: its table, scoping columns (row keys) and wire mapper. */
export const storage = {
${storage}
} as const;
export type StorageName = keyof typeof storage;
`;
}
