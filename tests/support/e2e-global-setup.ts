/**
 * Playwright globalSetup: the portals of the end-to-end tests run the server bundle `npm start`
 * runs (dist-server/server.mjs), built here when the server's sources are newer than it.
 */
import { buildServer, serverBundleStale } from '../../scripts/lib/build-server.mjs';

export default async function globalSetup(): Promise<void> {
  const root = process.cwd();
  if (serverBundleStale(root)) await buildServer(root);
}
