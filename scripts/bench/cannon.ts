/**
 * autocannon in a child node process, for the benchmarks: the server under test then has its own
 * process to itself (no shared event loop, heap or garbage collector with the load generator).
 * The options (the bearer token among the headers) travel in the child's environment, not argv.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface LoadResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}

export interface CannonOptions {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
}

export function cannonInChild(options: CannonOptions): Promise<LoadResult> {
  const script = `
    const autocannon = require('autocannon');
    autocannon(JSON.parse(process.env.BENCH_CANNON)).then(
      (r) => process.stdout.write(JSON.stringify(r)),
      (e) => { console.error(e); process.exit(1); },
    );`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, BENCH_CANNON: JSON.stringify(options) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => (out += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(out) as LoadResult);
      else reject(new Error(`autocannon exited with ${code}`));
    });
  });
}
