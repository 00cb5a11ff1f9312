/**
 * The portal the end-to-end tests run against: one per Playwright worker, each with its own port,
 * data directory (embedded database, disks, QEMU run files), mail sink and media port, so the
 * workers' tests never see each other's changes and run side by side. A worker that restarts
 * after a failure starts a fresh portal. Specs import `test` and `expect` from here; `baseURL`
 * points at the worker's portal.
 */
import { test as base, expect } from '@playwright/test';
import { spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { start as startMailSink, type SinkMessage } from '../../server/test/support/mail-sink';
import { E2E_PORT } from '../../playwright.config';
import { killQemus } from '../support/qemu-teardown';
import { SERVER_BUNDLE } from '../../scripts/lib/build-server.mjs';
import {
  claimPortalSlot,
  portalBaseEnv,
  workerDatabaseUrl,
  workerDataDir,
} from '../../scripts/lib/e2e-portals.mjs';

export interface Portal {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** the portal's DATA_DIR */
  dataDir: string;
  /** a port for the test's own media source, admitted by the portal's MEDIA_ALLOWED_HOSTS */
  mediaPort: number;
  /** every mail the portal has sent so far */
  mail(): SinkMessage[];
}

/** Ports of a worker: the portal's, then its media source's. */
const PORTS_PER_WORKER = 10;
const STARTUP_MS = 150_000;
const STOP_GRACE_MS = 10_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const test = base.extend<object, { portal: Portal; portalEnv: Record<string, string> }>({
  /**
   * Environment added to the worker's portal (a spec overrides it with worker fixtures of its own:
   * a database it writes to, a guacd double).
   */
  portalEnv: [{}, { scope: 'worker', option: true }],
  portal: [
    async ({ portalEnv }, use, workerInfo) => {
      const port = E2E_PORT + PORTS_PER_WORKER * workerInfo.parallelIndex;
      const url = `http://127.0.0.1:${port}`;
      const e2eDataDir = process.env.E2E_DATA_DIR ?? '';
      // A spec that brings its own database runs its portal on data of its own; the usual
      // portals take the next slot (scripts/lib/e2e-portals.mjs): the first ones' data prepared
      // ahead by `npm test`, the first on the embedded database and the others on the run's
      // cluster, else made by the portal's first start.
      const slot = portalEnv.DATABASE_URL ? undefined : claimPortalSlot(e2eDataDir);
      const dataDir =
        slot === undefined
          ? join(e2eDataDir, `worker-own-${workerInfo.workerIndex}`)
          : workerDataDir(e2eDataDir, slot);
      mkdirSync(dataDir, { recursive: true });
      const databaseUrl =
        slot === undefined
          ? undefined
          : await workerDatabaseUrl(process.env.E2E_DATABASE_URL, slot);
      const sink = await startMailSink();
      const mediaPort = port + 1;
      // The bundle `npm start` runs (built by the global setup).
      const server = spawn(process.execPath, [SERVER_BUNDLE], {
        env: {
          ...process.env,
          ...portalBaseEnv(dataDir, databaseUrl),
          PORT: String(port),
          HOST: '127.0.0.1',
          MEDIA_ALLOWED_HOSTS: `127.0.0.1:${mediaPort}`,
          SMTP_URL: sink.url,
          PUBLIC_URL: url,
          // The loopback name as well: WebAuthn refuses an IP address as its relying party, so
          // the passkey test browses the portal as localhost.
          ALLOWED_ORIGINS: `http://localhost:${port}`,
          ...portalEnv,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // The portal's log stays beside its data (<E2E_DATA_DIR>/worker-<n>/portal.log) for a failure
      // to be read afterwards; E2E_SERVER_LOG also prints it.
      const log = createWriteStream(join(dataDir, 'portal.log'));
      let errors = '';
      server.stdout?.on('data', (chunk: Buffer) => {
        log.write(chunk);
        if (process.env.E2E_SERVER_LOG) process.stdout.write(chunk);
      });
      server.stderr?.on('data', (chunk: Buffer) => {
        log.write(chunk);
        errors = (errors + chunk.toString()).slice(-4000);
        if (process.env.E2E_SERVER_LOG) process.stderr.write(chunk);
      });
      const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
      let running = true;
      void exited.then(() => (running = false));

      const deadline = Date.now() + STARTUP_MS;
      for (;;) {
        if (!running) throw new Error(`the e2e portal on ${url} exited:\n${errors}`);
        const healthy = await fetch(`${url}/api/v3/health`)
          .then((response) => response.ok)
          .catch(() => false);
        if (healthy) break;
        if (Date.now() > deadline) throw new Error(`the e2e portal on ${url} did not start`);
        await sleep(250);
      }

      await use({ url, dataDir, mediaPort, mail: () => sink.messages });

      server.kill('SIGTERM');
      await Promise.race([exited, sleep(STOP_GRACE_MS)]);
      if (running) server.kill('SIGKILL');
      await killQemus(dataDir);
      await sink.stop();
      log.end();
    },
    { scope: 'worker', timeout: STARTUP_MS + 30_000 },
  ],
  baseURL: async ({ portal }, use) => use(portal.url),
});

export { expect };
