// `npm test`: installs what is missing, then codegen (with the schema check); the builds alongside
// the unit + server tests (vitest, real PostgreSQL), and typecheck, lint and format alongside the
// tests at a lower priority; then, from vitest's last files on, the Playwright end-to-end suite
// (Debian Chromium, real server, real QEMU). Ends with one plain "N passed, N failed" line over
// all suites.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, mkdirSync, mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ensureNodeModules, root, startSystemPackages } from './lib/bootstrap.mjs';
import { useMemoryTmpdir } from './lib/memory-tmpdir.mjs';

// Everything the run starts writes its temporary files in memory when the machine allows it.
const removeTmpdir = useMemoryTmpdir();

// apt (QEMU, PostgreSQL, Chromium … on a fresh machine) downloads and unpacks while `npm ci`,
// the codegen and the static gates run; the tests wait for it.
const systemPackages = startSystemPackages({ forTests: true });
ensureNodeModules();
// After the install: it imports the build tools.
const { e2eWorkers, preparePortalData } = await import('./lib/e2e-portals.mjs');
const { startPostgres } = await import('./lib/postgres.mjs');

const tmp = join(root, '.tmp');
mkdirSync(tmp, { recursive: true });
const countsFile = join(tmp, 'test-counts.jsonl');
rmSync(countsFile, { force: true });
/** Created by the vitest reporter when the server files that run last start. */
const lastGroupFile = join(tmp, 'test-last-group');
rmSync(lastGroupFile, { force: true });

let passed = 0;
let failed = 0;
let skipped = 0;
const results = [];
/** Every test file's time in ms, from the vitest reporter and the Playwright JSON report. */
const fileTimes = [];
/** Every failed test's title and the first lines of its error, printed again at the very end. */
const failures = [];

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
  // Only whole lines: the reporter may be writing the last one while it is read.
  const lines = readFileSync(countsFile, 'utf8').split('\n').slice(0, -1);
  return lines.filter(Boolean).map((l) => JSON.parse(l));
}

/** A Playwright file's time: the sum of its tests' attempts (its share of the workers' time). */
function playwrightFileTimes(report) {
  const times = new Map();
  const walk = (suite, file) => {
    const here = suite.file ?? file;
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests ?? [])
        for (const r of test.results ?? [])
          times.set(here, (times.get(here) ?? 0) + (r.duration ?? 0));
    for (const child of suite.suites ?? []) walk(child, here);
  };
  for (const suite of report.suites ?? []) walk(suite, suite.file);
  const dir = report.config?.rootDir ? relative(root, report.config.rootDir) : 'tests/e2e';
  return [...times].map(([file, ms]) => ({ file: join(dir, file), ms }));
}

/** The failed tests of a Playwright JSON report, each with its first error. */
function playwrightFailures(report) {
  const found = [];
  const walk = (suite, file, titles) => {
    const here = suite.file ?? file;
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests ?? [])
        if (test.status === 'unexpected' || test.status === 'flaky') {
          const first = test.results?.find((r) => r.status !== 'passed');
          const error = first?.errors?.[0] ?? first?.error;
          const flaky = test.status === 'flaky' ? ' (flaky: failed, then passed on retry)' : '';
          found.push({
            title: `${here}:${spec.line} › ${[...titles, spec.title].join(' › ')}${flaky}`,
            error: String(error?.message ?? error?.value ?? ''),
          });
        }
    for (const child of suite.suites ?? []) walk(child, here, [...titles, child.title]);
  };
  for (const suite of report.suites ?? []) walk(suite, suite.file, []);
  return found;
}

/** An error's first lines, without terminal colours, indented under its test. */
function firstLines(text, count = 12) {
  return text
    .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
    .split('\n')
    .slice(0, count)
    .map((line) => `      ${line}`)
    .join('\n');
}

/**
 * A child process whose output is kept and printed later; resolves when it ends. `niceness` above
 * 0 runs it (and what it starts) at that lower priority.
 */
function quietly(name, cmd, args, { env = {}, niceness = 0 } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const [file, argv] =
      niceness > 0 ? ['nice', ['-n', String(niceness), cmd, ...args]] : [cmd, args];
    const child = spawn(file, argv, { cwd: root, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) =>
      resolve({ name, ok: code === 0, output, seconds: (Date.now() - started) / 1000 }),
    );
  });
}

/** The steps that build rather than check: a failure counts, a success is no test. */
const BUILDS = new Set(['build', 'server bundle', 'end-to-end portals prepared']);

/** Prints a quiet step's output; a gate counts as one test. */
function report({ name, ok, output, seconds }) {
  console.log(`\n--- ${name}: ${ok ? 'ok' : 'FAILED'}\n${output.trimEnd()}`);
  results.push(`${ok ? 'ok  ' : 'FAIL'} ${name} (${seconds.toFixed(1)} s)`);
  if (ok) {
    if (!BUILDS.has(name)) passed++;
  } else {
    failed++;
    failures.push({ title: name, error: output.trimEnd().split('\n').slice(-12).join('\n') });
  }
}

gate('codegen + schema check', 'npx', ['tsx', 'scripts/codegen/index.ts']);

const hasE2e =
  existsSync(join(root, 'tests/e2e')) && existsSync(join(root, 'playwright.config.ts'));

/**
 * The static gates read the sources and write nothing the tests read, so they run while the tests
 * do, at the lowest priority: the tests keep every core they ask for, and the gates take only what
 * the tests leave idle (the end-to-end tests wait on their guests and pages; at niceness 10 the
 * gates had taken a share of vitest's cores and ended before the end-to-end tests began, whose
 * idle time then went unused). Each gate is one process; its output is printed whole once it has
 * ended and the tests have.
 */
const GATE_NICENESS = 19;
const gateWork = Promise.all([
  // TypeScript 7, the compiler written in Go: the same checks in a third of the CPU time of
  // TypeScript 6, which stays for the tools that need its JavaScript API (typescript-eslint).
  quietly(
    'typecheck',
    process.execPath,
    ['node_modules/typescript-go/bin/tsc', '-p', 'tsconfig.json', '--noEmit'],
    { niceness: GATE_NICENESS },
  ),
  quietly('lint', 'npx', ['eslint', '.', '--max-warnings', '0'], { niceness: GATE_NICENESS }),
  quietly('format', 'npx', ['prettier', '--check', '.'], { niceness: GATE_NICENESS }),
]);

/**
 * The builds the end-to-end tests run, at the tests' priority (the end-to-end portals wait for
 * them), while vitest runs.
 */
const buildWork = (async () => {
  if (!hasE2e) return [];
  const build = await quietly('build', 'npx', ['vite', 'build']);
  if (!build.ok) return [build];
  const budget = await quietly('login-route JS budget', 'npx', [
    'tsx',
    'scripts/bench/bundle.ts',
    '--budget',
    '140',
  ]);
  // The server bundle the end-to-end portals run (their global set-up builds it when stale).
  const server = await quietly('server bundle', process.execPath, [
    '-e',
    "import('./scripts/lib/build-server.mjs').then((m) => m.buildServer(process.cwd()))",
  ]);
  return [build, budget, server];
})();

/** Whether the builds made what the end-to-end tests run. */
const builtAll = (steps) =>
  hasE2e &&
  ['build', 'server bundle'].every((name) => steps.some((step) => step.name === name && step.ok));

/**
 * The data of the end-to-end portals (their embedded database and demo), prepared once the builds
 * are done and vitest's last group has started: those files mostly wait on their guests, and the
 * portals then start as on a restart when the end-to-end tests begin.
 */
const e2eDataDir = process.env.E2E_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'vdi-e2e-'));
/**
 * Made here: removed after a run that passed (some 200 MB of portal data a run), kept after a
 * failure for its portals' logs (<dir>/worker-<n>/portal.log).
 */
const ownE2eDataDir = !process.env.E2E_DATA_DIR;
/** The PostgreSQL cluster of the end-to-end portals (all but the first worker's), when started here. */
let e2eCluster;
process.on('exit', () => {
  e2eCluster?.stop();
  // Last: the cluster's files are in it.
  removeTmpdir();
});
let preparing;
const preparePortals = () =>
  (preparing ??= buildWork.then(async (steps) => {
    if (!builtAll(steps)) return null;
    if (!process.env.E2E_DATABASE_URL) {
      e2eCluster = await startPostgres({ inMemory: true });
      process.env.E2E_DATABASE_URL = e2eCluster.url;
    }
    return preparePortalData(root, e2eDataDir, e2eWorkers(), process.env.E2E_DATABASE_URL);
  }));

// The unit + server tests need the system packages (PostgreSQL, QEMU, libvirt …).
await systemPackages;
const before = readCounts().length;
/** Created by the vitest reporter when at most one file of its last group is left to end. */
const tailFile = join(tmp, 'test-tail');
rmSync(tailFile, { force: true });
console.log(
  '\n=== unit + server tests: npx vitest run (typecheck, lint, format and the builds run alongside)',
);
const vitestStarted = Date.now();
/** When the hand-over from vitest to Playwright happened, printed with the summary. */
const timeline = [];
const mark = (what) => {
  if (!timeline.some((m) => m.what === what))
    timeline.push({ what, at: (Date.now() - vitestStarted) / 1000 });
};
/**
 * Vitest's counts line (tests/support/plain-reporter.ts) is written when its last test file has
 * ended; what follows is teardown (stopping its workers and the test PostgreSQL), which takes
 * several seconds and, when a worker does not answer, vitest's 60 s stop timeout. Its exit is
 * awaited before the summary.
 */
const vitestChild = spawn('npx', ['vitest', 'run'], {
  cwd: root,
  stdio: 'inherit',
  env: {
    ...process.env,
    TEST_COUNTS_FILE: countsFile,
    TEST_LAST_GROUP_FILE: lastGroupFile,
    TEST_TAIL_FILE: tailFile,
    // The last group's workers (vitest.config.ts: one more than there are cores).
    TEST_TAIL_WORKERS: String(availableParallelism() + 1),
  },
});
let vitestCode;
const vitestExit = new Promise((resolve) =>
  vitestChild.on('close', (code) => resolve((vitestCode = code))),
);
const vitestEnded = () => vitestCode !== undefined || readCounts().length > before;
const tick = () => new Promise((r) => setTimeout(r, 250));

/**
 * The end-to-end suite starts once one of vitest's last workers has no file left to run: those
 * files mostly wait on their guests, and the browsers fill the cores they leave idle. Its portals'
 * data is prepared from the start of vitest's last group.
 */
while (!vitestEnded() && !existsSync(tailFile)) {
  if (existsSync(lastGroupFile)) {
    mark("vitest's last group started");
    void preparePortals();
  }
  await tick();
}
mark(vitestEnded() ? 'vitest ended' : "a worker of vitest's last group idle");
console.log('\n=== builds (ran alongside vitest)');
const buildResults = await buildWork;
for (const step of buildResults) report(step);
const built = builtAll(buildResults);
const prepared = built ? await preparePortals() : null;
if (prepared) {
  mark('end-to-end portals prepared');
  report(prepared);
}

const jsonFile = join(tmp, 'playwright.json');
/** The end-to-end run, beside vitest's last file: its output is printed as it comes. */
const e2eRun = built
  ? (() => {
      rmSync(jsonFile, { force: true });
      const started = Date.now();
      mark('end-to-end started');
      console.log('\n=== end-to-end tests: npx playwright test --reporter=list,json');
      const child = spawn('npx', ['playwright', 'test', '--reporter=list,json'], {
        cwd: root,
        stdio: 'inherit',
        env: { ...process.env, PLAYWRIGHT_JSON_OUTPUT_NAME: jsonFile, E2E_DATA_DIR: e2eDataDir },
      });
      return new Promise((resolve) =>
        child.on('close', (code) => resolve({ ok: code === 0, started })),
      );
    })()
  : null;

while (!vitestEnded()) await tick();
mark('vitest ended');
/** Whether vitest reported its counts (it may still be tearing down). */
const vitestReported = readCounts().length > before;
const vitestOk = vitestReported
  ? readCounts()
      .slice(before)
      .every((c) => c.failed === 0)
  : (await vitestExit) === 0;
results.push(
  `${vitestOk ? 'ok  ' : 'FAIL'} unit + server tests (${((Date.now() - vitestStarted) / 1000).toFixed(1)} s)`,
);
const vitest = readCounts().slice(before);
for (const c of vitest) {
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
  for (const f of c.files ?? []) fileTimes.push({ file: relative(root, f.file), ms: f.ms });
  failures.push(...(c.failures ?? []));
}
if (!vitestOk && vitest.every((c) => c.failed === 0)) failed++; // crashed before reporting

if (e2eRun) {
  const { ok: e2eOk, started } = await e2eRun;
  results.push(
    `${e2eOk ? 'ok  ' : 'FAIL'} end-to-end tests (${((Date.now() - started) / 1000).toFixed(1)} s)`,
  );
  if (existsSync(jsonFile)) {
    const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
    const stats = report.stats ?? {};
    fileTimes.push(...playwrightFileTimes(report));
    failures.push(...playwrightFailures(report));
    passed += (stats.expected ?? 0) + (stats.flaky ?? 0);
    failed += stats.unexpected ?? 0;
    skipped += stats.skipped ?? 0;
    if (!e2eOk && !stats.unexpected) failed++;
  } else if (!e2eOk) failed++;
}

console.log('\n=== typecheck + lint + format (ran alongside the tests, at a lower priority)');
for (const step of await gateWork) report(step);

// Vitest tore down while the end-to-end tests ran: a failing exit after passing counts (a crash
// in teardown) still fails the run.
await vitestExit;
if (vitestReported && vitestOk && vitestCode !== 0) {
  failed++;
  failures.push({
    title: 'vitest',
    error: `vitest exited with ${vitestCode} after its tests passed`,
  });
}

console.log('\n' + results.join('\n'));
console.log(
  `\nfrom vitest's start: ${timeline.map(({ what, at }) => `${what} ${at.toFixed(0)} s`).join(', ')}`,
);
if (fileTimes.length > 0) {
  console.log('\nslowest test files:');
  for (const { file, ms } of fileTimes.sort((a, b) => b.ms - a.ms).slice(0, 10))
    console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${file}`);
}
if (failures.length > 0) {
  console.log('\nfailed and flaky tests:');
  for (const { title, error } of failures) console.log(`  ✘ ${title}\n${firstLines(error)}`);
}
if (ownE2eDataDir) {
  if (failed > 0) console.log(`\nthe end-to-end portals' data and logs: ${e2eDataDir}`);
  else rmSync(e2eDataDir, { recursive: true, force: true });
}
console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
