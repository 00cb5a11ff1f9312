/** Loads every schema file under schema/ (except meta/) in a stable order. */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface SchemaFile {
  /** path relative to the schema root, e.g. entities/desktop.schema.json */
  file: string;
  $id: string;
  json: Record<string, unknown> & { $id: string };
}

function walk(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const full = join(dir, name);
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
}

export function loadSchemas(root: string): SchemaFile[] {
  return walk(root)
    .filter((f) => f.endsWith('.schema.json') && !relative(root, f).startsWith('meta'))
    .map((full) => {
      const json = JSON.parse(readFileSync(full, 'utf8')) as SchemaFile['json'];
      return { file: relative(root, full), $id: json.$id, json };
    });
}
