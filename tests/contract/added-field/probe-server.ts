/**
 * Run inside a copy of the repository whose desktop schema gained a field (see
 * server/test/added-field.test.ts): builds that copy's server on PostgreSQL (DATABASE_URL) or
 * PGlite (no DATABASE_URL), which applies its migrations, then reads and writes the field through
 * the API and prints what it saw as one JSON line.
 *
 * Usage: npx tsx tests/contract/added-field/probe-server.ts <field> <valid value> <invalid value>
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../server/src/app.ts';
import { loadConfig } from '../../../server/src/platform/config/config.ts';
import { seedIfEmpty } from '../../../server/src/seed/index.ts';

const [field = '', valid = '', invalid = ''] = process.argv.slice(2);
const password = 'probe-password-123';
const dataDir = mkdtempSync(join(tmpdir(), 'vdi-field-probe-'));
const config = {
  ...loadConfig({}),
  host: '127.0.0.1',
  port: 0,
  dataDir,
  databaseUrl: process.env.DATABASE_URL || undefined,
  logLevel: 'silent',
  distDir: join(dataDir, 'no-dist'),
  portalConfigPath: undefined,
  prepareImages: false,
};

const app = await buildApp(config);
try {
  await seedIfEmpty(app, { password });
  const login = await app.inject({
    method: 'POST',
    url: '/authentication/login?provider=form&category_id=default',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `username=user&password=${password}`,
  });
  const token = login.body.trim();
  const call = (method: 'GET' | 'PUT', url: string, payload?: unknown) =>
    app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}` },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const list = (await call('GET', '/api/v3/user/desktops')).json() as { id: string }[];
  const id = list[0]?.id ?? '';
  // Desktops are edited while stopped.
  await app.desktops.update(id, { state: 'stopped' });
  const migrations = await app.database.query<{ version: string }>(
    'SELECT version FROM schema_migrations ORDER BY version',
  );
  const columns = await app.database.query<{ column_name: string }>(
    "SELECT column_name FROM information_schema.columns WHERE table_name = 'desktops' AND column_name = $1",
    [field],
  );
  const put = await call('PUT', `/api/v3/domain/${id}`, { [field]: valid });
  const listAfter = (await call('GET', '/api/v3/user/desktops')).json() as Record<
    string,
    unknown
  >[];
  const info = (await call('GET', `/api/v3/domain/info/${id}`)).json() as Record<string, unknown>;
  const bad = await call('PUT', `/api/v3/domain/${id}`, { [field]: invalid });
  const openapi = (await call('GET', '/api/v3/openapi.json')).json() as {
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  const schemas = openapi.components.schemas;
  console.log(
    JSON.stringify({
      database: app.database.kind,
      migrations: migrations.map((m) => m.version),
      column: columns.length === 1,
      put: put.statusCode,
      listed: listAfter.find((d) => d.id === id)?.[field] ?? null,
      info: info[field] ?? null,
      bad: {
        status: bad.statusCode,
        code: (bad.json() as { description_code?: string }).description_code,
      },
      stored: ((await app.desktops.byId(id)) as Record<string, unknown> | undefined)?.[
        field.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())
      ],
      openapi: ['Desktop', 'DesktopInfo', 'DesktopUpdate'].filter(
        (type) => field in (schemas[type]?.properties ?? {}),
      ),
    }),
  );
} finally {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}
