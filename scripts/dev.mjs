// `npm run dev`: the API server (restarted on change by tsx watch) on PORT (default 8080) and the
// Vite dev server with hot reload, whose proxy forwards /api/v3, the socket and /authentication.
import { spawn } from 'node:child_process';
import { root } from './lib/bootstrap.mjs';

const children = [
  spawn('npx', ['tsx', 'watch', 'server/src/server.ts'], {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, HOST: process.env.HOST ?? '127.0.0.1' },
  }),
  spawn('npx', ['vite'], { cwd: root, stdio: 'inherit' }),
];
const stop = (signal) => {
  for (const c of children) c.kill(signal);
  process.exit(0);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
for (const c of children) c.on('exit', (code) => code && stop('SIGTERM'));
