/**
 * What the QEMU driver knows of a running domain (its monitor), and what QEMU's events and exit
 * mean for it: QMP run states and events become the driver's run state, an exit gets its reason.
 */
import type { ChildProcess } from 'node:child_process';
import type { QmpClient, QmpEvent } from './qmp-client.ts';
import type { PersistedRuntime } from './qemu-run-dir.ts';
import type { DomainRunState, ExitInfo, StateChangeDetail } from './types.ts';

/** How a QEMU process ended, as its parent sees it (both null when it was not our child). */
export type ProcessEnd = { code: number | null; signal: NodeJS.Signals | null };

export interface Monitor {
  runtime: PersistedRuntime;
  qmp: QmpClient | undefined;
  child: ChildProcess | undefined;
  state: DomainRunState;
  stopRequested: boolean;
  killed: boolean;
  lastShutdown: { guest: boolean; reason: string } | undefined;
  done: boolean;
  exited: Promise<ExitInfo>;
  resolveExited: (info: ExitInfo) => void;
  screenshotSeq: number;
}

/** A new monitor of a domain that runs (its exit not known yet). */
export function newMonitor(
  runtime: PersistedRuntime,
  qmp: QmpClient,
  state: DomainRunState,
): Monitor {
  let resolveExited: (info: ExitInfo) => void = () => undefined;
  const exited = new Promise<ExitInfo>((resolve) => {
    resolveExited = resolve;
  });
  const monitor: Monitor = {
    runtime,
    qmp,
    child: undefined,
    state,
    stopRequested: false,
    killed: false,
    lastShutdown: undefined,
    done: false,
    exited,
    resolveExited,
    screenshotSeq: 0,
  };
  return monitor;
}

export function mapQmpStatus(status: string): DomainRunState {
  if (status === 'running') return 'running';
  if (status === 'shutdown') return 'shutdown';
  return 'paused'; // paused, prelaunch, suspended, io-error, guest-panicked, internal-error, *migrate, ...
}

/** Applies a QMP event to the monitor's state; the change to announce, if the event is one. */
export function applyQmpEvent(monitor: Monitor, event: QmpEvent): StateChangeDetail | undefined {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined);
  let detail: StateChangeDetail | undefined;
  switch (event.event) {
    case 'STOP':
      monitor.state = 'paused';
      detail = { event: 'STOP' };
      break;
    case 'RESUME':
      monitor.state = 'running';
      detail = { event: 'RESUME' };
      break;
    case 'RESET':
      detail = { event: 'RESET', guest: bool(event.data.guest), reason: str(event.data.reason) };
      break;
    case 'POWERDOWN':
      detail = { event: 'POWERDOWN' };
      break;
    case 'SHUTDOWN':
      monitor.state = 'shutdown';
      monitor.lastShutdown = {
        guest: bool(event.data.guest) ?? false,
        reason: str(event.data.reason) ?? 'unknown',
      };
      detail = {
        event: 'SHUTDOWN',
        guest: bool(event.data.guest),
        reason: str(event.data.reason),
      };
      break;
    default:
      return undefined;
  }
  return detail;
}

/** Why the domain ended, and whether the portal or the guest meant it to. */
export function describeExit(
  monitor: Monitor,
  how: ProcessEnd | undefined,
): { code: number | null; signal: NodeJS.Signals | null; reason: string; expected: boolean } {
  const code = how?.code ?? null;
  const signal = how?.signal ?? null;
  const shutdown = monitor.lastShutdown;
  let reason: string;
  let expected = false;
  if (monitor.stopRequested && monitor.killed) {
    reason = 'stopped by the portal (killed after the QMP quit timeout)';
    expected = true;
  } else if (monitor.stopRequested) {
    reason = 'stopped by the portal';
    expected = true;
  } else if (shutdown?.guest) {
    reason = 'the guest powered off';
    expected = true;
  } else if (shutdown?.reason === 'host-qmp-quit') {
    reason = 'QEMU was told to quit over QMP';
    expected = true;
  } else if (shutdown) {
    reason = `QEMU shut down (${shutdown.reason})`;
  } else if (signal) {
    reason = `QEMU was killed by ${signal}`;
  } else if (code !== null) {
    reason = `QEMU exited with code ${code}`;
  } else {
    reason = 'the QEMU process disappeared (killed from outside or crashed)';
  }
  return { code, signal, reason, expected };
}
