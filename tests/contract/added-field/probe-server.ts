/**
 * Run inside a copy of the repository whose stored resources each gained the field of
 * ./resources.ts (see server/test/added-field.test.ts): builds that copy's server on each database
 * of DATABASE_URLS (comma-separated, an empty entry for PGlite; else DATABASE_URL, or PGlite),
 * which applies its migrations (PGlite on PGLITE_DATA_DIR when given: a data directory whose
 * embedded database holds the schema before the change, as the PostgreSQL database it is given
 * does), then, for every resource of RESOURCE_PROBES, creates, updates,
 * lists and shows a record with the field through the API (and reads the edit form's prefill where
 * the resource has one) and prints what it saw as one JSON line per database: `{ database, migrations, resources: { name: { column, create, update, stored,
 * list, show, prefill, invalid, openapi } } }`.
 *
 * Usage: npx tsx tests/contract/added-field/probe-server.ts
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../server/src/app.ts';
import { loadConfig } from '../../../server/src/platform/config/config.ts';
import { seedIfEmpty } from '../../../server/src/seed/index.ts';
import { operations, type Operation } from '../../../src/generated/api.ts';
import { resourceOf } from '../../../src/generated/resources.ts';
import { CODE, CREATED, FIELD, INVALID, RESOURCE_PROBES, UPDATED } from './resources.ts';

const password = 'probe-password-123';
type Json = Record<string, unknown>;
const ops = operations as unknown as Record<string, Operation>;
const opOf = (resource: string, name: string) => ops[`${resource}.${name}`];

/** The object with this id anywhere in an answer (lists may be wrapped or grouped). */
function findRecord(value: unknown, id: string): Json | null {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = findRecord(item, id);
      if (found) return found;
    }
    return null;
  }
  if (value && typeof value === 'object') {
    const record = value as Json;
    if (record.id === id) return record;
    for (const child of Object.values(record)) {
      const found = findRecord(child, id);
      if (found) return found;
    }
  }
  return null;
}

/** Probes every resource on one database (PGlite when no URL) and prints what it saw. */
async function probeOn(databaseUrl: string | undefined): Promise<void> {
  const dataDir =
    (!databaseUrl && process.env.PGLITE_DATA_DIR) ||
    mkdtempSync(join(tmpdir(), 'vdi-field-probe-'));
  const config = {
    ...loadConfig({}),
    host: '127.0.0.1',
    port: 0,
    dataDir,
    databaseUrl: databaseUrl,
    logLevel: 'silent',
    distDir: join(dataDir, 'no-dist'),
    portalConfigPath: undefined,
    prepareImages: false,
  };

  const app = await buildApp(config);
  try {
    await seedIfEmpty(app, { password });
    const tokens = new Map<string, string>();
    const tokenOf = async (username: string) => {
      const known = tokens.get(username);
      if (known) return known;
      const login = await app.inject({
        method: 'POST',
        url: '/authentication/login?provider=form&category_id=default',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `username=${username}&password=${password}`,
      });
      const token = login.body.trim();
      tokens.set(username, token);
      return token;
    };
    const firstValue = async (query: string): Promise<string> => {
      const rows = await app.database.query<Json>(query);
      return String(Object.values(rows[0] ?? {})[0] ?? '');
    };
    let serial = 0;
    /** A body with its placeholders filled. */
    const fill = async (value: unknown, id: string): Promise<unknown> => {
      if (typeof value === 'string') {
        if (value === '$name') return `probe-${Date.now().toString(36)}-${serial++}`;
        if (value === '$id') return id;
        if (value.startsWith('SELECT ')) return firstValue(value);
        return value;
      }
      if (Array.isArray(value)) return Promise.all(value.map((v) => fill(v, id)));
      if (value && typeof value === 'object') {
        const out: Json = {};
        for (const [k, v] of Object.entries(value)) out[k] = await fill(v, id);
        return out;
      }
      return value;
    };
    const call = async (
      user: string,
      op: Operation,
      params: Record<string, string>,
      payload?: unknown,
    ) => {
      const inPath = new Set<string>();
      const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
        inPath.add(name);
        return encodeURIComponent(params[name] ?? '');
      });
      // the parameters the path does not name go in the query of an operation that has one
      const query = op.query
        ? new URLSearchParams(
            Object.entries(params).filter(([name]) => !inPath.has(name)),
          ).toString()
        : '';
      const form = op.body === 'form' && payload !== undefined;
      const res = await app.inject({
        method: op.method as 'GET',
        url:
          (op.base === 'auth' ? '/authentication' : '/api/v3') + path + (query ? `?${query}` : ''),
        headers: {
          authorization: `Bearer ${await tokenOf(user)}`,
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(payload === undefined
          ? {}
          : form
            ? {
                payload: new URLSearchParams(
                  Object.entries(payload as Json).map(([k, v]) => [k, String(v)]),
                ).toString(),
              }
            : { payload: payload as Json }),
      });
      let body: unknown = null;
      try {
        body = res.json();
      } catch {
        body = res.body;
      }
      return { status: res.statusCode, body };
    };
    const readColumn = async (table: string, id: string): Promise<unknown> => {
      try {
        const rows = await app.database.query<Json>(
          `SELECT ${FIELD} AS value FROM ${table} WHERE id = $1`,
          [id],
        );
        return rows[0]?.value ?? null;
      } catch {
        return null;
      }
    };
    const migrations = await app.database.query<{ version: string }>(
      'SELECT version FROM schema_migrations ORDER BY version',
    );
    const openapi = (await app.inject({ method: 'GET', url: '/api/v3/openapi.json' })).json() as {
      components: { schemas: Record<string, { properties?: Json }> };
    };
    const results: Record<string, Json> = {};
    for (const probe of RESOURCE_PROBES) {
      const seen: Json = {};
      results[probe.resource] = seen;
      try {
        const columns = await app.database.query<Json>(
          'SELECT column_name FROM information_schema.columns WHERE table_name = $1 AND column_name = $2',
          [probe.table, FIELD],
        );
        seen.column = columns.length === 1;
        let id = probe.pick ? await firstValue(probe.pick) : '';
        let expected = CREATED;
        const create = opOf(probe.resource, 'create');
        const update = opOf(probe.resource, 'update');
        if ('body' in probe.create && create) {
          const body = (await fill(probe.create.body, id)) as Json;
          const res = await call(probe.user, create, {}, { ...body, [FIELD]: CREATED });
          seen.create = res.status;
          seen.createAnswer = res.status >= 300 ? res.body : undefined;
          const answer = res.body;
          id =
            typeof answer === 'string'
              ? answer
              : String((answer as Json | null)?.id ?? (answer as Json | null)?.event_id ?? '');
        }
        if (probe.prepare === 'stopDesktop') await app.desktops.update(id, { state: 'stopped' });
        if (probe.prepare === 'settleDeployment') {
          for (let i = 0; i < 600; i++) {
            const counts = await app.deployments.counts([id]);
            if ((counts.get(id)?.creatingDesktops ?? 0) === 0) break;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          await app.deploymentService.events.settled();
        }
        if (!('body' in probe.create) && 'none' in probe.update) {
          // A read-only resource: the field is written where its column is, then read back.
          await app.database
            .query(`UPDATE ${probe.table} SET ${FIELD} = $1 WHERE id = $2`, [CREATED, id])
            .catch(() => undefined);
        }
        if (!('none' in probe.update) && update) {
          const body = (await fill(probe.update.body ?? {}, id)) as Json;
          const res = await call(probe.user, update, { id }, { ...body, [FIELD]: UPDATED });
          seen.update = res.status;
          seen.updateAnswer = res.status >= 300 ? res.body : undefined;
          expected = UPDATED;
        }
        seen.id = id;
        seen.expected = expected;
        seen.stored = await readColumn(probe.table, id);
        const list = opOf(probe.resource, probe.listOp ?? 'list');
        if (list) {
          const params = (await fill(probe.listParams ?? {}, id)) as Record<string, string>;
          const res = await call(probe.user, list, params);
          seen.list = findRecord(res.body, id)?.[FIELD] ?? null;
        }
        const show = opOf(probe.resource, 'show');
        if (show && !probe.noShow) {
          const res = await call(probe.user, show, { id });
          seen.show =
            (res.body as Json | null)?.[FIELD] ?? findRecord(res.body, id)?.[FIELD] ?? null;
        }
        const prefillOp = resourceOf(probe.resource)?.meta.editPrefill;
        const prefill = prefillOp ? opOf(probe.resource, prefillOp) : undefined;
        if (prefill) {
          const res = await call(probe.user, prefill, { id });
          seen.prefill = (res.body as Json | null)?.[FIELD] ?? null;
        }
        const writer = !('none' in probe.update) ? update : 'body' in probe.create ? create : null;
        if (writer) {
          const body = (await fill(
            writer === update && !('none' in probe.update)
              ? (probe.update.body ?? {})
              : 'body' in probe.create
                ? probe.create.body
                : {},
            id,
          )) as Json;
          const res = await call(probe.user, writer, { id }, { ...body, [FIELD]: INVALID });
          seen.invalid = {
            status: res.status,
            code: (res.body as { description_code?: string } | null)?.description_code ?? null,
          };
        }
        // The entity, its show answer and its create and update bodies, as the SPA knows them.
        const types = Object.values(resourceOf(probe.resource)?.meta.types ?? {}).filter(
          (type): type is string => type !== null,
        );
        const schemas = openapi.components.schemas;
        seen.openapi = Object.fromEntries(
          [...new Set(types)].map((type) => [type, FIELD in (schemas[type]?.properties ?? {})]),
        );
      } catch (error) {
        seen.error = (error as Error).message;
      }
    }
    console.log(
      JSON.stringify({
        database: app.database.kind,
        migrations: migrations.map((m) => m.version),
        code: CODE,
        resources: results,
      }),
    );
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// DATABASE_URLS: the databases to probe, comma-separated, an empty entry for PGlite; one process
// probes them all, so the server's modules load once.
for (const url of (process.env.DATABASE_URLS ?? process.env.DATABASE_URL ?? '').split(','))
  await probeOn(url || undefined);
