import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loggingOptions } from './logger-options.ts';
import { clockTime, formatLogLine, formatValue, prettyDestination } from './log-format.ts';

const at = new Date(2024, 0, 2, 3, 4, 5, 6).getTime();
const line = (entry: Record<string, unknown>) =>
  `${JSON.stringify({ pid: 42, hostname: 'box', time: at, ...entry })}\n`;

describe('formatLogLine', () => {
  it('prints local time, level and message, then the other fields as key=value', () => {
    expect(formatLogLine(line({ level: 30, msg: 'server listening', port: 8080, ok: true }))).toBe(
      '03:04:05.006 INFO  server listening port=8080 ok=true',
    );
  });

  it('names every pino level', () => {
    const levels = [10, 20, 30, 40, 50, 60].map((level) =>
      formatLogLine(line({ level, msg: 'm' })).slice(13, 18),
    );
    expect(levels).toEqual(['TRACE', 'DEBUG', 'INFO ', 'WARN ', 'ERROR', 'FATAL']);
  });

  it('flattens nested objects into dotted keys and quotes values with spaces', () => {
    expect(
      formatLogLine(
        line({
          level: 30,
          msg: 'incoming request',
          reqId: 'req-1',
          req: { method: 'GET', url: '/api/v3/user?x=a b', ip: '127.0.0.1' },
        }),
      ),
    ).toBe(
      '03:04:05.006 INFO  incoming request reqId=req-1 req.method=GET req.url="/api/v3/user?x=a b" req.ip=127.0.0.1',
    );
  });

  it('prints the response time in milliseconds with one decimal', () => {
    expect(
      formatLogLine(
        line({ level: 30, msg: 'request completed', res: { statusCode: 200 }, responseTime: 1.26 }),
      ),
    ).toBe('03:04:05.006 INFO  request completed res.statusCode=200 responseTime=1.3ms');
  });

  it('puts an error stack on indented lines after the line', () => {
    const out = formatLogLine(
      line({
        level: 50,
        msg: 'unexpected error',
        err: {
          type: 'Error',
          message: 'boom',
          stack: 'Error: boom\n    at f (a.ts:1:1)\n    at g',
        },
      }),
    );
    expect(out.split('\n')).toEqual([
      '03:04:05.006 ERROR unexpected error err.type=Error err.message=boom',
      '    at f (a.ts:1:1)',
      '    at g',
    ]);
  });

  it('passes a line that is not JSON through unchanged', () => {
    expect(formatLogLine('plain text line\n')).toBe('plain text line');
  });

  it('formats values: bare words, quoted strings, null and arrays', () => {
    expect(formatValue('abc')).toBe('abc');
    expect(formatValue('a=b')).toBe('"a=b"');
    expect(formatValue('')).toBe('""');
    expect(formatValue(null)).toBe('null');
    expect(formatValue([1, 'x'])).toBe('[1,"x"]');
  });

  it('pads the clock to HH:MM:SS.mmm', () => {
    expect(clockTime(new Date(2024, 5, 6, 23, 59, 0, 70).getTime())).toBe('23:59:00.070');
  });
});

describe('prettyDestination', () => {
  it('writes one formatted line per pino line', () => {
    const written: string[] = [];
    const dest = prettyDestination({ write: (chunk) => written.push(chunk) });
    dest.write(line({ level: 40, msg: 'careful' }));
    expect(written).toEqual(['03:04:05.006 WARN  careful\n']);
  });
});

describe('server logging options', () => {
  async function logsOf(level: string, format: 'pretty' | 'json'): Promise<string[]> {
    const written: string[] = [];
    const app = Fastify(
      loggingOptions({ logLevel: level, logFormat: format }, { write: (c) => written.push(c) }),
    );
    app.get('/x', async (request) => {
      request.log.info({ token: 'secret-token', form: { password: 'hunter2' } }, 'handled');
      return {};
    });
    const res = await app.inject({
      method: 'GET',
      url: '/x?token=abc&jwt=def&keep=1',
      headers: { authorization: 'Bearer abc', cookie: 'vdiportal_session=abc' },
    });
    expect(res.statusCode).toBe(200);
    await app.close();
    return written.join('').trimEnd().split('\n');
  }

  it('prints readable lines without request logs at info', async () => {
    const lines = await logsOf('info', 'pretty');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}handled reqId=\S+ token=\[redacted\] form\.password=\[redacted\]$/,
    );
  });

  it('adds request and response lines at debug, with secret query values redacted', async () => {
    const lines = await logsOf('debug', 'pretty');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toContain('incoming request');
    expect(lines[0]).toContain('req.url="/x?token=[redacted]&jwt=[redacted]&keep=1"');
    expect(lines[2]).toMatch(/request completed .*res\.statusCode=200 responseTime=\d+\.\dms/);
    const all = lines.join('\n');
    expect(all).not.toMatch(/abc|def|hunter2|secret-token|Bearer/);
  });

  it("names the node on every line when the config has the node's name", async () => {
    const written: string[] = [];
    const app = Fastify(
      loggingOptions(
        { logLevel: 'info', logFormat: 'pretty', nodeName: 'portal-2' },
        { write: (c) => written.push(c) },
      ),
    );
    app.log.info('hello');
    await app.close();
    expect(written.join('')).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}hello node=portal-2\n$/);
  });

  it('keeps JSON lines with LOG_FORMAT=json', async () => {
    const lines = await logsOf('info', 'json');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      level: 30,
      msg: 'handled',
      token: '[redacted]',
    });
  });
});
