/**
 * Readable log lines for a terminal: a pino destination whose write() takes pino's JSON line and
 * prints `HH:MM:SS.mmm LEVEL message key=value ...` (local time). Nested objects become dotted keys
 * (`req.method=GET`), values with spaces or quotes are JSON-quoted, and an error's stack follows on
 * indented lines. pino's own bookkeeping (pid, hostname, v) is dropped. A line that is not JSON
 * passes through unchanged.
 */

export type LogFormat = 'pretty' | 'json';

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};

/** Keys that are part of the line's head or pino bookkeeping. */
const HEAD_KEYS = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'v']);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

export function clockTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function levelName(level: unknown): string {
  if (typeof level === 'string') return level.toUpperCase().padEnd(5);
  if (typeof level === 'number') return (LEVELS[level] ?? `L${level}`).padEnd(5);
  return 'INFO ';
}

/** A value as it appears after `key=`: bare when unambiguous, JSON otherwise. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null)
    return String(value);
  return JSON.stringify(value) ?? String(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Flattens `value` into `pairs` under `prefix`; collects stacks to print after the line. */
function flatten(
  prefix: string,
  value: unknown,
  pairs: string[],
  stacks: string[],
  depth: number,
): void {
  if (isPlainObject(value) && depth < 4) {
    for (const [key, inner] of Object.entries(value)) {
      const path = `${prefix}.${key}`;
      if (key === 'stack' && typeof inner === 'string') stacks.push(inner);
      else flatten(path, inner, pairs, stacks, depth + 1);
    }
    return;
  }
  if (prefix === 'responseTime' && typeof value === 'number') {
    pairs.push(`responseTime=${value.toFixed(1)}ms`);
    return;
  }
  pairs.push(`${prefix}=${formatValue(value)}`);
}

/** One pino JSON line -> one readable line (plus indented stack lines for errors). */
export function formatLogLine(line: string): string {
  const text = line.trimEnd();
  let entry: unknown;
  try {
    entry = JSON.parse(text);
  } catch {
    return text;
  }
  if (!isPlainObject(entry)) return text;
  const time = typeof entry.time === 'number' ? entry.time : Date.now();
  const head = [clockTime(time), levelName(entry.level)];
  if (typeof entry.msg === 'string' && entry.msg !== '') head.push(entry.msg);
  const pairs: string[] = [];
  const stacks: string[] = [];
  for (const [key, value] of Object.entries(entry)) {
    if (HEAD_KEYS.has(key)) continue;
    flatten(key, value, pairs, stacks, 0);
  }
  const first = [...head, ...pairs].join(' ');
  const rest = stacks.flatMap((stack) =>
    stack
      .split('\n')
      .slice(1)
      .map((l) => `    ${l.trim()}`),
  );
  return [first, ...rest].join('\n');
}

export interface LineSink {
  write(chunk: string): unknown;
}

/** A pino destination that writes readable lines to `out` (stdout by default). */
export function prettyDestination(out: LineSink = process.stdout): { write(line: string): void } {
  return {
    write(line: string) {
      out.write(`${formatLogLine(line)}\n`);
    },
  };
}
