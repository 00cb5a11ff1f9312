// `npm test`: installs what is missing, then codegen (with the schema check), typecheck, lint,
// unit + server tests (vitest, real PostgreSQL) and the Playwright end-to-end suite (Debian
// Chromium, real server, real QEMU). Ends with one plain "N passed, N failed" line over all suites.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNodeModules, ensureSystemPackages, root } from './lib/bootstrap.mjs';

ensureNodeModules();
ensureSystemPackages({ forTests: true });

const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });
const countsFile = join(tmp, 'test-counts.jsonl');
rmSync(countsFile, { force: true });

let passed = 0;
let failed = 0;
let skipped = 0;
const results = [];

function run(name, cmd, args, env = {}) {
  const started = Date.now();
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  const ok = r.status === 0;
  results.push(`${ok ? 'ok  ' : 'FAIL'} ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return ok;
}

/** A gate (codegen, typecheck, lint) counts as one test. */
function gate(name, cmd, args) {
  if (run(name, cmd, args)) passed++;
  else failed++;
}

function readCounts() {
  if (!existsSync(countsFile)) return [];
  return readFileSync(countsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

gate('codegen + schema check', 'npx', ['tsx', 'scripts/codegen/index.ts']);
gate('typecheck', 'npx', ['tsc', '-p', 'tsconfig.json', '--noEmit']);
gate('lint', 'npx', ['eslint', '.', '--max-warnings', '0']);
gate('format', 'npx', ['prettier', '--check', '.']);

const before = readCounts().length;
const vitestOk = run('unit + server tests', 'npx', ['vitest', 'run'], {
  TEST_COUNTS_FILE: countsFile,
});
const vitest = readCounts().slice(before);
for (const c of vitest) {
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
}
if (!vitestOk && vitest.every((c) => c.failed === 0)) failed++; // crashed before reporting

if (existsSync(join(root, 'tests/e2e')) && existsSync(join(root, 'playwright.config.ts'))) {
  const jsonFile = join(tmp, 'playwright.json');
  rmSync(jsonFile, { force: true });
  const ok = run('build', 'npx', ['vite', 'build']);
  if (!ok) failed++;
  else {
    gate('login-route JS budget', 'npx', ['tsx', 'scripts/bench/bundle.ts', '--budget', '140']);
    const e2eOk = run('end-to-end tests', 'npx', ['playwright', 'test', '--reporter=list,json'], {
      PLAYWRIGHT_JSON_OUTPUT_NAME: jsonFile,
    });
    if (existsSync(jsonFile)) {
      const stats = JSON.parse(readFileSync(jsonFile, 'utf8')).stats ?? {};
      passed += (stats.expected ?? 0) + (stats.flaky ?? 0);
      failed += stats.unexpected ?? 0;
      skipped += stats.skipped ?? 0;
      if (!e2eOk && !stats.unexpected) failed++;
    } else if (!e2eOk) failed++;
  }
}

console.log('\n' + results.join('\n'));
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
