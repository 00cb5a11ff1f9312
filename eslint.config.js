// ESLint flat config: typescript-eslint strict + stylistic, react-hooks, jsx-a11y, kebab-case files,
// the import layers (imports flow one way only) enforced with import-x, and no import cycles
// (scripts/lint/import-cycles.mjs: one module graph for the whole run).
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import jsxA11y from 'eslint-plugin-jsx-a11y';
import checkFile from 'eslint-plugin-check-file';
import globals from 'globals';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importCycles from './scripts/lint/import-cycles.mjs';

const root = fileURLToPath(new URL('.', import.meta.url));

/** Every folder under src/features: each one is a feature that must not import another one. */
const features = readdirSync(new URL('./src/features', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** One zone: files under `target` must not import anything under `from` (paths from the repo root). */
const layer = (target, from, message, except) => ({
  target,
  from,
  message,
  ...(except ? { except } : {}),
});

const spaBottom = ['src/lib', 'src/components', 'src/hooks', 'src/i18n'];

/** Every folder under server/src/domains: each one may reach another only through its index.ts. */
const domains = readdirSync(new URL('./server/src/domains', import.meta.url), {
  withFileTypes: true,
})
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** The server's composition: the app, the process entry and the seed, above every domain. */
const serverComposition = ['server/src/app.ts', 'server/src/server.ts', 'server/src/seed'];

/**
 * The server's tests that sit beside the code they test. The ones spanning the whole app stay in
 * server/test, with the shared test support in server/test/support.
 */
const serverTestFiles = ['server/src/**/*.test.ts'];

/** The SPA's zones. */
const spaZones = [
  ...spaBottom.map((target) =>
    layer(
      target,
      ['src/providers', 'src/resources', 'src/features', 'src/app'],
      `${target} is below providers, resources, features and app: move the shared piece down or inject it.`,
    ),
  ),
  layer(
    'src/providers',
    ['src/resources', 'src/features', 'src/app'],
    'src/providers is below resources, features and app: move the shared piece down or inject it.',
  ),
  layer(
    'src/resources',
    ['src/features', 'src/app'],
    'src/resources is below features and app: move the shared piece down or inject it.',
  ),
  layer(
    'src/features',
    'src/app',
    'src/features is below src/app (composition): pass what the feature needs in from the app.',
  ),
  ...features.map((feature) =>
    layer(
      `src/features/${feature}`,
      'src/features',
      `A feature must not import another feature (src/features/${feature}): move the shared piece down to resources, providers or lib, or compose both in src/app.`,
      [`./${feature}`],
    ),
  ),
  layer(
    'src',
    ['server', 'scripts'],
    'The SPA must not import server/ or scripts/: shared pure code lives in common/ or src/generated.',
  ),
];

/**
 * The server's zones. A test beside a domain or a platform piece (`tests`) sits above the
 * composition: it builds the app (app.ts, seed/) and uses the shared test support
 * (server/test/support); it still reaches another domain only through that domain's index.ts, and
 * a platform test imports no domain. The server's code never imports the test support.
 */
const serverZones = (tests) => [
  layer(
    'server/src/platform',
    tests ? 'server/src/domains' : ['server/src/domains', ...serverComposition],
    'server/src/platform is below every domain: move the shared piece down into platform or inject it.',
  ),
  ...(tests
    ? []
    : [
        layer(
          'server/src/domains',
          serverComposition,
          'A domain is below the app composition (app.ts, server.ts, seed/): inject what it needs instead.',
        ),
        layer(
          'server/src',
          'server/test',
          'Only tests import the test support (server/test): the server must not depend on it.',
        ),
      ]),
  ...domains.map((domain) =>
    layer(
      `server/src/domains/${domain}`,
      'server/src/domains',
      `A domain reaches another domain only through its index.ts (server/src/domains/${domain}): import from server/src/domains/<other>/index.ts, exporting the piece there if needed.`,
      [
        `./${domain}`,
        ...domains.filter((other) => other !== domain).map((other) => `./${other}/index.ts`),
      ],
    ),
  ),
  layer(
    serverComposition,
    'server/src/domains',
    'The app composition (app.ts, server.ts, seed/) reaches a domain only through its index.ts.',
    domains.map((domain) => `./${domain}/index.ts`),
  ),
  layer('server', 'scripts', 'The server must not import scripts/ (tooling).'),
  layer(
    'server',
    'src',
    'The server may import only src/generated from the SPA: put shared pure code in common/.',
    ['./generated'],
  ),
];

/** common/'s zones. */
const commonZones = [
  layer(
    'common',
    'src',
    'common/ is pure code below both sides: it may import only src/generated from the SPA.',
    ['./generated'],
  ),
  layer(
    'common',
    ['server', 'scripts'],
    'common/ is pure code below both sides: it must not import server/ or scripts/.',
  ),
];

/**
 * The layers. SPA: src/app → src/features, src/resources → src/providers → src/lib, src/components,
 * src/hooks, src/i18n, src/generated. Server: server/src/app.ts, server.ts, seed/ (composition) →
 * server/src/domains/<domain> → server/src/platform; a domain reaches another domain only through
 * that domain's index.ts. common/ is pure code shared by both sides and sits below them. scripts/ is
 * tooling and may import anything.
 */
const layerZones = [...spaZones, ...serverZones(false), ...commonZones];
/** The same layers for the server's tests beside the code they test. */
const serverTestZones = [...spaZones, ...serverZones(true), ...commonZones];

/** Files checked for import cycles. */
const cycleFiles = ['src/**/*.{ts,tsx}', 'server/src/**/*.ts', 'common/**/*.ts'];

export default tseslint.config(
  {
    ignores: [
      'node_modules',
      'dist',
      'dist-server',
      'src/generated',
      'data',
      'test-results',
      'playwright-report',
      '.tmp',
      'coverage',
      // linted on purpose by tests/contract/lint-layers.test.ts (they contain a cycle)
      'tests/contract/fixtures',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strict,
  ...tseslint.configs.stylistic,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    plugins: { 'check-file': checkFile },
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/consistent-type-definitions': 'off',
      'check-file/filename-naming-convention': [
        'error',
        { '**/*.{ts,tsx,js,mjs}': 'KEBAB_CASE' },
        { ignoreMiddleExtensions: true },
      ],
      'check-file/folder-naming-convention': [
        'error',
        { 'src/**/': 'KEBAB_CASE', 'server/**/': 'KEBAB_CASE' },
      ],
    },
  },
  {
    files: ['src/**/*.tsx', 'src/**/*.ts'],
    plugins: { 'react-hooks': reactHooks, 'jsx-a11y': jsxA11y },
    rules: {
      ...reactHooks.configs.recommended.rules,
      ...jsxA11y.configs.recommended.rules,
    },
  },
  {
    plugins: { 'import-x': importX, imports: importCycles },
    settings: {
      // The TS resolver reads tsconfig.json for the `@/*` alias and the `.ts` suffixes of server
      // imports.
      'import-x/extensions': ['.ts', '.tsx', '.js', '.mjs', '.cjs'],
      'import-x/external-module-folders': ['node_modules', 'node_modules/@types'],
      'import-x/resolver-next': [
        createTypeScriptImportResolver({
          project: `${root}tsconfig.json`,
          alwaysTryTypes: true,
        }),
      ],
    },
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: layerZones }],
    },
  },
  {
    files: serverTestFiles,
    rules: {
      'import-x/no-restricted-paths': ['error', { basePath: root, zones: serverTestZones }],
    },
  },
  {
    files: cycleFiles,
    rules: {
      // Every cycle of runtime imports, at any depth; type-only imports are not followed (they
      // vanish at runtime). The aliases are tsconfig.json's paths.
      'imports/no-cycle': ['error', { aliases: { '@/': 'src/', '@common/': 'common/' } }],
    },
  },
);
