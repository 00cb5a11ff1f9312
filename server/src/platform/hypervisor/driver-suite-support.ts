/**
 * What the driver suite's files share (driver-suite.ts, driver-suite-consoles.ts): the harness a
 * driver's test file gives, a poll-until helper and an event recorder.
 */
import type {
  DomainRunState,
  DomainRuntime,
  ExitInfo,
  Hypervisor,
  StateChangeDetail,
} from './types.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Wait for `predicate` to hold, polling. */
export async function until<T>(
  fn: () => T | Promise<T>,
  timeoutMs: number,
  what: string,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export interface Recorder {
  exits: [string, ExitInfo][];
  states: [string, DomainRunState, StateChangeDetail][];
}
export function record(driver: Hypervisor): Recorder {
  const r: Recorder = { exits: [], states: [] };
  driver.on('exit', (id, info) => r.exits.push([id, info]));
  driver.on('state', (id, state, detail) => r.states.push([id, state, detail]));
  return r;
}

/** What the suite needs to know of one driver. */
export interface DriverHarness {
  /** The drivers' DATA_DIR (disks made by the tests go there too). */
  dataDir: string;
  /** A new driver instance on the same host and data dir (a second one plays a restarted portal). */
  make(): Hypervisor;
  /** The host pid of a running domain's QEMU process (the tests kill it and sample its CPU). */
  pidOf(runtime: DomainRuntime): number;
  /** Whether exit codes are known (0 after a stop), else null. */
  exitCodes: boolean;
  /** Whether the signal that ended a domain is known (`SIGKILL`), else null. */
  exitSignals: boolean;
  /** What the reason of a domain killed from outside says. */
  killedReason: RegExp;
  /** What the reason of a recorded domain found gone at adoption says (its run dir has a qemu.log line). */
  staleReason: RegExp;
  /** Whether SPICE listens with TLS only (the portal's certificates). */
  spiceTls: boolean;
  /** Files of the run directory while a domain runs; all but `keptFiles` are removed after it ended. */
  runFiles: string[];
  /** Run directory files that stay after the end. */
  keptFiles: string[];
  /** Run directory files gone once the start has answered (the passwords handed to QEMU). */
  goneFiles?: string[];
  /** Last clean-up (after the drivers were closed and tracked pids killed). */
  cleanup(): Promise<void>;
}
