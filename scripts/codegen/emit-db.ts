/**
 * Storage from the schema (`x-db`), read: the tables every entity with `x-db.table` declares
 * (columns, indexes, scoping and version columns, computed properties, secrets) and the `$defs`
 * shapes of its operations that carry stored fields. emit-db-code.ts writes them as code.
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

export const camel = (s: string) => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const lowerFirst = (s: string) => s.charAt(0).toLowerCase() + s.slice(1);

/** Resolves $ref chains across files; returns the final schema and the last ref's type name. */
export function resolver(files: SchemaFile[]) {
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
export function shapeOf(resolve: Resolve, base: string, schema: Json): string {
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
        // `x-db: { from }`: the property holds another stored property of the entity (the edit
        // form's `name` is the deployment's `desktop_name`); otherwise the one of its own name.
        const from = (prop['x-db'] as { from?: string } | undefined)?.from;
        const source = from ?? name;
        const stored =
          columns.find((c) => c.name === source) ??
          (byColumn.get(source)?.wire === null ? byColumn.get(source) : undefined);
        const same = stored !== undefined && shapeOf(resolve, f.$id, prop) === stored.shape;
        if (from !== undefined && !same)
          throw new Error(
            `${f.file}: $defs/${def}/${name} is read from ${from}, which is not a stored property of the same shape`,
          );
        if (!stored || !same || (write && !read && stored.options.primaryKey)) continue;
        fields.push(from === undefined ? stored : { ...stored, name });
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
