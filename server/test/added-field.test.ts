/**
 * The schema promise, proved on a copy of the repository: one new top-level desktop property
 * (stored, a list column, a card line, an edit-form field with a constraint) plus its label in
 * the English catalogue and the migration drizzle-kit writes, and nothing else, reaches the
 * TypeScript types, the drizzle table, a migration that applies on PostgreSQL and on PGlite, the
 * list, show and update calls (validated, with its code), the OpenAPI document, the table, the
 * card and the edit form. "Adding a field" in docs/contracts.md lists the same steps.
 */
import { spawnSync } from 'node:child_process';
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
import { createTestDatabase } from './helper.ts';

const root = join(import.meta.dirname, '..', '..');
const FIELD = 'asset_tag';
const LABEL = 'Asset tag';
const CODE = 'asset_tag_format';
const VALID = 'AT-0001';
const INVALID = 'not a tag!';

/** What a developer adds to schema/entities/desktop.schema.json `properties`. */
const property = {
  type: ['string', 'null'],
  maxLength: 12,
  pattern: '^[A-Z0-9-]+$',
  description: 'inventory tag of the desktop',
  'x-error': { pattern: CODE },
  'x-db': true,
  'x-in': ['info', 'update'],
  'x-ui': { column: true, card: true, order: 8, filter: true },
};

const SKIP = new Set([
  'node_modules',
  '.git',
  'dist',
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

function run(command: string, args: string[], extraEnv: Record<string, string> = {}) {
  const result = spawnSync(command, args, {
    cwd: copy,
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
  });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed:\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

const readCopy = (path: string) => readFileSync(join(copy, path), 'utf8');

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

beforeAll(() => {
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

  // 1. the schema: one property
  const schemaPath = join(copy, 'schema/entities/desktop.schema.json');
  const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as {
    properties: Record<string, unknown>;
  };
  schema.properties[FIELD] = property;
  writeFileSync(schemaPath, JSON.stringify(schema, null, 2));
  // 2. the locale: its label and the message of its code
  const resourcesPath = join(copy, 'locales/en/resources.json');
  const resources = JSON.parse(readFileSync(resourcesPath, 'utf8')) as {
    desktops: { fields: Record<string, string> };
  };
  resources.desktops.fields[FIELD] = LABEL;
  writeFileSync(resourcesPath, JSON.stringify(resources, null, 2));
  const errorsPath = join(copy, 'locales/en/errors.json');
  const errors = JSON.parse(readFileSync(errorsPath, 'utf8')) as {
    validation: Record<string, string>;
  };
  errors.validation[CODE] = 'An asset tag has capital letters, digits and hyphens only.';
  writeFileSync(errorsPath, JSON.stringify(errors, null, 2));
  // 3. the generated code and the migration drizzle-kit writes from it
  run('npx', ['tsx', 'scripts/codegen/index.ts']);
  run('npx', ['drizzle-kit', 'generate', '--name', FIELD]);
}, 120_000);

afterAll(() => {
  // ADDED_FIELD_KEEP=1 keeps the copy to look into a failure.
  if (copy && existsSync(copy) && !process.env.ADDED_FIELD_KEEP)
    rmSync(copy, { recursive: true, force: true });
});

describe('a property added to the desktop schema', () => {
  it('is in the generated types of the list item, the show answer and the update body', () => {
    const types = readCopy('src/generated/types.ts');
    for (const name of ['Desktop', 'DesktopInfo', 'DesktopUpdate'])
      expect(interfaceBlock(types, name), name).toMatch(
        new RegExp(`^${FIELD}\\?: \\(?string \\| null\\)?$`, 'm'),
      );
    expect(
      interfaceBlock(readFileSync(join(root, 'src/generated/types.ts'), 'utf8'), 'Desktop'),
    ).not.toContain(FIELD);
  });

  it('is a column of the generated drizzle table, and the new migration adds it', () => {
    expect(readCopy('src/generated/db.ts')).toMatch(/assetTag: text\('asset_tag'\)/);
    const added = readdirSync(join(copy, 'server/migrations')).filter(
      (name) => name.endsWith('.sql') && !existsSync(join(root, 'server/migrations', name)),
    );
    expect(added).toHaveLength(1);
    expect(readCopy(`server/migrations/${added[0]}`)).toMatch(
      /ALTER TABLE "desktops" ADD COLUMN "asset_tag" text;/,
    );
  });

  for (const database of ['postgres', 'pglite'] as const)
    it(`is migrated, stored, listed, shown, validated and documented on ${database}`, async () => {
      const url = database === 'postgres' ? await createTestDatabase() : '';
      const out = run(
        'npx',
        ['tsx', 'tests/contract/added-field/probe-server.ts', FIELD, VALID, INVALID],
        {
          DATABASE_URL: url,
        },
      );
      const seen = JSON.parse(out.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
      expect(seen).toMatchObject({
        database,
        column: true,
        put: 200,
        stored: VALID,
        listed: VALID,
        info: VALID,
        bad: { status: 400, code: CODE },
        openapi: ['Desktop', 'DesktopInfo', 'DesktopUpdate'],
      });
      expect((seen.migrations as string[]).at(-1)).toMatch(new RegExp(`^\\d{4}_${FIELD}$`));
    }, 120_000);

  it('is a table column, a card line and an edit-form input that checks its constraint', () => {
    writeFileSync(
      join(copy, 'vitest.probe.config.ts'),
      readFileSync(join(root, 'tests/contract/added-field/vitest.probe.config.ts'), 'utf8'),
    );
    const out = run('npx', ['vitest', 'run', '--config', 'vitest.probe.config.ts'], {
      PROBE_FIELD: FIELD,
      PROBE_LABEL: LABEL,
      PROBE_VALID: VALID,
      PROBE_INVALID: INVALID,
    });
    expect(out).toMatch(/3 passed, 0 failed/);
  }, 180_000);
});
