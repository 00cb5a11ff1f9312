/**
 * Playwright globalSetup: the portals of the end-to-end tests run the server bundle `npm start`
 * runs (dist-server/server.mjs), built here when the server's sources are newer than it. Without
 * E2E_DATABASE_URL (`npm test` starts the run's cluster itself), a private PostgreSQL cluster is
 * started for the workers' portals beyond the first (scripts/lib/e2e-portals.mjs) and stopped
 * when the run ends.
 */
import { buildServer, serverBundleStale } from '../../scripts/lib/build-server.mjs';
import { releasePortalSlots } from '../../scripts/lib/e2e-portals.mjs';
import { startPostgres } from './postgres';

export default async function globalSetup(): Promise<(() => void) | undefined> {
  const root = process.cwd();
  if (serverBundleStale(root)) await buildServer(root);
  // The workers claim their portal's slot as they start (tests/e2e/fixtures.ts).
  if (process.env.E2E_DATA_DIR) releasePortalSlots(process.env.E2E_DATA_DIR);
  if (process.env.E2E_DATABASE_URL) return undefined;
  const cluster = await startPostgres({ inMemory: true });
  // The workers start after the global set-up and inherit the runner's environment.
  process.env.E2E_DATABASE_URL = cluster.url;
  return () => cluster.stop();
}
