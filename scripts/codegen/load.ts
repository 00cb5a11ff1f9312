/** Loads every schema file under schema/ (except meta/) in a stable order. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface SchemaFile {
  /** path relative to the schema root, e.g. entities/desktop.schema.json */
  file: string;
  $id: string;
  json: Record<string, unknown> & { $id: string };
}

type Json = Record<string, unknown>;

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
}

/**
 * The `$defs` of the file the resource's `show` answers, its `create` and `update` take and its
 * edit form is filled from (`editPrefill`): an `x-in: true` property goes to them; the entity
 * itself (`#`) and other files' shapes are not.
 */
function resourceDefs(json: SchemaFile['json']): string[] {
  const resource = (json['x-resource'] ?? {}) as Json & { editPrefill?: string };
  const ops = (resource.operations ?? {}) as Record<string, Json>;
  const shapes: [string, 'request' | 'response'][] = [
    ['show', 'response'],
    ['create', 'request'],
    ['update', 'request'],
    ...(resource.editPrefill ? [[resource.editPrefill, 'response'] as [string, 'response']] : []),
  ];
  const defs = shapes.flatMap(([op, part]) => {
    const ref = ops[op]?.[part];
    return typeof ref === 'string' && ref.startsWith('#/$defs/')
      ? [ref.slice('#/$defs/'.length)]
      : [];
  });
  return [...new Set(defs)];
}

/**
 * `x-in` on an entity property names the `$defs` of the same file the property also belongs to
 * (the show answer, the create and update bodies), or is `true` for those the resource's show,
 * create, update and edit prefill name: the property is copied there, so a field is declared once
 * and reaches every shape. Storage (`x-db`) stays on the entity. Returns a new
 * object (the file on disk is untouched) and the problems found: an unknown target, or a target
 * that declares the property itself.
 */
export function expandSchema(json: SchemaFile['json']): {
  json: SchemaFile['json'];
  problems: string[];
} {
  const props = json.properties as Record<string, Json> | undefined;
  const copies = Object.entries(props ?? {}).filter(
    ([, p]) => Array.isArray(p['x-in']) || p['x-in'] === true,
  );
  if (copies.length === 0) return { json, problems: [] };
  const out = structuredClone(json);
  const defs = (out.$defs ?? {}) as Record<string, Json>;
  const problems: string[] = [];
  for (const [name, prop] of copies) {
    const targets = prop['x-in'] === true ? resourceDefs(json) : (prop['x-in'] as string[]);
    for (const target of targets) {
      const def = defs[target];
      if (!def) {
        problems.push(`property ${name} names x-in target $defs/${target}, which does not exist`);
        continue;
      }
      const defProps = (def.properties ?? {}) as Record<string, Json>;
      if (name in defProps) {
        problems.push(
          `property ${name} is copied into $defs/${target} by x-in but $defs/${target} declares it too`,
        );
        continue;
      }
      const { 'x-in': _in, 'x-db': _db, ...copy } = structuredClone(prop);
      def.properties = { ...defProps, [name]: copy };
    }
  }
  return { json: out, problems };
}

export function loadSchemas(root: string): SchemaFile[] {
  const problems: string[] = [];
  const files = walk(root)
    .filter((f) => f.endsWith('.schema.json') && !relative(root, f).startsWith('meta'))
    .map((full) => {
      const file = relative(root, full);
      const expanded = expandSchema(JSON.parse(readFileSync(full, 'utf8')) as SchemaFile['json']);
      problems.push(...expanded.problems.map((p) => `${file}: ${p}`));
      return { file, $id: expanded.json.$id, json: expanded.json };
    });
  if (problems.length) throw new Error(`schema check failed:\n- ${problems.join('\n- ')}`);
  return files;
}
