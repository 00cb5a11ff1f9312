// `npm start`: installs what is missing, runs codegen, builds the SPA when src/ changed since the
// last build and the server bundle when server/ changed, then runs the server (migrations + demo seed on first start). The server prints the
// URL and the demo logins. PORT and DATA_DIR select the port and the data directory, so several
// instances can run side by side.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureNodeModules, ensureSystemPackages, root } from './lib/bootstrap.mjs';
import {
  SERVER_BUNDLE,
  SERVER_MALLOC_ENV,
  buildServer,
  serverBundleStale,
} from './lib/build-server.mjs';

const log = (msg) => console.log(`[start] ${msg}`);

ensureNodeModules();
if (!ensureSystemPackages())
  log(
    'some system packages are missing (see above); desktops may not start until they are installed',
  );

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    log(`${cmd} ${args.join(' ')} failed`);
    process.exit(r.status ?? 1);
  }
}

/** Newest mtime under a path (files only), 0 when missing. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = 0;
  for (const entry of readdirSync(path)) {
    if (entry === 'node_modules' || entry === 'generated') continue;
    max = Math.max(max, newest(join(path, entry)));
  }
  return max;
}

run('npx', ['tsx', 'scripts/codegen/index.ts']);

const built = newest(join(root, 'dist', 'index.html'));
const sources = Math.max(
  newest(join(root, 'src')),
  newest(join(root, 'locales')),
  newest(join(root, 'schema')),
  newest(join(root, 'index.html')),
  newest(join(root, 'vite.config.ts')),
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

// Plain JavaScript at run time: no TypeScript compiler in the server's memory or boot.
const child = spawn(process.execPath, ['--enable-source-maps', join(root, SERVER_BUNDLE)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...SERVER_MALLOC_ENV, ...process.env },
});
// Forward signals so the server drains requests and closes the database cleanly.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
