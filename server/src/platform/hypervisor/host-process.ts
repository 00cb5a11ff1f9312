/**
 * The host processes a driver watches: whether a pid still lives, its command line, and the tail of
 * its log. Nothing here is QEMU-specific.
 */
import { promises as fsp, readFileSync } from 'node:fs';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** true when a process with this pid exists and is not a zombie. */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (isRecord(error) && error.code === 'EPERM') return true;
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Read `/proc/<pid>/cmdline` as an argument vector ([] when unavailable). */
export function readCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** Last `lines` non-empty lines of a log file (reads at most the last 8 KiB). */
export async function logTail(file: string, lines = 8): Promise<string> {
  try {
    const handle = await fsp.open(file, 'r');
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, 8192);
      const buffer = Buffer.alloc(length);
      await handle.read(buffer, 0, length, size - length);
      return buffer
        .toString('utf8')
        .split('\n')
        .map((l) => l.trimEnd())
        .filter(Boolean)
        .slice(-lines)
        .join('\n');
    } finally {
      await handle.close();
    }
  } catch {
    return '';
  }
}
