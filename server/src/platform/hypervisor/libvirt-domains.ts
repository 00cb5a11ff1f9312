/**
 * The domains a libvirt driver runs on its host: one monitor each, what libvirt's events mean for
 * it, and the detection of its end (a `Stopped` event checked against `domstate`, and the list of
 * running domains polled as a safety net). Ends are written to the run directory's `exit.json`.
 */
import { cleanRunDir, writeExit, type PersistedRuntime } from './qemu-run-dir.ts';
import type { LibvirtEvent } from './libvirt-events.ts';
import { VirshError, type VirshSession } from './virsh-session.ts';
import {
  HypervisorError,
  type DomainRunState,
  type DomainStatus,
  type ExitInfo,
  type HypervisorEvents,
  type StateChangeDetail,
} from './types.ts';

/** Emits a driver event. */
export type EmitEvent = <E extends keyof HypervisorEvents>(
  event: E,
  ...args: HypervisorEvents[E]
) => void;

/** The URI without its query (which may name a key file): how a host is named in messages. */
export function hostLabel(uri: string): string {
  return uri.replace(/\?.*$/, '');
}

export interface LibvirtMonitor {
  runtime: PersistedRuntime;
  domainName: string;
  state: DomainRunState;
  stopRequested: boolean;
  forced: boolean;
  sawShutdown: boolean;
  done: boolean;
  exited: Promise<ExitInfo>;
  resolveExited: (info: ExitInfo) => void;
  screenshotSeq: number;
}

/** How a domain ended, as far as the driver saw it. */
export interface DomainEnd {
  /** The detail of libvirt's `Stopped` event (`Destroyed`, `Shutdown`, `Failed`, `Crashed`). */
  stopped?: string;
}

/** What virsh says of a domain that does not run ("failed to get domain": a missing one). */
const NOT_FOUND =
  /domain not found|failed to get domain|no domain with matching|domain is not running|not running/i;
/**
 * What virsh adds when the lookup failed because the connection to the host broke: the domain may
 * well run on, and a host that stops answering must not end its domains.
 */
const CONNECTION_LOST =
  /cannot (?:recv|write) data|end of file while reading data|client socket is closed|failed to (?:re)?connect to the hypervisor|disconnected from|unable to connect|connection (?:reset|refused|closed|timed out)|broken pipe|not connected/i;

/** `virsh domstate` as a run state; undefined when the domain does not run. */
export function mapDomstate(text: string): DomainRunState | undefined {
  const state = text.trim().split('\n')[0]?.trim() ?? '';
  if (state === 'paused' || state === 'pmsuspended') return 'paused';
  if (state === 'running' || state === 'idle' || state === 'in shutdown' || state === 'blocked')
    return 'running';
  return undefined;
}

/** Whether virsh failed because the domain does not run (any more). */
export function isDomainGone(error: unknown): boolean {
  return (
    error instanceof VirshError &&
    NOT_FOUND.test(error.message) &&
    !CONNECTION_LOST.test(error.message)
  );
}

export class LibvirtDomains {
  private readonly monitors = new Map<string, LibvirtMonitor>();
  private readonly pollTimer: NodeJS.Timeout;
  private polling = false;
  /** Set by {@link close}: nothing is announced any more. */
  closed = false;

  /**
   * @param session the host's command session
   * @param prefix the prefix of the driver's domain names
   * @param host how the host is named in exit reasons
   * @param emit announces state changes and exits
   * @param pollMs poll period of the running domains' list
   */
  constructor(
    private readonly session: VirshSession,
    readonly prefix: string,
    private readonly host: string,
    private readonly emit: EmitEvent,
    pollMs: number,
  ) {
    this.pollTimer = setInterval(() => void this.poll(), pollMs);
    this.pollTimer.unref();
  }

  domainName(id: string): string {
    return `${this.prefix}${id}`;
  }

  get(id: string): LibvirtMonitor | undefined {
    return this.monitors.get(id);
  }

  values(): IterableIterator<LibvirtMonitor> {
    return this.monitors.values();
  }

  /** The monitor of a running domain; rejects `not_running` otherwise. */
  monitorOf(id: string): LibvirtMonitor {
    const monitor = this.monitors.get(id);
    if (!monitor || monitor.done)
      throw new HypervisorError('not_running', `domain ${id} is not running`);
    return monitor;
  }

  attach(runtime: PersistedRuntime, state: DomainRunState): LibvirtMonitor {
    let resolveExited: (info: ExitInfo) => void = () => undefined;
    const exited = new Promise<ExitInfo>((resolve) => {
      resolveExited = resolve;
    });
    const monitor: LibvirtMonitor = {
      runtime,
      domainName: this.domainName(runtime.id),
      state,
      stopRequested: false,
      forced: false,
      sawShutdown: false,
      done: false,
      exited,
      resolveExited,
      screenshotSeq: 0,
    };
    this.monitors.set(runtime.id, monitor);
    return monitor;
  }

  private describeEnd(
    monitor: LibvirtMonitor,
    end: DomainEnd,
  ): { reason: string; expected: boolean } {
    if (monitor.stopRequested && monitor.forced)
      return {
        reason: 'stopped by the portal (destroyed after the graceful stop failed)',
        expected: true,
      };
    if (monitor.stopRequested) return { reason: 'stopped by the portal', expected: true };
    if (end.stopped === 'Shutdown') return { reason: 'the guest powered off', expected: true };
    if (end.stopped === 'Destroyed')
      return {
        reason: `the domain was destroyed on ${this.host} outside the portal`,
        expected: false,
      };
    if (end.stopped)
      return {
        reason: `the QEMU process ended unexpectedly on ${this.host} (libvirt: Stopped ${end.stopped})`,
        expected: false,
      };
    return {
      reason: `the domain disappeared from ${this.host} (killed from outside or crashed)`,
      expected: false,
    };
  }

  async finalize(monitor: LibvirtMonitor, end: DomainEnd): Promise<void> {
    if (monitor.done) return;
    monitor.done = true;
    const { runtime } = monitor;
    if (this.monitors.get(runtime.id) === monitor) this.monitors.delete(runtime.id);
    if (!monitor.sawShutdown && (monitor.stopRequested || end.stopped === 'Destroyed')) {
      monitor.state = 'shutdown';
      this.emit('state', runtime.id, 'shutdown', {
        event: 'SHUTDOWN',
        guest: false,
        reason: 'destroyed',
      });
    }
    const { reason, expected } = this.describeEnd(monitor, end);
    const info: ExitInfo = {
      code: null,
      signal: null,
      reason,
      expected,
      at: new Date().toISOString(),
    };
    await writeExit(runtime.runDir, info);
    await cleanRunDir(runtime.runDir, true);
    monitor.resolveExited(info);
    this.emit('exit', runtime.id, info);
  }

  /** Ends the monitor when libvirt says its domain no longer runs. */
  async checkEnded(monitor: LibvirtMonitor, end: DomainEnd = {}): Promise<void> {
    if (monitor.done) return;
    try {
      const state = mapDomstate(await this.session.run(['domstate', monitor.domainName], 5000));
      if (state) return;
    } catch (error) {
      if (!isDomainGone(error)) return;
    }
    await this.finalize(monitor, end);
  }

  private async poll(): Promise<void> {
    if (this.closed || this.polling || this.monitors.size === 0) return;
    this.polling = true;
    try {
      const names = new Set(
        (await this.session.run(['list', '--name'], 10_000)).split('\n').map((l) => l.trim()),
      );
      for (const monitor of [...this.monitors.values()]) {
        if (!monitor.done && !names.has(monitor.domainName)) await this.checkEnded(monitor);
      }
    } catch {
      /* the host did not answer: the next poll asks again */
    } finally {
      this.polling = false;
    }
  }

  onEvent(event: LibvirtEvent) {
    if (!event.domain.startsWith(this.prefix)) return;
    const monitor = this.monitors.get(event.domain.slice(this.prefix.length));
    if (!monitor || monitor.done) return;
    const id = monitor.runtime.id;
    const announce = (detail: StateChangeDetail) => this.emit('state', id, monitor.state, detail);
    if (event.type === 'reboot') {
      announce({ event: 'RESET' });
      return;
    }
    if (event.type !== 'lifecycle') return;
    switch (event.event) {
      case 'Suspended':
        monitor.state = 'paused';
        announce({ event: 'STOP' });
        break;
      case 'Resumed':
        monitor.state = 'running';
        announce({ event: 'RESUME' });
        break;
      case 'Shutdown': {
        const guest = /guest/i.test(event.detail);
        monitor.state = 'shutdown';
        monitor.sawShutdown = true;
        announce({ event: 'SHUTDOWN', guest, reason: guest ? 'guest-shutdown' : 'host-request' });
        break;
      }
      case 'Stopped':
        void this.checkEnded(monitor, { stopped: event.detail.split(/\s/)[0] ?? '' });
        break;
      default:
        break;
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.pollTimer);
    this.monitors.clear();
  }

  /** A domain's status as libvirt has it now (`absent` once it ended). */
  async status(id: string): Promise<DomainStatus> {
    const monitor = this.get(id);
    if (!monitor || monitor.done) return 'absent';
    try {
      const state = mapDomstate(await this.session.run(['domstate', monitor.domainName], 5000));
      if (state) {
        monitor.state = state;
        return state;
      }
      await this.checkEnded(monitor);
      return monitor.done ? 'absent' : monitor.state;
    } catch (error) {
      if (isDomainGone(error)) {
        await this.finalize(monitor, {});
        return 'absent';
      }
      return monitor.state;
    }
  }
}
