// What `npm start` and `npm run cluster` do before a server runs: install what is missing, run
// codegen, build the SPA when src/ changed since the last build and the server bundle when server/
// changed.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNodeModules, ensureSystemPackages, root } from './bootstrap.mjs';
import { buildServer, newest, serverBundleStale } from './build-server.mjs';

/** Newest mtime under a source folder (generated code aside). */
const newestSource = (path) => newest(path, ['node_modules', 'generated']);

/**
 * Installs, generates and builds what the server needs; exits the process when a step that
 * cannot be skipped fails. `system` names extra system packages (see ensureSystemPackages).
 */
export async function prepare({ log, system = {} }) {
  ensureNodeModules();
  if (!ensureSystemPackages(system))
    log(
      'some system packages are missing (see above); desktops may not start until they are installed',
    );

  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) {
      log(`${cmd} ${args.join(' ')} failed`);
      process.exit(r.status ?? 1);
    }
  };
  run('npx', ['tsx', 'scripts/codegen/index.ts']);

  const built = newestSource(join(root, 'dist', 'index.html'));
  const sources = Math.max(
    newestSource(join(root, 'src')),
    newestSource(join(root, 'common')),
    newestSource(join(root, 'locales')),
    newestSource(join(root, 'schema')),
    newestSource(join(root, 'index.html')),
    newestSource(join(root, 'vite.config.ts')),
    // the build step that draws the login page
    newestSource(join(root, 'scripts', 'lib', 'prerender-login.ts')),
  );
  if (!existsSync(join(root, 'index.html'))) log('no index.html yet: serving the API only');
  else if (built > sources) log('dist/ is up to date; skipping vite build');
  else {
    log('building the SPA (vite build)');
    const r = spawnSync('npx', ['vite', 'build'], { cwd: root, stdio: 'inherit' });
    if (r.status !== 0)
      log(
        existsSync(join(root, 'dist', 'index.html'))
          ? 'vite build failed; serving the previous build'
          : 'vite build failed; serving the API only',
      );
  }

  if (serverBundleStale(root)) {
    log('building the server (esbuild)');
    await buildServer(root);
  }
}
