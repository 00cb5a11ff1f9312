// `npm start`: installs what is missing, runs codegen, builds the SPA when src/ changed since the
// last build and the server bundle when server/ changed, then runs the server (migrations + demo
// seed on first start). The server prints the URL and the demo logins. PORT and DATA_DIR select
// the port and the data directory, so several instances can run side by side.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { root } from './lib/bootstrap.mjs';
import { SERVER_BUNDLE, SERVER_MALLOC_ENV } from './lib/build-server.mjs';
import { prepare } from './lib/prepare.mjs';

const log = (msg) => console.log(`[start] ${msg}`);

await prepare({ log });

// Plain JavaScript at run time: no TypeScript compiler in the server's memory or boot. Without
// `--enable-source-maps` (its parsed map stays in memory for good): the logger maps the stacks of
// the errors it writes, when it writes them.
const child = spawn(process.execPath, [join(root, SERVER_BUNDLE)], {
  cwd: root,
  stdio: 'inherit',
  env: { ...SERVER_MALLOC_ENV, ...process.env },
});
// Forward signals so the server drains requests and closes the database cleanly.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
