/**
 * Stack traces of the compiled server in terms of its TypeScript sources, worked out only when an
 * error is logged. `npm start` runs the bundle without `--enable-source-maps`: that flag parses
 * the bundle's source map as the bundle loads and keeps it for the life of the process (some
 * 30 MB of an idle server's memory); here a map is read at the first stack that needs it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap, type SourceMapPayload } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A frame's location: `file:line:column`, alone or in parentheses, at the end of the line. */
const FRAME = /^(\s*at (?:.*? \()?)((?:file:\/\/)?\/[^()]+?\.m?js):(\d+):(\d+)(\)?)$/;

const maps = new Map<string, SourceMap | null>();

/** The source map beside a compiled file (`<file>.map`), parsed once; null when there is none. */
function mapOf(file: string): SourceMap | null {
  let map = maps.get(file);
  if (map !== undefined) return map;
  map = null;
  const path = `${file}.map`;
  if (existsSync(path)) {
    try {
      map = new SourceMap(JSON.parse(readFileSync(path, 'utf8')) as SourceMapPayload);
    } catch {
      map = null; // an unreadable map leaves the frames as they are
    }
  }
  maps.set(file, map);
  return map;
}

/** One frame line with its location taken back to the source it was compiled from. */
function mapFrame(line: string): string {
  const match = FRAME.exec(line);
  if (!match) return line;
  const [, head = '', location = '', lineText = '', columnText = '', tail = ''] = match;
  const file = location.startsWith('file://') ? fileURLToPath(location) : location;
  // The packages' own maps (some ship them) would stay in memory for their few frames.
  if (file.includes('/node_modules/')) return line;
  const map = mapOf(file);
  if (!map) return line;
  const entry = map.findEntry(Number(lineText) - 1, Number(columnText) - 1);
  if (!('originalSource' in entry) || !entry.originalSource) return line;
  const source = entry.originalSource.startsWith('file://')
    ? fileURLToPath(entry.originalSource)
    : resolve(dirname(file), entry.originalSource);
  const shown = relative(process.cwd(), source) || source;
  return `${head}${shown}:${entry.originalLine + 1}:${entry.originalColumn + 1}${tail}`;
}

/**
 * The stack with each frame of a compiled file of ours that has a source map beside it shown at
 * its source file, line and column (the packages' frames as they are); unchanged when Node already maps stacks (`--enable-source-maps`).
 */
export function sourceMappedStack(stack: string): string {
  if (process.sourceMapsEnabled) return stack;
  return stack.split('\n').map(mapFrame).join('\n');
}
