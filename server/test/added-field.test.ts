/**
 * The schema promise, proved on one copy of the repository for every stored resource at once:
 * each resource of tests/contract/added-field/resources.ts gains one top-level property in the
 * schema file that declares the resource (stored, a list column, a form field with a pattern and
 * its own code), its label in the English catalogue and the migration drizzle-kit writes, and
 * nothing else. The field must reach the TypeScript types, the drizzle table, a migration that
 * applies on PostgreSQL and on PGlite, the create, update, list and show calls (validated, with
 * its code), the read that fills the edit form where the resource has one (deployments' info),
 * the OpenAPI document, the table column and the form. "Adding a field" in
 * docs/contracts.md lists the same steps. Codegen, drizzle-kit, the server probe (per database)
 * and the UI probe each run once for all the resources.
 */
import { spawn } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/helper.ts';
import { pgliteDataDir } from './support/pglite-template.ts';
import {
  CHECKS,
  CODE,
  FIELD,
  LABEL,
  RESOURCE_PROBES,
  type Check,
  type ResourceProbe,
} from '../../tests/contract/added-field/resources.ts';

const root = join(import.meta.dirname, '..', '..');

type Json = Record<string, unknown>;

/** What a developer adds to the `properties` of the resource's schema file. */
const property = {
  type: ['string', 'null'],
  maxLength: 12,
  pattern: '^[A-Z0-9-]+$',
  description: 'inventory tag of the record',
  'x-error': { pattern: CODE },
  'x-db': true,
  // also in the show answer and the create and update bodies the resource's operations name
  'x-in': true,
  'x-ui': { column: true, card: true, order: 8, filter: true },
};

const SKIP = new Set([
  'node_modules',
  '.git',
  'dist',
  // the server bundle, which the builds of `npm test` may be writing meanwhile
  'dist-server',
  'data',
  '.tmp',
  'test-results',
  'playwright-report',
  'coverage',
  'generated',
]);

let copy: string;
/** Child processes must not add their test counts to this run's totals. */
const env = { ...process.env, TEST_COUNTS_FILE: '', CI: 'true' };

/**
 * A tool of the project's node_modules/.bin (started directly: `npx` would spend a third of a
 * CPU-second finding it), run in the copy; answers its output, and fails when it fails.
 */
function tool(name: string, args: string[], extraEnv: Record<string, string> = {}) {
  return new Promise<string>((resolve, reject) => {
    const child = spawn(join(root, 'node_modules', '.bin', name), args, {
      cwd: copy,
      env: { ...env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status === 0) resolve(stdout);
      else reject(new Error(`${name} ${args.join(' ')} failed (${status}):\n${stdout}\n${stderr}`));
    });
  });
}

const readCopy = (path: string) => readFileSync(join(copy, path), 'utf8');
const readJson = (path: string) => JSON.parse(readCopy(path)) as Json;
const writeJson = (path: string, value: unknown) =>
  writeFileSync(join(copy, path), JSON.stringify(value, null, 2));

/** The body of one generated interface in types.ts (nested object types included). */
function interfaceBlock(types: string, name: string): string {
  const start = types.indexOf(`export interface ${name} {`);
  if (start < 0) return '';
  let depth = 0;
  for (let i = types.indexOf('{', start); i < types.length; i++) {
    if (types[i] === '{') depth++;
    else if (types[i] === '}' && --depth === 0) return types.slice(start, i + 1);
  }
  return '';
}

/** The schema file declaring the resource (its x-resource). */
function resourceFile(resource: string): string {
  for (const name of readdirSync(join(copy, 'schema/entities'))) {
    const path = `schema/entities/${name}`;
    if ((readJson(path)['x-resource'] as { name?: string } | undefined)?.name === resource)
      return path;
  }
  throw new Error(`no schema file declares the resource ${resource}`);
}

/** What one server probe run saw, per resource. */
interface ServerSeen {
  database: string;
  migrations: string[];
  resources: Record<string, Json>;
}
const servers: ServerSeen[] = [];
/** The UI probe's test results: `<resource> <check>` -> passed, and the failure messages. */
const ui = new Map<string, { passed: boolean; messages: string[] }>();
let migration = '';

beforeAll(async () => {
  mkdirSync(join(root, '.tmp'), { recursive: true });
  copy = mkdtempSync(join(root, '.tmp', 'added-field-'));
  for (const entry of readdirSync(root))
    if (!SKIP.has(entry))
      cpSync(join(root, entry), join(copy, entry), {
        recursive: true,
        filter: (source) =>
          !relative(root, source)
            .split('/')
            .some((part) => SKIP.has(part)),
      });
  symlinkSync(join(root, 'node_modules'), join(copy, 'node_modules'), 'dir');

  const resources = readJson('locales/en/resources.json') as Record<
    string,
    { fields?: Record<string, string> }
  >;
  for (const probe of RESOURCE_PROBES) {
    // 1. the schema: one property in the file that declares the resource
    const path = resourceFile(probe.resource);
    const schema = readJson(path) as { properties: Json };
    schema.properties[FIELD] = property;
    writeJson(path, schema);
    // 2. the locale: its label
    const entry = (resources[probe.resource] ??= {});
    entry.fields = { ...entry.fields, [FIELD]: LABEL };
  }
  writeJson('locales/en/resources.json', resources);
  const errors = readJson('locales/en/errors.json') as { validation: Record<string, string> };
  errors.validation[CODE] = 'An asset tag has capital letters, digits and hyphens only.';
  writeJson('locales/en/errors.json', errors);
  // 3. the generated code and the migration drizzle-kit writes from it
  await tool('tsx', ['scripts/codegen/index.ts']);
  await tool('drizzle-kit', ['generate', '--name', FIELD]);
  const added = readdirSync(join(copy, 'server/migrations')).filter(
    (name) => name.endsWith('.sql') && !existsSync(join(root, 'server/migrations', name)),
  );
  expect(added).toHaveLength(1);
  migration = readCopy(`server/migrations/${added[0]}`);

  // 4. the server on each database, probing every resource (one process for both), and 5. the
  // screens, once, probing every resource: two processes side by side, each reading only the
  // copy's code and writing only its own output.
  writeFileSync(
    join(copy, 'vitest.probe.config.ts'),
    readFileSync(join(root, 'tests/contract/added-field/vitest.probe.config.ts'), 'utf8'),
  );
  const [server] = await Promise.allSettled([
    // Both databases hold the schema before the change (a clone of the migrated template
    // database, a copy of the migrated embedded one): the server applies the one new migration,
    // as an upgraded portal does.
    tool('tsx', ['tests/contract/added-field/probe-server.ts'], {
      DATABASE_URLS: `${await createTestDatabase()},`,
      PGLITE_DATA_DIR: await pgliteDataDir('vdi-field-probe-'),
    }),
    // Its failing tests are the checks' verdicts, read from its report: its exit code is not.
    tool('vitest', [
      'run',
      '--config',
      'vitest.probe.config.ts',
      '--reporter=json',
      '--outputFile=ui.json',
    ]),
  ]);
  if (server.status === 'rejected') throw server.reason;
  const out = server.value;
  const lines = out.trim().split('\n').slice(-2);
  for (const [index, database] of (['postgres', 'pglite'] as const).entries()) {
    const seen = JSON.parse(lines[index] ?? '{}') as ServerSeen;
    expect(seen.database).toBe(database);
    expect(seen.migrations.at(-1)).toMatch(new RegExp(`^\\d{4}_${FIELD}$`));
    servers.push(seen);
  }
  const report = readJson('ui.json') as {
    testResults: {
      assertionResults: { title: string; status: string; failureMessages: string[] }[];
    }[];
  };
  for (const file of report.testResults)
    for (const test of file.assertionResults)
      ui.set(test.title, {
        passed: test.status === 'passed',
        messages: test.failureMessages.map((m) => m.split('\n')[0] ?? ''),
      });
}, 600_000);

afterAll(() => {
  // ADDED_FIELD_KEEP=1 keeps the copy to look into a failure.
  if (copy && existsSync(copy) && !process.env.ADDED_FIELD_KEEP)
    rmSync(copy, { recursive: true, force: true });
});

/** Which checks hold for the resource, each with what was seen when it does not. */
function checksOf(probe: ResourceProbe): Map<Check, string | null> {
  const result = new Map<Check, string | null>();
  const verdict = (check: Check, ok: boolean, seen: unknown) =>
    result.set(check, ok ? null : JSON.stringify(seen));
  const types = readCopy('src/generated/types.ts');
  const typeNames = Object.keys((servers[0]?.resources[probe.resource]?.openapi ?? {}) as Json);
  const missing = typeNames.filter(
    (name) =>
      !new RegExp(`^${FIELD}\\?: \\(?string \\| null\\)?$`, 'm').test(interfaceBlock(types, name)),
  );
  verdict('type', typeNames.length > 0 && missing.length === 0, { typeNames, missing });
  const db = readCopy('src/generated/db.ts');
  const start = db.indexOf(`pgTable('${probe.table}', {`);
  const block = start < 0 ? '' : db.slice(start, db.indexOf('\n}', start));
  verdict('table', block.includes(`: text('${FIELD}')`), `no ${FIELD} column in ${probe.table}`);
  verdict(
    'migration',
    migration.includes(`ALTER TABLE "${probe.table}" ADD COLUMN "${FIELD}" text;`),
    migration,
  );
  const perDatabase = (check: Check, ok: (seen: Json) => boolean, pick: (seen: Json) => unknown) =>
    verdict(
      check,
      servers.every((s) => ok(s.resources[probe.resource] ?? {})),
      servers.map((s) => ({
        database: s.database,
        seen: pick(s.resources[probe.resource] ?? {}),
        error: s.resources[probe.resource]?.error,
      })),
    );
  const ok2xx = (status: unknown) => typeof status === 'number' && status < 300;
  perDatabase(
    'column',
    (s) => s.column === true,
    (s) => s.column,
  );
  if ('body' in probe.create)
    perDatabase(
      'create',
      (s) => ok2xx(s.create),
      (s) => [s.create, s.createAnswer],
    );
  if (!('none' in probe.update))
    perDatabase(
      'update',
      (s) => ok2xx(s.update),
      (s) => [s.update, s.updateAnswer],
    );
  perDatabase(
    'stored',
    (s) => s.stored === s.expected,
    (s) => [s.stored, s.expected],
  );
  if (servers.some((s) => 'list' in (s.resources[probe.resource] ?? {})))
    perDatabase(
      'list',
      (s) => s.list === s.expected,
      (s) => [s.list, s.expected],
    );
  if (!probe.noShow)
    perDatabase(
      'show',
      (s) => s.show === s.expected,
      (s) => [s.show, s.expected],
    );
  if (servers.some((s) => 'prefill' in (s.resources[probe.resource] ?? {})))
    perDatabase(
      'editPrefill',
      (s) => s.prefill === s.expected,
      (s) => [s.prefill, s.expected],
    );
  if ('body' in probe.create || !('none' in probe.update))
    perDatabase(
      'invalid',
      (s) => {
        const bad = s.invalid as { status?: number; code?: string } | undefined;
        return bad?.status === 400 && bad.code === CODE;
      },
      (s) => s.invalid,
    );
  perDatabase(
    'openapi',
    (s) => {
      const found = Object.values((s.openapi ?? {}) as Record<string, boolean>);
      return found.length > 0 && found.every(Boolean);
    },
    (s) => s.openapi,
  );
  const screens: Check[] = [
    ...(probe.noListColumn ? [] : ['listColumn' as const]),
    ...(probe.card ? ['card' as const] : []),
    ...(typeof probe.form === 'string' ? ['form' as const] : []),
  ];
  for (const check of screens) {
    const test = ui.get(`${probe.resource} ${check}`);
    verdict(check, test?.passed === true, test?.messages ?? 'the UI probe has no result');
  }
  return result;
}

describe('a property added to every stored resource', () => {
  it('is probed for every resource of the table of expectations', () => {
    expect(servers).toHaveLength(2);
    for (const probe of RESOURCE_PROBES) {
      expect(servers[0]?.resources[probe.resource], probe.resource).toBeDefined();
      for (const check of Object.keys(probe.gaps ?? {}))
        expect(CHECKS, `${probe.resource}: gap ${check}`).toContain(check);
    }
  });

  for (const probe of RESOURCE_PROBES)
    it(`reaches every layer of ${probe.resource} (table ${probe.table})`, () => {
      const checks = checksOf(probe);
      const failed = Object.fromEntries(
        [...checks].filter(([, seen]) => seen !== null).map(([check, seen]) => [check, seen]),
      );
      // The checks that fail are exactly the gaps the table of expectations admits.
      expect(Object.keys(failed).sort(), JSON.stringify(failed, null, 2)).toEqual(
        Object.keys(probe.gaps ?? {}).sort(),
      );
      // Every check the resource has ran (listColumn, card and form where it has them).
      expect([...checks.keys()]).toEqual(
        expect.arrayContaining(['type', 'table', 'migration', 'column', 'stored', 'openapi']),
      );
    });
});
