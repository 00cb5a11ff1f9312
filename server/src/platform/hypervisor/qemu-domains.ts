/**
 * The QEMU domains a driver runs: one monitor each, its QMP connection (reconnected once when lost)
 * and the detection of its end (child `exit` event, QMP socket closing, pid polling).
 */
import path from 'node:path';
import { errorMessage, isPidAlive, logTail, sleep } from './host-process.ts';
import {
  applyQmpEvent,
  describeExit,
  newMonitor,
  type Monitor,
  type ProcessEnd,
} from './qemu-monitor.ts';
import { cleanRunDir, writeExit, type PersistedRuntime } from './qemu-run-dir.ts';
import { connectQmp, type QmpClient, type QmpEvent } from './qmp-client.ts';
import type { PortAllocator } from './port-allocator.ts';
import {
  HypervisorError,
  type DomainRunState,
  type ExitInfo,
  type HypervisorEvents,
} from './types.ts';

/** Emits a driver event. */
export type EmitEvent = <E extends keyof HypervisorEvents>(
  event: E,
  ...args: HypervisorEvents[E]
) => void;

export class QemuDomains {
  private readonly monitors = new Map<string, Monitor>();
  private readonly pollTimer: NodeJS.Timeout;
  /** Set by {@link close}: nothing is announced any more. */
  closed = false;

  /**
   * @param ports the driver's VNC and SPICE ports (a domain's are held while it runs)
   * @param emit announces state changes and exits
   * @param pollMs pid poll period
   */
  constructor(
    private readonly ports: { vnc: PortAllocator; spice: PortAllocator },
    private readonly emit: EmitEvent,
    pollMs: number,
  ) {
    this.pollTimer = setInterval(() => this.poll(), pollMs);
    this.pollTimer.unref();
  }

  has(id: string): boolean {
    return this.monitors.has(id);
  }

  get(id: string): Monitor | undefined {
    return this.monitors.get(id);
  }

  values(): IterableIterator<Monitor> {
    return this.monitors.values();
  }

  attach(runtime: PersistedRuntime, qmp: QmpClient, state: DomainRunState): Monitor {
    const monitor = newMonitor(runtime, qmp, state);
    this.monitors.set(runtime.id, monitor);
    this.ports.vnc.reserve(runtime.vncPort);
    this.ports.spice.reserve(runtime.spicePort);
    this.wireQmp(monitor, qmp);
    return monitor;
  }

  private wireQmp(monitor: Monitor, qmp: QmpClient) {
    qmp.on('event', (event) => this.onQmpEvent(monitor, event));
    qmp.on('close', () => {
      if (monitor.qmp === qmp) monitor.qmp = undefined;
      if (monitor.done || this.closed) return;
      // QEMU closes the socket as it exits: check quickly instead of waiting for the poll
      void (async () => {
        for (let i = 0; i < 20 && !monitor.done; i++) {
          await sleep(100);
          if (!monitor.child && !isPidAlive(monitor.runtime.pid)) {
            await this.finalize(monitor, undefined);
            return;
          }
        }
      })();
    });
  }

  private onQmpEvent(monitor: Monitor, event: QmpEvent) {
    const detail = applyQmpEvent(monitor, event);
    if (detail) this.emit('state', monitor.runtime.id, monitor.state, detail);
  }

  private poll() {
    if (this.closed) return;
    for (const monitor of this.monitors.values()) {
      if (monitor.done) continue;
      const childGone = monitor.child
        ? monitor.child.exitCode !== null || monitor.child.signalCode !== null
        : false;
      if (childGone || !isPidAlive(monitor.runtime.pid)) {
        // a spawned child normally reports through its 'exit' event first; give it a moment
        const child = monitor.child;
        if (child && !childGone) {
          setTimeout(() => void this.finalize(monitor, undefined), 200).unref();
        } else {
          void this.finalize(
            monitor,
            child ? { code: child.exitCode, signal: child.signalCode } : undefined,
          );
        }
      }
    }
  }

  async finalize(monitor: Monitor, how: ProcessEnd | undefined) {
    if (monitor.done) return;
    monitor.done = true;
    const { runtime } = monitor;
    if (this.monitors.get(runtime.id) === monitor) this.monitors.delete(runtime.id);
    monitor.qmp?.close();
    this.ports.vnc.release(runtime.vncPort);
    this.ports.spice.release(runtime.spicePort);
    const { code, signal, reason: why, expected } = describeExit(monitor, how);
    let reason = why;
    if (!expected || (code !== null && code !== 0)) {
      const tail = await logTail(path.join(runtime.runDir, 'qemu.log'), 5);
      if (tail) reason += `\n${tail}`;
    }
    const info: ExitInfo = { code, signal, reason, expected, at: new Date().toISOString() };
    await writeExit(runtime.runDir, info);
    await cleanRunDir(runtime.runDir, true);
    monitor.resolveExited(info);
    if (!this.closed) this.emit('exit', runtime.id, info);
  }

  monitorOf(id: string): Monitor {
    const monitor = this.monitors.get(id);
    if (!monitor || monitor.done)
      throw new HypervisorError('not_running', `domain ${id} is not running`);
    return monitor;
  }

  private async qmpOf(id: string): Promise<QmpClient> {
    const monitor = this.monitorOf(id);
    if (monitor.qmp && !monitor.qmp.closed) return monitor.qmp;
    // lost connection but the process lives: reconnect once
    try {
      const qmp = await connectQmp(monitor.runtime.qmpPath, { timeoutMs: 3000, retry: false });
      monitor.qmp = qmp;
      this.wireQmp(monitor, qmp);
      return qmp;
    } catch (error) {
      throw new HypervisorError(
        'not_running',
        `domain ${id}: QMP unreachable (${errorMessage(error)})`,
        { cause: error },
      );
    }
  }

  async command<T = unknown>(
    id: string,
    command: string,
    args?: Record<string, unknown>,
    timeoutMs?: number,
  ): Promise<T> {
    const qmp = await this.qmpOf(id);
    try {
      return await qmp.execute<T>(
        command,
        args,
        timeoutMs === undefined ? undefined : { timeoutMs },
      );
    } catch (error) {
      if (this.monitors.get(id)?.done ?? true)
        throw new HypervisorError('not_running', `domain ${id} ended`, { cause: error });
      throw new HypervisorError('qmp_error', errorMessage(error), { cause: error });
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pollTimer);
    for (const monitor of this.monitors.values()) {
      monitor.qmp?.close();
      monitor.child?.removeAllListeners('exit');
    }
    this.monitors.clear();
  }
}
