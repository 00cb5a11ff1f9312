/**
 * Adoption: after a server restart, the QEMUs that outlived it are re-attached from their run
 * directories. A live QEMU that answers on QMP is watched again; one that does not is killed (never
 * an orphan); one whose start never completed is killed; a gone one gets its `exit.json`.
 */
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { errorMessage, isPidAlive, isRecord, logTail } from './host-process.ts';
import { mapQmpStatus, type Monitor } from './qemu-monitor.ts';
import {
  cleanRunDir,
  pidServes,
  publicRuntime,
  readRuntime,
  writeExit,
  type PersistedRuntime,
} from './qemu-run-dir.ts';
import { connectQmp, type QmpClient } from './qmp-client.ts';
import {
  DOMAIN_ID_PATTERN,
  type AdoptResult,
  type DomainRunState,
  type ExitInfo,
} from './types.ts';

/** What adoption needs of the driver. */
export interface AdoptContext {
  /** `<dataDir>/run`: one directory per domain. */
  runRoot: string;
  /** Whether a start of the domain is under way (its run directory is not to be touched). */
  isStarting: (id: string) => boolean;
  /** The driver's monitor of the domain, if it has one. */
  monitorOf: (id: string) => Monitor | undefined;
  /** Watches the QEMU from now on. */
  attach: (runtime: PersistedRuntime, qmp: QmpClient, state: DomainRunState) => Monitor;
}

/** Re-attaches every QEMU found in the run directories; see the module comment. */
export async function adoptRunDirs(deps: AdoptContext): Promise<AdoptResult> {
  const result: AdoptResult = { adopted: [], dead: [] };
  let entries: string[];
  try {
    entries = await fsp.readdir(deps.runRoot);
  } catch {
    return result;
  }
  for (const id of entries) {
    if (!DOMAIN_ID_PATTERN.test(id) || deps.isStarting(id)) continue;
    const existing = deps.monitorOf(id);
    if (existing && !existing.done) {
      result.adopted.push(publicRuntime(existing.runtime));
      continue;
    }
    const runDir = path.join(deps.runRoot, id);
    const runtime = await readRuntime(runDir);
    const dead = async (reason: string) => {
      const tail = await logTail(path.join(runDir, 'qemu.log'), 5);
      const info: ExitInfo = {
        code: null,
        signal: null,
        reason: tail ? `${reason}\n${tail}` : reason,
        expected: false,
        at: new Date().toISOString(),
      };
      await writeExit(runDir, info);
      await cleanRunDir(runDir, true);
      result.dead.push({ id, info });
    };
    if (!runtime) {
      // start interrupted before runtime.json: kill a half-started QEMU, if any
      const pidText = await fsp.readFile(path.join(runDir, 'qemu.pid'), 'utf8').catch(() => '');
      const pid = Number.parseInt(pidText.trim(), 10);
      const qmpPath = path.join(runDir, 'qmp.sock');
      if (pid > 0 && isPidAlive(pid) && pidServes(pid, qmpPath)) {
        process.kill(pid, 'SIGKILL');
        await dead(
          'QEMU was killed at adopt: its start never completed (server restarted during start)',
        );
      }
      continue;
    }
    if (!isPidAlive(runtime.pid) || !pidServes(runtime.pid, runtime.qmpPath)) {
      await dead('QEMU ended while the server was not watching it');
      continue;
    }
    let qmp: QmpClient;
    try {
      qmp = await connectQmp(runtime.qmpPath, { timeoutMs: 3000, retry: false });
    } catch (error) {
      // alive but uncontrollable (QMP held by another client or wedged): kill it, never leave an orphan
      try {
        process.kill(runtime.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
      await dead(`QEMU was killed at adopt: QMP unreachable (${errorMessage(error)})`);
      continue;
    }
    let state: DomainRunState = 'running';
    try {
      const st = await qmp.execute('query-status', undefined, { timeoutMs: 3000 });
      if (isRecord(st) && typeof st.status === 'string') state = mapQmpStatus(st.status);
    } catch {
      /* keep running */
    }
    deps.attach(runtime, qmp, state);
    result.adopted.push(publicRuntime(runtime));
  }
  return result;
}
