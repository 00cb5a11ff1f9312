/**
 * End-to-end tests against the real server (which serves the built SPA from dist/). Build first:
 * `npx vite build`. A fresh temporary DATA_DIR is used per run.
 */
import { defineConfig } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const E2E_PORT = Number(process.env.E2E_PORT ?? 8191);
export const DEMO_PASSWORD = 'e2e-demo-password';
/** The port of the tests' local media source (admitted by MEDIA_ALLOWED_HOSTS). */
export const E2E_MEDIA_PORT = E2E_PORT + 1;
/** The tests' mail server: its HTTP side (GET /messages) and the SMTP port the portal sends to. */
export const E2E_MAIL_HTTP_PORT = E2E_PORT + 2;
export const E2E_SMTP_PORT = E2E_PORT + 3;
const dataDir = process.env.E2E_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'vdi-e2e-'));
// Shared with the workers and the global teardown (which kills the detached QEMUs under it).
process.env.E2E_DATA_DIR = dataDir;

const chromium = {
  browserName: 'chromium' as const,
  launchOptions: {
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  },
};

export default defineConfig({
  testDir: 'tests/e2e',
  testMatch: '*.spec.ts',
  workers: 1,
  fullyParallel: false,
  // On CI a test that fails once runs once more; `npm test` names every such flaky test and its
  // first error at the end of the run, so a flake is seen and fixed, not hidden.
  retries: process.env.CI ? 1 : 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  globalTeardown: './tests/support/qemu-teardown.ts',
  use: { baseURL: `http://127.0.0.1:${E2E_PORT}`, trace: 'retain-on-failure', locale: 'en-GB' },
  projects: [{ name: 'chromium', use: chromium }],
  webServer: [
    {
      command: `npx tsx tests/support/mail-sink-server.ts ${E2E_SMTP_PORT} ${E2E_MAIL_HTTP_PORT}`,
      url: `http://127.0.0.1:${E2E_MAIL_HTTP_PORT}/`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'ignore',
      stderr: 'pipe',
    },
    {
      command: 'npx tsx server/src/server.ts',
      url: `http://127.0.0.1:${E2E_PORT}/api/v3/health`,
      reuseExistingServer: false,
      timeout: 120_000,
      env: {
        PORT: String(E2E_PORT),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        DEMO_PASSWORD,
        QEMU_ACCEL: 'tcg',
        MEDIA_ALLOWED_HOSTS: `127.0.0.1:${E2E_MEDIA_PORT}`,
        SMTP_URL: `smtp://127.0.0.1:${E2E_SMTP_PORT}`,
        PUBLIC_URL: `http://127.0.0.1:${E2E_PORT}`,
        // The role-visibility screen writes here, never into the checkout's config/.
        PORTAL_CONFIG: join(dataDir, 'portal.json'),
      },
      stdout: process.env.E2E_SERVER_LOG ? 'pipe' : 'ignore',
      stderr: 'pipe',
    },
  ],
});
