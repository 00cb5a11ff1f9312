// @vitest-environment node
/**
 * The import layers are enforced by lint: eslint.config.js turns on import-x/no-restricted-paths
 * (imports flow one way only) and import-x/no-cycle. Virtual files inside the repository are
 * linted with the real config; the cycle uses two real fixture files, because no-cycle reads the
 * modules it follows from disk.
 */
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ESLint, type Linter } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const LAYERS = 'import-x/no-restricted-paths';
const CYCLE = 'import-x/no-cycle';

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
      expect(config.rules?.[CYCLE], file).toEqual([
        2,
        expect.objectContaining({ maxDepth: expect.any(Number), ignoreExternal: true }),
      ]);
    }
  });

  it('an import cycle is reported with the configured options', async () => {
    const config = (await eslint.calculateConfigForFile(
      join(root, 'src/lib/x.ts'),
    )) as Linter.Config;
    const cycle = config.rules?.[CYCLE];
    expect(cycle).toBeDefined();
    // the fixtures are excluded from the normal run: lint them on purpose, with the src/ options
    const fixtures = new ESLint({
      cwd: root,
      ignore: false,
      overrideConfig: {
        files: ['tests/contract/fixtures/lint-cycle/*.ts'],
        rules: { [CYCLE]: cycle },
      },
    });
    const results = await fixtures.lintFiles(['tests/contract/fixtures/lint-cycle/*.ts']);
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(
        result.messages.map((m) => m.ruleId),
        result.filePath,
      ).toContain(CYCLE);
    }
  });
});
