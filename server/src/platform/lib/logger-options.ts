/**
 * The server's logger options: no headers (tokens, cookies) nor secret-looking query values, every
 * line cleaned of anything shaped like a secret, errors without the parameters of a failed statement
 * and with their stacks at the TypeScript sources.
 */
import { hostname } from 'node:os';
import { LogController, type FastifyServerOptions } from 'fastify';
import type { AppConfig } from '../config/config.ts';
import { prettyDestination, type LineSink, type LogFormat } from './log-format.ts';
import { redactSecrets } from './log-redact.ts';
import { safeError } from './db-errors.ts';
import { sourceMappedStack } from './source-mapped-stack.ts';

const SECRET_QUERY = /([?&](?:token|jwt|password|access_token)=)[^&]*/gi;

/**
 * Logger options: never logs headers (tokens, cookies) nor secret-looking query values; every line
 * is also cleaned of anything shaped like a secret (log-redact.ts), and errors are logged
 * without the parameters of a failed statement. `pretty` writes readable one-line logs, `json`
 * pino's JSON lines.
 */
export function loggerOptions(
  level: string,
  format: LogFormat = 'json',
  out?: LineSink,
  nodeName?: string,
): FastifyServerOptions['logger'] {
  if (level === 'silent') return false;
  const stream = format === 'pretty' ? prettyDestination(out) : out;
  return {
    level,
    // Every line names the node that wrote it (`node=`), so the logs of several nodes can be merged.
    ...(nodeName ? { base: { pid: process.pid, hostname: hostname(), node: nodeName } } : {}),
    ...(stream ? { stream } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'password',
        'jwt',
        'token',
        '*.password',
        '*.jwt',
        '*.token',
      ],
      censor: '[redacted]',
    },
    hooks: { streamWrite: redactSecrets },
    serializers: {
      err: (err: Error) => {
        const safe = safeError(err);
        return { ...safe, stack: safe.stack ? sourceMappedStack(safe.stack) : '' };
      },
      req: (req: { method: string; url: string; ip?: string }) => ({
        method: req.method,
        url: req.url.replace(SECRET_QUERY, '$1[redacted]'),
        ip: req.ip,
      }),
    },
  };
}

/** One log line per request and response only when debugging. */
export function logsRequests(level: string): boolean {
  return level === 'debug' || level === 'trace';
}

/** The logger and its request-logging switch for a config; `out` replaces stdout (tests). */
export function loggingOptions(
  config: Pick<AppConfig, 'logLevel' | 'logFormat'> & Partial<Pick<AppConfig, 'nodeName'>>,
  out?: LineSink,
): Pick<FastifyServerOptions, 'logger' | 'logController'> {
  return {
    logger: loggerOptions(config.logLevel, config.logFormat, out, config.nodeName),
    logController: new LogController({ disableRequestLogging: !logsRequests(config.logLevel) }),
  };
}
