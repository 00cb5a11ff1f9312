/**
 * Server test helpers (fastify/demo style): a fresh PostgreSQL database per test file, the app
 * built on it with the demo seed, login, injectWithToken and token forgery for negative tests.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'vitest';
import pg from 'pg';
import { SignJWT } from 'jose';
import { buildApp, type BuildOptions } from '../../src/app.ts';
import { loadConfig, type AppConfig } from '../../src/platform/config/config.ts';
import { seedIfEmpty } from '../../src/seed/index.ts';

export const TEST_PASSWORD = 'test-password-123';

/**
 * Creates a database on the shared test cluster as a copy of the run's migrated template (the
 * global setup applies the migrations once) and returns its URL.
 */
export async function createTestDatabase(): Promise<string> {
  const base = inject('databaseUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(
      `CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')} ${inject('cloneStrategy')}`,
    );
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface TestApp {
  app: FastifyInstance;
  config: AppConfig;
  close(): Promise<void>;
}

export function testConfig(overrides: Partial<AppConfig> = {}): AppConfig {
  // A test that names its data directory (a restart on another's) gets no empty one to leave behind.
  const dataDir = overrides.dataDir ?? mkdtempSync(join(tmpdir(), 'vdi-test-'));
  return {
    ...loadConfig({}),
    host: '127.0.0.1',
    port: 0,
    dataDir,
    logLevel: 'silent',
    socketSweepMs: 200,
    // Tests sign many users in at once on a loaded machine; the shedding has its own test.
    passwordQueueBudgetMs: 60_000,
    distDir: join(dataDir, 'no-dist'),
    portalConfigPath: undefined,
    prepareImages: false,
    // No desktop networks and no Tiny Linux build unless a test asks: the bridges are per host.
    network: { mode: 'none', prefix: 'vdi', natSubnet: '10.87.0' },
    tinyLinux: false,
    ...overrides,
  };
}

/** Builds the app on `databaseUrl` (or PGlite in a temp dir when undefined) and seeds the demo. */
export async function buildTestApp(
  databaseUrl: string | undefined,
  overrides: Partial<AppConfig> = {},
  options: BuildOptions = {},
): Promise<TestApp> {
  const config = testConfig({ databaseUrl, ...overrides });
  const app = await buildApp(config, options).catch((err: unknown) => {
    // An app that refuses to build (a test of a bad configuration) leaves no directory behind.
    if (!overrides.dataDir) rmSync(config.dataDir, { recursive: true, force: true });
    throw err;
  });
  await seedIfEmpty(app, { password: TEST_PASSWORD });
  const result: TestApp = {
    app,
    config,
    async close() {
      await result.app.close();
      rmSync(config.dataDir, { recursive: true, force: true });
    },
  };
  return result;
}

export function loginRequest(
  app: FastifyInstance,
  username: string,
  password = TEST_PASSWORD,
  category = 'default',
) {
  return app.inject({
    method: 'POST',
    url: `/authentication/login?provider=form&category_id=${category}`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ username, password }).toString(),
  });
}

/** Logs in and returns the raw JWT. */
export async function login(
  app: FastifyInstance,
  username: string,
  password = TEST_PASSWORD,
): Promise<string> {
  const res = await loginRequest(app, username, password);
  if (res.statusCode !== 200)
    throw new Error(`login ${username} failed: ${res.statusCode} ${res.body}`);
  return res.body;
}

export function injectWithToken(
  app: FastifyInstance,
  token: string,
  options: InjectOptions,
): Promise<LightMyRequestResponse> {
  return app.inject({
    ...options,
    headers: { ...options.headers, authorization: `Bearer ${token}` },
  });
}

export function decodePayload(jwt: string): Record<string, unknown> {
  const part = jwt.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** A token with the same claims signed by another key. */
export async function signWithWrongKey(claims: Record<string, unknown>): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(randomBytes(64));
}

/** An unsigned alg:none token with the given claims. */
export function unsignedToken(claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${enc({ alg: 'none', typ: 'JWT' })}.${enc(claims)}.`;
}

/** Error body shape of docs/contracts.md. */
export function expectErrorShape(body: unknown, kind: string): void {
  const b = body as Record<string, unknown>;
  if (
    b.error !== kind ||
    typeof b.msg !== 'string' ||
    typeof b.description !== 'string' ||
    typeof b.description_code !== 'string' ||
    !('params' in b)
  ) {
    throw new Error(`not an error body of kind ${kind}: ${JSON.stringify(body)}`);
  }
}
