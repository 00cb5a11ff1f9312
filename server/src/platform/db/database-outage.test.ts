/**
 * A PostgreSQL outage on a private cluster: while the database is down every operation answers
 * 503 service_unavailable with our error body (the SPA shows maintenance) or refuses bad input
 * first, never 500; the logs carry no statement parameters; when the database is back everything
 * works again without restarting the server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations, type Operation } from '../../../../src/generated/api.ts';
import { schemas } from '../../../../src/generated/schemas.ts';
import { startPostgres, type PgCluster } from '../../../../tests/support/postgres.ts';
import {
  buildTestApp,
  expectErrorShape,
  injectWithToken,
  login,
  loginRequest,
  type TestApp,
} from '../../../test/support/helper.ts';
import { sleep } from '../../../test/support/wait.ts';
import pg from 'pg';
import { CONNECTION_WAIT_MS, STATEMENT_TIMEOUT_MS } from './client.ts';

const CANARY = 'Canary-Guest-Pw-93';

let cluster: PgCluster;
let t: TestApp;
let token: string;
let desktopId: string;
const logLines: string[] = [];

beforeAll(async () => {
  cluster = await startPostgres();
  t = await buildTestApp(
    cluster.url,
    { logLevel: 'info', logFormat: 'json' },
    { logSink: { write: (chunk: string) => logLines.push(chunk) } },
  );
  token = await login(t.app, 'user');
  const list = await injectWithToken(t.app, token, { method: 'GET', url: '/api/v3/user/desktops' });
  desktopId = (list.json() as { id: string }[])[0]?.id ?? '';
  expect(desktopId).not.toBe('');
});

afterAll(async () => {
  await t?.close();
  cluster?.stop();
});

type Json = Record<string, unknown>;

/** The first enum value of a path parameter, or the desktop id for ids. */
function paramValue(op: Operation, name: string): string {
  if (op.params) {
    const schema = (schemas as unknown as Record<string, Json>)[op.params];
    const props = (schema?.properties ?? {}) as Record<string, Json>;
    const values = props[name]?.enum;
    if (Array.isArray(values) && values.length > 0) return String(values[0]);
  }
  return desktopId;
}

function urlOf(op: Operation): string {
  const base = op.base === 'auth' ? '/authentication' : '/api/v3';
  return base + op.path.replace(/\{(\w+)\}/g, (_m, name: string) => paramValue(op, name));
}

const call = (method: Operation['method'], url: string, payload?: unknown) =>
  injectWithToken(t.app, token, {
    method,
    url,
    ...(payload === undefined ? {} : { payload: payload as Json }),
  });

describe('slow database', () => {
  it('cuts every statement at 3 s: 20 parallel reads against a locked table (GET /user) all answer 503 with Retry-After within 6 s, the database is not taken for down, and reads work once the lock goes', async () => {
    // Another connection holds a lock every read of these tables waits for: statements hang.
    const holder = new pg.Client({ connectionString: cluster.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(
        'LOCK TABLE desktops, users, sessions, categories, groups, settings IN ACCESS EXCLUSIVE MODE',
      );
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const res = await call('GET', '/api/v3/user');
          return { res, ms: Date.now() - started };
        }),
      );
      const slowest = Math.max(...answers.map((a) => a.ms));
      // A call waits at most CONNECTION_WAIT_MS for a connection, then runs at most 3 s.
      expect(slowest).toBeLessThan(CONNECTION_WAIT_MS + STATEMENT_TIMEOUT_MS + 1000);
      for (const { res } of answers) {
        expect(res.statusCode, res.body).toBe(503);
        expectErrorShape(res.json(), 'service_unavailable');
        expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      }
      // Calls that found every connection held answered busy instead of queueing on.
      expect(answers.some((a) => a.res.json().description_code === 'database_busy')).toBe(true);
      expect(t.app.databaseDown()).toBe(false);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
    }
    const back = Date.now();
    let res = await call('GET', '/api/v3/user/desktops');
    while (res.statusCode !== 200 && Date.now() - back < 5000) {
      await sleep(100);
      res = await call('GET', '/api/v3/user/desktops');
    }
    expect(res.statusCode).toBe(200);
  });
});

describe('database outage', () => {
  it('answers 503 with our error body while PostgreSQL is down, then recovers without a restart', async () => {
    cluster.halt();
    // halt() blocks the event loop: let the pool see its connections being cut.
    await sleep(100);

    // The calls a user makes first: each needs the database and must say it is unavailable.
    const key = {
      // First: the list is cached between changes, and must not be served from the cache.
      'GET /user/desktops': await call('GET', '/api/v3/user/desktops'),
      'GET /user': await call('GET', '/api/v3/user'),
      'GET /user/config': await call('GET', '/api/v3/user/config'),
      'GET /domain/info': await call('GET', `/api/v3/domain/info/${desktopId}`),
      'start desktop': await call('GET', `/api/v3/desktop/start/${desktopId}`),
      'PUT /domain': await call('PUT', `/api/v3/domain/${desktopId}`, {
        description: 'during the outage',
        guest_properties: { credentials: { username: 'guest', password: CANARY } },
      }),
      login: await loginRequest(t.app, 'user'),
    };
    for (const [name, res] of Object.entries(key)) {
      expect(res.statusCode, `${name}: ${res.body}`).toBe(503);
      expectErrorShape(res.json(), 'service_unavailable');
    }

    // Health reports the outage in its own body.
    const health = await t.app.inject({ method: 'GET', url: '/api/v3/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json()).toMatchObject({ database: false });

    // Every other built operation: 503 or an input refusal, never another 5xx.
    const built = (Object.values(operations) as Operation[]).filter((op) => !op.planned);
    const wrong: string[] = [];
    let unavailable = 0;
    for (const op of built) {
      const res = await call(op.method, urlOf(op), op.body === 'json' ? {} : undefined);
      if (op.key === 'session.health') continue;
      if (res.statusCode === 503) {
        unavailable++;
        expectErrorShape(res.json(), 'service_unavailable');
      } else if (res.statusCode >= 500 || res.body.includes('FST_'))
        wrong.push(
          `${op.key} ${op.method} ${op.path} -> ${res.statusCode} ${res.body.slice(0, 120)}`,
        );
    }
    expect(wrong).toEqual([]);
    expect(unavailable).toBeGreaterThan(built.length / 2);

    cluster.resume();
    const back = Date.now();
    let recovered = false;
    while (!recovered && Date.now() - back < 15_000) {
      const res = await call('GET', '/api/v3/user');
      recovered = res.statusCode === 200;
      if (!recovered) await sleep(100);
    }
    expect(recovered).toBe(true);
    const desktops = await call('GET', '/api/v3/user/desktops');
    expect(desktops.statusCode).toBe(200);
    expect((desktops.json() as unknown[]).length).toBeGreaterThan(0);
    const relogin = await loginRequest(t.app, 'user');
    expect(relogin.statusCode).toBe(200);
    // The cluster bus listens again on a connection of its own.
    const listening = Date.now();
    while (!t.app.cluster.listening && Date.now() - listening < 15_000) await sleep(100);
    expect(t.app.cluster.listening).toBe(true);

    // Nothing logged during the outage carries a statement parameter or the guest password.
    const logs = logLines.join('');
    expect(logs).toContain('database unavailable');
    expect(logs).not.toContain(CANARY);
    expect(logs).not.toMatch(/params:/);
    expect(logs).not.toContain('eyJ');
  });
});
