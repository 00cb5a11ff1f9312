/**
 * Playwright globalTeardown: QEMU processes are detached and outlive the server, so kill every
 * QEMU whose pidfile is under a worker portal's data directory
 * (`<E2E_DATA_DIR>/worker-<n>/run/<id>/qemu.pid`). Only pids whose command line is a qemu-system
 * process mentioning that directory are signalled. (Each worker stops its own when it ends; this
 * catches a worker that was killed.)
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return '';
  }
}

/** Pids of the QEMUs started under `dataDir` that are still alive. */
export function qemuPids(dataDir: string): number[] {
  const run = join(dataDir, 'run');
  if (!existsSync(run)) return [];
  const pids: number[] = [];
  for (const entry of readdirSync(run)) {
    const file = join(run, entry, 'qemu.pid');
    if (!existsSync(file)) continue;
    const pid = Number(readFileSync(file, 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 1) continue;
    const cmd = cmdline(pid);
    if (cmd.includes('qemu-system') && cmd.includes(dataDir)) pids.push(pid);
  }
  return pids;
}

/** SIGTERM, then SIGKILL what is left after `graceMs`. */
export async function killQemus(dataDir: string, graceMs = 2000): Promise<number> {
  const pids = qemuPids(dataDir);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && qemuPids(dataDir).length)
    await new Promise((r) => setTimeout(r, 100));
  for (const pid of qemuPids(dataDir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}

export default async function globalTeardown(): Promise<void> {
  const dataDir = process.env.E2E_DATA_DIR;
  if (!dataDir) return;
  const portals = readdirSync(dataDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && entry.name.startsWith('worker-'))
    .map((entry) => join(dataDir, entry.name));
  let killed = 0;
  for (const portal of portals) killed += await killQemus(portal);
  if (killed) console.log(`qemu-teardown: stopped ${killed} QEMU process(es) under ${dataDir}`);
}
