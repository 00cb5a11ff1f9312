/**
 * End-to-end tests against the real server (which serves the built SPA from dist/). Build first:
 * `npx vite build` (the server bundle is built by the global setup). Each worker starts its own
 * portal (tests/e2e/fixtures.ts) with its own data directory under a temporary E2E_DATA_DIR (made
 * on its first start, or prepared ahead by `npm test`), on E2E_PORT + 10 × its index.
 */
import { defineConfig } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { e2eWorkers, ownPortalSpecs } from './scripts/lib/e2e-portals.mjs';

export const E2E_PORT = Number(process.env.E2E_PORT ?? 8191);
export { E2E_DEMO_PASSWORD as DEMO_PASSWORD } from './scripts/lib/e2e-portals.mjs';
const dataDir = process.env.E2E_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'vdi-e2e-'));
// Shared with the workers and the global teardown (which kills the detached QEMUs under it).
process.env.E2E_DATA_DIR = dataDir;

const chromium = {
  browserName: 'chromium' as const,
  launchOptions: {
    // Debian's headless shell (the classic headless Chromium: the browser's Blink and V8 without
    // its UI layers): the route sweeps cost 166 CPU-s in it against 318 in the full browser's
    // headless mode, and the whole suite ends a minute sooner on two cores. The benchmarks drive
    // the full browser, as users do.
    executablePath: '/usr/bin/chromium-headless-shell',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      // V8 without its top tier (TurboFan), keeping Maglev: a test's page lives seconds, too short
      // for TurboFan's compiles to pay back. Chromium's CPU in the route sweeps fell from 83–87
      // to 76–79 CPU-s and in the navigation spec from 16.3–16.8 to 14.5–15.1 (CPU of the
      // browser's threads, A/B interleaved); without Maglev too it rose in the sweeps (axe).
      '--js-flags=--max-opt=2',
    ],
  },
};

const testDir = 'tests/e2e';
/** Their workers start first (Playwright queues the projects' tests in this order). */
const ownPortal = ownPortalSpecs(testDir);

export default defineConfig({
  testDir,
  testMatch: '*.spec.ts',
  workers: e2eWorkers(),
  fullyParallel: false,
  // On CI a test that fails once runs once more (in a new worker, on a fresh portal); `npm test`
  // names every such flaky test and its first error at the end of the run, so a flake is seen and
  // fixed, not hidden.
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  globalSetup: './tests/support/e2e-global-setup.ts',
  globalTeardown: './tests/support/qemu-teardown.ts',
  // Recording a trace costs a third of the browser's CPU: only a retry records one (on CI). Run
  // with `--trace retain-on-failure` to keep the trace of a failing test.
  // A click or fill that cannot happen fails after 45 s instead of holding its test to the end of
  // the test's own time limit (several minutes for the deployment tests).
  //
  // The browser asks for reduced motion, which the app honours (no transitions, no endless
  // animations): one spinning loader or striped progress bar kept Chromium's software compositor
  // drawing 60 frames a second, 0.14 CPU-s a second per page, while the tests wait on desktops
  // starting. The login and the desktop lifecycle specs run with motion, as most users see it.
  use: {
    trace: process.env.CI ? 'on-first-retry' : 'off',
    locale: 'en-GB',
    actionTimeout: 45_000,
    reducedMotion: 'reduce',
  },
  projects: [
    { name: 'own-portal', testMatch: ownPortal, use: chromium },
    { name: 'chromium', testIgnore: ownPortal, use: chromium },
  ],
});
