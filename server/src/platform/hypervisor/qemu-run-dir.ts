/**
 * The files of a QEMU domain's run directory, `<dataDir>/run/<id>/` (mode 0700): `qmp.sock`,
 * `qemu.pid`, `runtime.json` (written once a start succeeded), `qemu.log` (QEMU's output, truncated
 * at each start) and `exit.json` (how the last run ended).
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { isRecord, readCmdline } from './host-process.ts';
import { SCREENDUMP_PREFIX } from './qemu-screenshots.ts';
import type { DomainRuntime, ExitInfo } from './types.ts';

/** runtime.json content. */
export interface PersistedRuntime extends DomainRuntime {
  diskPath: string;
  args: string[];
}

/** true when `pid` is the QEMU that serves `qmpPath` (guards against pid reuse). */
export function pidServes(pid: number, qmpPath: string): boolean {
  return readCmdline(pid).some((arg) => arg.includes(qmpPath.replaceAll(',', ',,')));
}

export function parseRuntime(text: string): PersistedRuntime | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (!isRecord(v)) return undefined;
    const { id, name, pid, vncPort, spicePort, spiceTls, qmpPath, runDir, startedAt, accel } = v;
    const { diskPath, args } = v;
    if (
      typeof id !== 'string' ||
      typeof name !== 'string' ||
      typeof pid !== 'number' ||
      typeof vncPort !== 'number' ||
      typeof spicePort !== 'number' ||
      typeof qmpPath !== 'string' ||
      typeof runDir !== 'string' ||
      typeof startedAt !== 'string' ||
      (accel !== 'tcg' && accel !== 'kvm')
    ) {
      return undefined;
    }
    return {
      id,
      name,
      pid,
      vncPort,
      spicePort,
      // Written before SPICE had TLS: a plain listener.
      spiceTls: spiceTls === true,
      qmpPath,
      runDir,
      startedAt,
      accel,
      diskPath: typeof diskPath === 'string' ? diskPath : '',
      args: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [],
    };
  } catch {
    return undefined;
  }
}

export function publicRuntime(r: PersistedRuntime): DomainRuntime {
  return {
    id: r.id,
    name: r.name,
    pid: r.pid,
    vncPort: r.vncPort,
    spicePort: r.spicePort,
    spiceTls: r.spiceTls,
    qmpPath: r.qmpPath,
    runDir: r.runDir,
    startedAt: r.startedAt,
    accel: r.accel,
    ...(r.consoleHost ? { consoleHost: r.consoleHost } : {}),
  };
}

export async function readRuntime(runDir: string): Promise<PersistedRuntime | undefined> {
  try {
    return parseRuntime(await fsp.readFile(path.join(runDir, 'runtime.json'), 'utf8'));
  } catch {
    return undefined;
  }
}

export async function writeExit(runDir: string, info: ExitInfo) {
  try {
    await fsp.writeFile(path.join(runDir, 'exit.json'), `${JSON.stringify(info, null, 2)}\n`, {
      mode: 0o600,
    });
  } catch {
    /* run dir removed */
  }
}

/** The {@link ExitInfo} in `exit.json`, if any. */
export async function readExit(runDir: string): Promise<ExitInfo | undefined> {
  try {
    const v: unknown = JSON.parse(await fsp.readFile(path.join(runDir, 'exit.json'), 'utf8'));
    if (!isRecord(v) || typeof v.reason !== 'string') return undefined;
    return {
      code: typeof v.code === 'number' ? v.code : null,
      signal: typeof v.signal === 'string' ? v.signal : null,
      reason: v.reason,
      expected: v.expected === true,
      at: typeof v.at === 'string' ? v.at : '',
    };
  } catch {
    return undefined;
  }
}

/** The files a start hands its passwords to QEMU in (removed once QEMU has read them). */
export const PASSWORD_FILES = ['vnc.secret', 'spice.secret'] as const;

/** Remove the live-process files (keeps qemu.log; keeps exit.json when `keepExit`). */
export async function cleanRunDir(runDir: string, keepExit: boolean) {
  const names = ['qmp.sock', 'qemu.pid', 'runtime.json', ...PASSWORD_FILES];
  if (!keepExit) names.push('exit.json');
  try {
    for (const entry of await fsp.readdir(runDir))
      if (entry.startsWith(SCREENDUMP_PREFIX)) names.push(entry);
  } catch {
    return;
  }
  await Promise.all(names.map((n) => fsp.rm(path.join(runDir, n), { force: true })));
}
