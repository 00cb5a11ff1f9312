/**
 * What the server makes of a database error: whether it means the database is unreachable (the
 * request answers 503 `service_unavailable`, which the SPA shows as maintenance, and the pool
 * reconnects by itself once the database is back), and a form of any error that is safe to log
 * (the statement text at most: never the statement's parameters, which may hold credentials).
 */

/** Node socket errors met while connecting to or talking with the database. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
]);

/** PostgreSQL SQLSTATEs of a server going away or refusing connections. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres messages that carry no code. */
const UNAVAILABLE_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|client has encountered a connection error|cannot use a pool after calling end|connection is not open/i;

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** The error and its causes (drizzle wraps driver errors), outermost first, at most 5 deep. */
function chain(err: unknown): ErrorLike[] {
  const out: ErrorLike[] = [];
  let current: unknown = err;
  while (current && typeof current === 'object' && out.length < 5) {
    const e = current as ErrorLike;
    out.push(e);
    // An AggregateError (a connect to several addresses) counts through its first error.
    current = e.cause ?? (Array.isArray(e.errors) ? (e.errors as unknown[])[0] : undefined);
  }
  return out;
}

/** The bulkhead refused a statement: too many calls already wait for the database. */
export class DatabaseBusyError extends Error {
  readonly code = 'DATABASE_BUSY';
  constructor() {
    super('Too many calls are waiting for the database');
    this.name = 'DatabaseBusyError';
  }
}

/** A statement ran past its time limit and was given up (PGlite, which cannot cancel it). */
export class StatementTimeoutError extends Error {
  readonly code = 'STATEMENT_TIMEOUT';
  constructor(ms: number) {
    super(`The statement took longer than ${ms} ms`);
    this.name = 'StatementTimeoutError';
  }
}

/** 57014 query_canceled: PostgreSQL's statement_timeout cancelled the statement. */
const SLOW_CODES = new Set(['57014', 'DATABASE_BUSY', 'STATEMENT_TIMEOUT']);

/**
 * Whether `err` says the database is reachable but too slow or too busy right now (a statement
 * over its time limit, or the bulkhead full): 503 for this request, the database is not down.
 */
export function isDatabaseSlow(err: unknown): boolean {
  return chain(err).some((e) => typeof e.code === 'string' && SLOW_CODES.has(e.code));
}

/** Whether `err` says the database cannot be reached right now. */
export function isDatabaseUnavailable(err: unknown): boolean {
  return chain(err).some((e) => {
    const code = typeof e.code === 'string' ? e.code : '';
    if (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))
      return true;
    return typeof e.message === 'string' && UNAVAILABLE_MESSAGE.test(e.message);
  });
}

/** Drizzle appends the parameters to its message: `Failed query: …\nparams: …`. */
function withoutParams(message: string): string {
  const cut = message.search(/\n\s*params:/);
  return cut === -1 ? message : message.slice(0, cut);
}

export interface SafeError {
  type: string;
  message: string;
  code?: string;
  stack?: string;
  cause?: SafeError;
}

/**
 * An error as it may be logged: type, code, message and stack frames, with the parameters of a
 * failed statement removed from the message and the stack, and the message of a data exception
 * (which quotes the input) replaced by its code; other own properties (a driver's `params`,
 * `detail`, `where` with row values) are left out.
 */
export function safeError(err: unknown, depth = 0): SafeError {
  if (!err || typeof err !== 'object') return { type: typeof err, message: String(err) };
  const e = err as ErrorLike & { stack?: unknown };
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? String(e.code) : '';
  // PostgreSQL's data exceptions (class 22) quote the offending input value in their message.
  const message = /^22[0-9A-Z]{3}$/.test(code)
    ? `data exception ${code}`
    : withoutParams(typeof e.message === 'string' ? e.message : '');
  const out: SafeError = {
    type: typeof e.name === 'string' ? e.name : 'Error',
    message,
  };
  if (code) out.code = code;
  if (typeof e.stack === 'string') {
    const frames = e.stack.split('\n').filter((line) => /^\s+at /.test(line));
    out.stack = [`${out.type}: ${message}`, ...frames].join('\n');
  }
  if (e.cause && depth < 3) out.cause = safeError(e.cause, depth + 1);
  return out;
}
