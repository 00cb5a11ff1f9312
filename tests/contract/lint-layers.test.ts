// @vitest-environment node
/**
 * The import layers are enforced by lint: eslint.config.js turns on import-x/no-restricted-paths
 * (imports flow one way only) and imports/no-cycle (scripts/lint/import-cycles.mjs). Virtual files
 * inside the repository are linted with the real config; the cycles use real fixture files,
 * because no-cycle reads the modules it follows from disk.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const LAYERS = 'import-x/no-restricted-paths';
const CYCLE = 'imports/no-cycle';

let eslint: ESLint;

/**
 * A real module in `dir` (repo-relative): `preferred` while it exists, else the first source file
 * there. The rules skip imports they cannot resolve, so every import below must hit a real file.
 */
function moduleIn(dir: string, preferred: string): string {
  if (existsSync(join(root, dir, preferred))) return `${dir}/${preferred}`;
  const found = readdirSync(join(root, dir))
    .filter((name) => /\.tsx?$/.test(name) && !/\.(test|d)\.tsx?$/.test(name))
    .sort()[0];
  if (!found) throw new Error(`no module left in ${dir}: pick another target for this test`);
  return `${dir}/${found}`;
}

/** tsconfig.json's path aliases as the cycle rule takes them: `{ '@/': 'src/' }`. */
function tsconfigAliases(): Record<string, string> {
  const tsconfig = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')) as {
    compilerOptions: { paths: Record<string, string[]> };
  };
  return Object.fromEntries(
    Object.entries(tsconfig.compilerOptions.paths).map(([alias, [target]]) => [
      alias.replace(/\*$/, ''),
      (target ?? '').replace(/^\.\//, '').replace(/\*$/, ''),
    ]),
  );
}

/** `src/x/y.ts` as the SPA imports it: `@/x/y`. */
const alias = (file: string) => file.replace(/^src\//, '@/').replace(/\.tsx?$/, '');

beforeAll(() => {
  eslint = new ESLint({ cwd: root });
});

async function importMessages(filePath: string, code: string): Promise<Linter.LintMessage[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, filePath) });
  expect(result, `${filePath} was not linted (ignored?)`).toBeDefined();
  const messages = result?.messages ?? [];
  // a config or parser problem would hide the rules under test
  expect(messages.filter((m) => m.fatal === true || m.ruleId === null)).toEqual([]);
  return messages.filter((m) => m.ruleId === LAYERS || m.ruleId === CYCLE);
}

describe('layers: upward and sideways imports are errors', () => {
  it.each([
    {
      name: 'src/lib importing a provider',
      filePath: 'src/lib/x.ts',
      code: `import * as http from '${alias(moduleIn('src/providers', 'http-client.ts'))}';\nexport const h = http;\n`,
      message: /src\/lib is below providers/,
    },
    {
      name: 'a feature importing another feature',
      filePath: 'src/features/desktops/x.tsx',
      code: `import * as flow from '${alias(moduleIn('src/features/viewers', 'open-flow.ts'))}';\nexport const f = flow;\n`,
      message: /A feature must not import another feature \(src\/features\/desktops\)/,
    },
    {
      name: 'server/src/platform importing a domain',
      filePath: 'server/src/platform/lib/x.ts',
      code: `import * as rules from '../../../../${moduleIn('server/src/domains/desktops', 'index.ts')}';\nexport const r = rules;\n`,
      message: /server\/src\/platform is below every domain/,
    },
    {
      name: "a domain reaching into another domain's internal module",
      filePath: 'server/src/domains/deployments/x.ts',
      code: `import * as rules from '../../../../${moduleIn('server/src/domains/desktops', 'desktop-rules.ts')}';\nexport const r = rules;\n`,
      message:
        /A domain reaches another domain only through its index\.ts \(server\/src\/domains\/deployments\)/,
    },
    {
      name: "a test beside a domain reaching into another domain's internal module",
      filePath: 'server/src/domains/deployments/x.test.ts',
      code: `import * as rules from '../../../../${moduleIn('server/src/domains/desktops', 'desktop-rules.ts')}';\nexport const r = rules;\n`,
      message:
        /A domain reaches another domain only through its index\.ts \(server\/src\/domains\/deployments\)/,
    },
    {
      name: 'a test beside a platform piece importing a domain',
      filePath: 'server/src/platform/lib/x.test.ts',
      code: `import * as desktops from '../../../../${moduleIn('server/src/domains/desktops', 'index.ts')}';\nexport const d = desktops;\n`,
      message: /server\/src\/platform is below every domain/,
    },
    {
      name: "the server's code importing the test support",
      filePath: 'server/src/domains/desktops/x.ts',
      code: `import * as helper from '../../../../${moduleIn('server/test/support', 'helper.ts')}';\nexport const h = helper;\n`,
      message: /Only tests import the test support/,
    },
    {
      name: "a type-only import of another domain's internal module",
      filePath: 'server/src/domains/bookings/routes/x.ts',
      code: `import type * as types from '../../../../../${moduleIn('server/src/domains/desktops', 'types.ts')}';\nexport type T = typeof types;\n`,
      message:
        /A domain reaches another domain only through its index\.ts \(server\/src\/domains\/bookings\)/,
    },
    {
      name: "the app composition reaching into a domain's internal module",
      filePath: 'server/src/seed/x.ts',
      code: `import * as service from '../../../${moduleIn('server/src/domains/desktops', 'desktop-service.ts')}';\nexport const s = service;\n`,
      message:
        /The app composition \(app\.ts, server\.ts, seed\/\) reaches a domain only through its index\.ts/,
    },
    {
      name: 'a domain importing the app composition',
      filePath: 'server/src/domains/desktops/x.ts',
      code: `import * as app from '../../../../server/src/app.ts';\nexport const a = app;\n`,
      message: /A domain is below the app composition/,
    },
    {
      name: 'the server importing SPA code other than src/generated',
      filePath: 'server/src/domains/desktops/x.ts',
      code: `import * as token from '../../../../${moduleIn('src/lib', 'token.ts')}';\nexport const t = token;\n`,
      message: /The server may import only src\/generated from the SPA/,
    },
    {
      name: 'a type-only import from a higher layer',
      filePath: 'server/src/platform/lib/x.ts',
      code: `import type * as plugin from '../../../../${moduleIn('server/src/domains/account/routes', 'session.ts')}';\nexport type P = typeof plugin;\n`,
      message: /server\/src\/platform is below every domain/,
    },
  ])('$name', async ({ filePath, code, message }) => {
    const messages = await importMessages(filePath, code);
    expect(messages.map((m) => m.ruleId)).toEqual([LAYERS]);
    expect(messages[0]?.message).toMatch(message);
  });
});

describe('layers: downward imports are allowed', () => {
  it.each([
    {
      name: 'a feature importing resources, generated code and itself',
      filePath: 'src/features/desktops/x.tsx',
      code: [
        `import * as resources from '${alias(moduleIn('src/resources/actions', 'available-actions.ts'))}';`,
        `import type * as generated from '${alias(moduleIn('src/generated', 'types.ts'))}';`,
        `import * as own from '${alias(moduleIn('src/features/desktops', 'desktop-card.tsx'))}';`,
        `import * as http from '${alias(moduleIn('src/providers', 'http-client.ts'))}';`,
        'export const x = [resources, own, http];',
        'export type G = typeof generated;',
        '',
      ].join('\n'),
    },
    {
      name: "a domain importing another domain's index, its own modules, platform and src/generated",
      filePath: 'server/src/domains/deployments/routes/x.ts',
      code: [
        `import * as desktops from '../../../../../${moduleIn('server/src/domains/desktops', 'index.ts')}';`,
        `import * as own from '../../../../../${moduleIn('server/src/domains/deployments', 'deployment-access.ts')}';`,
        `import * as platform from '../../../../../${moduleIn('server/src/platform/http', 'api-error.ts')}';`,
        `import type * as generated from '../../../../../${moduleIn('src/generated', 'types.ts')}';`,
        'export const x = [desktops, own, platform];',
        'export type G = typeof generated;',
        '',
      ].join('\n'),
    },
    {
      name: "a test beside a domain importing its own modules, another domain's index, the app composition and the test support",
      filePath: 'server/src/domains/deployments/x.test.ts',
      code: [
        `import * as own from '../../../../${moduleIn('server/src/domains/deployments', 'deployment-access.ts')}';`,
        `import * as desktops from '../../../../${moduleIn('server/src/domains/desktops', 'index.ts')}';`,
        `import * as app from '../../../../server/src/app.ts';`,
        `import * as seed from '../../../../${moduleIn('server/src/seed', 'index.ts')}';`,
        `import * as helper from '../../../../${moduleIn('server/test/support', 'helper.ts')}';`,
        'export const x = [own, desktops, app, seed, helper];',
        '',
      ].join('\n'),
    },
    {
      name: "the app composition importing a domain's index and platform",
      filePath: 'server/src/seed/x.ts',
      code: [
        `import * as desktops from '../../../${moduleIn('server/src/domains/desktops', 'index.ts')}';`,
        `import * as platform from '../../../${moduleIn('server/src/platform/db', 'schema.ts')}';`,
        'export const x = [desktops, platform];',
        '',
      ].join('\n'),
    },
  ])('$name', async ({ filePath, code }) => {
    expect(await importMessages(filePath, code)).toEqual([]);
  });
});

describe('cycles', () => {
  it('no-cycle is on for src/, server/src and common/', async () => {
    for (const file of [
      'src/lib/x.ts',
      'src/app/x.tsx',
      'server/src/platform/lib/x.ts',
      'server/src/domains/desktops/x.ts',
      'common/x.ts',
    ]) {
      const config = (await eslint.calculateConfigForFile(join(root, file))) as Linter.Config;
      expect(config.rules?.[CYCLE], file).toEqual([2, { aliases: tsconfigAliases() }]);
    }
  });

  /**
   * Lints `files` (repo-relative globs, outside the normal run) with src/'s rule, plus `aliases`.
   * Fixtures written by a test go under .tmp/, which no other check reads while tests run.
   */
  async function lintWithCycleRule(
    files: string[],
    aliases: Record<string, string> = {},
  ): Promise<ESLint.LintResult[]> {
    const config = (await eslint.calculateConfigForFile(
      join(root, 'src/lib/x.ts'),
    )) as Linter.Config;
    const cycle = config.rules?.[CYCLE] as [Linter.Severity, { aliases: Record<string, string> }];
    expect(cycle).toBeDefined();
    const fixtures = new ESLint({
      cwd: root,
      ignore: false,
      overrideConfig: {
        files,
        rules: { [CYCLE]: [cycle[0], { aliases: { ...cycle[1].aliases, ...aliases } }] },
      },
    });
    return fixtures.lintFiles(files);
  }

  it('an import cycle is reported on both of its imports', async () => {
    const results = await lintWithCycleRule(['tests/contract/fixtures/lint-cycle/*.ts']);
    expect(results).toHaveLength(2);
    for (const result of results) {
      const cycles = result.messages.filter((m) => m.ruleId === CYCLE);
      expect(cycles, result.filePath).toHaveLength(1);
      expect(cycles[0]?.message).toMatch(
        /^Dependency cycle: tests\/contract\/fixtures\/lint-cycle\/(ping|pong)\.ts → .*(pong|ping)\.ts → .*\1\.ts$/,
      );
    }
  });

  it('a cycle of 14 modules is found at any depth, through an alias and a lazy import', async () => {
    const dir = join(root, '.tmp/lint-fixture-deep-cycle');
    const files = Array.from({ length: 14 }, (_, n) => `m${n}.ts`);
    mkdirSync(dir, { recursive: true });
    try {
      files.forEach((name, n) => {
        const next = `m${(n + 1) % files.length}`;
        const line =
          n === 5
            ? `export const f${n} = () => import('@deep/${next}');`
            : `import { f${(n + 1) % files.length} } from './${next}';\nexport const f${n} = () => f${(n + 1) % files.length};`;
        writeFileSync(join(dir, name), `${line}\n`);
      });
      const results = await lintWithCycleRule(['.tmp/lint-fixture-deep-cycle/*.ts'], {
        '@deep/': '.tmp/lint-fixture-deep-cycle/',
      });
      expect(results).toHaveLength(files.length);
      for (const result of results)
        expect(
          result.messages.filter((m) => m.ruleId === CYCLE).map((m) => m.message),
          result.filePath,
        ).toEqual([expect.stringMatching(/^Dependency cycle: (\S+ → ){14}\S+$/)]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('type-only imports are not followed: a cycle of types is no cycle at runtime', async () => {
    const dir = join(root, '.tmp/lint-fixture-type-cycle');
    mkdirSync(dir, { recursive: true });
    try {
      writeFileSync(
        join(dir, 'left.ts'),
        "import type { Right } from './right';\nexport type Left = { right?: Right };\nexport const left = 1;\n",
      );
      writeFileSync(
        join(dir, 'right.ts'),
        "import { type Left } from './left';\nexport type Right = { left?: Left };\nexport const right = 2;\n",
      );
      const results = await lintWithCycleRule(['.tmp/lint-fixture-type-cycle/*.ts']);
      expect(results).toHaveLength(2);
      for (const result of results)
        expect(
          result.messages.filter((m) => m.ruleId === CYCLE),
          result.filePath,
        ).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
