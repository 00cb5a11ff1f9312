/**
 * Storage from the schema (`x-db`), written: one drizzle `pgTable` per entity with `x-db.table`,
 * its row types, and the row <-> wire mapping of the entity, of each `$defs` shape that carries
 * stored fields (show answers, create and update bodies) and of each view of a table.
 * drizzle-kit reads the emitted tables to write the SQL migrations in server/migrations.
 */
import type { SchemaFile } from './load.ts';
import { keyOf } from './emit.ts';
import {
  camel,
  checkTables,
  lowerFirst,
  resolver,
  shapeOf,
  tablesOf,
  type Column,
  type SqlType,
  type Table,
} from './emit-db.ts';

type Json = Record<string, unknown>;

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
  // A nullable column whose wire type has no null is sent as absent.
  const none = c.wireNullable ? 'null' : 'undefined';
  if (c.conversion === 'epoch')
    return c.nullable
      ? `${v} === null ? ${none} : Math.floor(${v}.getTime() / 1000)`
      : `Math.floor(${v}.getTime() / 1000)`;
  if (c.conversion === 'iso')
    return c.nullable ? `${v} === null ? ${none} : ${v}.toISOString()` : `${v}.toISOString()`;
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
    `/** The columns of a ${t.entity} row that go on the wire (a read may select only these). */\nexport const ${fn}WireColumns = [${wire.map((c) => JSON.stringify(c.key)).join(', ')}] as const;\nexport type ${t.entity}WireRow = Pick<${t.entity}Row, (typeof ${fn}WireColumns)[number]>;\n\n/** The stored fields of a ${t.entity} as they go on the wire. */\nexport function ${fn}ToWire(row: ${t.entity}WireRow): Pick<${t.entity}, ${keys(wire)}> {\n  return {\n${wire.map((c) => `    ${JSON.stringify(c.name)}: ${toWireValue(c, 'row')},`).join('\n')}\n  };\n}`,
  );
  const computedKeys = t.computed.map((c) => JSON.stringify(c.name)).join(' | ');
  if (t.computed.length > 0)
    out.push(
      `/** A ${t.entity} row with its computed properties (read with ${t.variable}Computed). */\nexport type ${t.entity}ReadRow = ${t.entity}Row & { ${t.computed.map((c) => `${c.key}: ${t.entity}[${JSON.stringify(c.name)}]`).join('; ')} };\n\n/** The computed properties of a ${t.entity}, selected with its columns. */\nexport const ${t.variable}Computed = {\n${t.computed.map((c) => `  ${c.key}: sql<${t.entity}[${JSON.stringify(c.name)}]>\`\${sql.raw(${JSON.stringify(c.sql)})}\`,`).join('\n')}\n};\n\n/** The computed properties of a ${t.entity} as they go on the wire (every answer that has them). */\nexport function ${fn}ComputedToWire(row: ${t.entity}ReadRow): Pick<${t.entity}, ${computedKeys}> {\n  return {\n${t.computed.map((c) => `    ${JSON.stringify(c.name)}: row.${c.key},`).join('\n')}\n  };\n}\n\n/** A ${t.entity} as it goes on the wire: its stored and its computed properties. */\nexport function ${fn}ReadToWire(row: ${t.entity}ReadRow): Pick<${t.entity}, ${keys(wire)} | ${computedKeys}> {\n  return {\n    ...${fn}ToWire(row),\n    ...${fn}ComputedToWire(row),\n  };\n}`,
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
