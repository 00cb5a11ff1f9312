/**
 * The QEMU driver: one detached `qemu-system-x86_64` per running domain, controlled over QMP.
 *
 * Layout: every start owns `<dataDir>/run/<id>/` (mode 0700):
 *   - `qmp.sock`      QMP unix socket (the driver keeps one connection open per domain);
 *   - `qemu.pid`      written by QEMU (`-pidfile`);
 *   - `runtime.json`  the {@link DomainRuntime} (+ disk path), written once the start succeeded;
 *   - `qemu.log`      QEMU's stdout/stderr (truncated at each start);
 *   - `exit.json`     the {@link ExitInfo} of the last end (see `lastExit`).
 *
 * QEMU is spawned detached (own session / process group, stdio to `qemu.log`, unref'd), so it
 * survives a server restart; `adopt()` re-attaches to it. Exits are detected through the child
 * `exit` event (processes this instance spawned) and by polling the pid every second (adopted ones,
 * and as a safety net); the QMP socket closing triggers an immediate check.
 *
 * Start sequence: spawn with `-S` (vCPUs stopped) -> QMP handshake -> `set_password` vnc and spice ->
 * `cont` -> runtime.json. A start that fails because a port was taken meanwhile is retried on other
 * ports (up to 3 attempts).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { promises as fsp, openSync, closeSync, existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { connectQmp, type QmpClient, type QmpEvent } from './qmp-client.ts';
import { buildQemuArgs, validateSpec } from './qemu-command.ts';
import { createPortAllocator, type PortAllocator, type PortRange } from './port-allocator.ts';
import {
  DOMAIN_ID_PATTERN,
  HypervisorError,
  type Accel,
  type AdoptResult,
  type ConvertDiskOptions,
  type DiskInfo,
  type DomainRunState,
  type DomainRuntime,
  type DomainSpec,
  type DomainStatus,
  type ExitInfo,
  type Hypervisor,
  type HypervisorEvents,
  type PrepareDiskOptions,
  type StateChangeDetail,
} from './types.ts';

export {
  buildQemuArgs,
  bootOrderLetters,
  validateSpec,
  escapeOptionValue,
  type QemuLaunchContext,
} from './qemu-command.ts';

const execFileAsync = promisify(execFile);

export interface QemuDriverOptions {
  /** DATA_DIR; run directories go to `<dataDir>/run/<id>/`. */
  dataDir: string;
  /** Accelerator for new starts. Default `tcg`. */
  accel?: Accel;
  /** Default `qemu-system-x86_64`. */
  qemuBinary?: string;
  /** Default `qemu-img`. */
  qemuImg?: string;
  /** VNC ports (>= 5900). Default 5900-6899. */
  vncPorts?: PortRange;
  /** SPICE ports. Default 15900-16899. */
  spicePorts?: PortRange;
  /** Pid poll period in ms (exit detection for adopted domains). Default 1000. */
  pollMs?: number;
  /** Enable QEMU's seccomp sandbox (`-sandbox on,...`). Default true. */
  sandbox?: boolean;
  /** How long a start may take to answer on QMP. Default 15000. */
  startTimeoutMs?: number;
}

/** runtime.json content. */
interface PersistedRuntime extends DomainRuntime {
  diskPath: string;
  args: string[];
}

interface Monitor {
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

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessage(error: unknown): string {
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
function readCmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    return [];
  }
}

/** true when `pid` is the QEMU that serves `qmpPath` (guards against pid reuse). */
function pidServes(pid: number, qmpPath: string): boolean {
  return readCmdline(pid).some((arg) => arg.includes(qmpPath.replaceAll(',', ',,')));
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

function parseRuntime(text: string): PersistedRuntime | undefined {
  try {
    const v: unknown = JSON.parse(text);
    if (!isRecord(v)) return undefined;
    const { id, name, pid, vncPort, spicePort, qmpPath, runDir, startedAt, accel, diskPath, args } =
      v;
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

function publicRuntime(r: PersistedRuntime): DomainRuntime {
  return {
    id: r.id,
    name: r.name,
    pid: r.pid,
    vncPort: r.vncPort,
    spicePort: r.spicePort,
    qmpPath: r.qmpPath,
    runDir: r.runDir,
    startedAt: r.startedAt,
    accel: r.accel,
  };
}

function mapQmpStatus(status: string): DomainRunState {
  if (status === 'running') return 'running';
  if (status === 'shutdown') return 'shutdown';
  return 'paused'; // paused, prelaunch, suspended, io-error, guest-panicked, internal-error, *migrate, ...
}

const ADDRESS_IN_USE =
  /address already in use|failed to bind|failed to start vnc|could not set up host forwarding|failed to listen/i;

/** Create the QEMU driver. See the module comment for the files it keeps. */
export function createQemuDriver(options: QemuDriverOptions): Hypervisor {
  return new QemuDriver(options);
}

class QemuDriver extends EventEmitter implements Hypervisor {
  readonly kind = 'qemu';
  readonly accel: Accel;
  private readonly dataDir: string;
  private readonly runRoot: string;
  private readonly qemuBinary: string;
  private readonly qemuImg: string;
  private readonly vncPorts: PortAllocator;
  private readonly spicePorts: PortAllocator;
  private readonly sandbox: boolean;
  private readonly startTimeoutMs: number;
  private readonly monitors = new Map<string, Monitor>();
  private readonly starting = new Set<string>();
  private readonly pollTimer: NodeJS.Timeout;
  private closed = false;

  constructor(options: QemuDriverOptions) {
    super();
    this.dataDir = path.resolve(options.dataDir);
    this.runRoot = path.join(this.dataDir, 'run');
    this.accel = options.accel ?? 'tcg';
    this.qemuBinary = options.qemuBinary ?? 'qemu-system-x86_64';
    this.qemuImg = options.qemuImg ?? 'qemu-img';
    this.vncPorts = createPortAllocator(options.vncPorts ?? { from: 5900, to: 6899 });
    this.spicePorts = createPortAllocator(options.spicePorts ?? { from: 15900, to: 16899 });
    this.sandbox = options.sandbox ?? true;
    this.startTimeoutMs = options.startTimeoutMs ?? 15_000;
    this.pollTimer = setInterval(() => this.poll(), options.pollMs ?? 1000);
    this.pollTimer.unref();
  }

  // typed EventEmitter surface
  override on<E extends keyof HypervisorEvents>(
    event: E,
    listener: (...args: HypervisorEvents[E]) => void,
  ): this {
    return super.on(event, listener as (...args: unknown[]) => void);
  }
  override off<E extends keyof HypervisorEvents>(
    event: E,
    listener: (...args: HypervisorEvents[E]) => void,
  ): this {
    return super.off(event, listener as (...args: unknown[]) => void);
  }
  private emitTyped<E extends keyof HypervisorEvents>(
    event: E,
    ...args: HypervisorEvents[E]
  ): void {
    this.emit(event, ...args);
  }

  private runDirOf(id: string): string {
    if (!DOMAIN_ID_PATTERN.test(id))
      throw new HypervisorError('invalid_spec', `invalid domain id ${JSON.stringify(id)}`);
    return path.join(this.runRoot, id);
  }

  // ---------------------------------------------------------------- disks
  private async qemuImgRun(args: string[]): Promise<string> {
    try {
      const { stdout } = await execFileAsync(this.qemuImg, args, { maxBuffer: 4 * 1024 * 1024 });
      return stdout;
    } catch (error) {
      const stderr = isRecord(error) && typeof error.stderr === 'string' ? error.stderr.trim() : '';
      throw new HypervisorError(
        'command_failed',
        `qemu-img ${args[0] ?? ''} failed: ${stderr || errorMessage(error)}`,
        { cause: error },
      );
    }
  }

  private diskInUse(file: string): boolean {
    const abs = path.resolve(file);
    for (const m of this.monitors.values()) if (m.runtime.diskPath === abs) return true;
    return false;
  }

  async prepareDisk(opts: PrepareDiskOptions): Promise<DiskInfo> {
    const file = path.resolve(opts.path);
    if (existsSync(file)) throw new HypervisorError('disk_exists', `disk ${file} already exists`);
    if (opts.sizeGiB !== undefined && (!(opts.sizeGiB > 0) || opts.sizeGiB > 65536)) {
      throw new HypervisorError(
        'invalid_spec',
        `sizeGiB must be in (0, 65536] (got ${opts.sizeGiB})`,
      );
    }
    const size = opts.sizeGiB === undefined ? [] : [`${Math.round(opts.sizeGiB * 1024)}M`];
    await fsp.mkdir(path.dirname(file), { recursive: true });
    if (opts.backingFile) {
      const backing = path.resolve(opts.backingFile);
      if (!existsSync(backing))
        throw new HypervisorError('disk_not_found', `backing file ${backing} not found`);
      await this.qemuImgRun([
        'create',
        '-q',
        '-f',
        'qcow2',
        '-b',
        backing,
        '-F',
        'qcow2',
        file,
        ...size,
      ]);
    } else {
      if (opts.sizeGiB === undefined)
        throw new HypervisorError('invalid_spec', 'prepareDisk needs backingFile or sizeGiB');
      await this.qemuImgRun(['create', '-q', '-f', 'qcow2', file, ...size]);
    }
    return this.diskInfo(file);
  }

  async deleteDisk(file: string): Promise<void> {
    if (this.diskInUse(file))
      throw new HypervisorError('already_running', `disk ${file} is used by a running domain`);
    await fsp.rm(path.resolve(file), { force: true });
  }

  async diskInfo(file: string): Promise<DiskInfo> {
    const abs = path.resolve(file);
    if (!existsSync(abs)) throw new HypervisorError('disk_not_found', `disk ${abs} not found`);
    // -U: read even while a running QEMU holds the image lock
    const out = await this.qemuImgRun(['info', '--output=json', '-U', abs]);
    let info: unknown;
    try {
      info = JSON.parse(out);
    } catch (error) {
      throw new HypervisorError('command_failed', 'qemu-img info: output is not JSON', {
        cause: error,
      });
    }
    if (!isRecord(info))
      throw new HypervisorError('command_failed', 'qemu-img info: unexpected output');
    const backing = info['full-backing-filename'] ?? info['backing-filename'];
    return {
      virtualSize: typeof info['virtual-size'] === 'number' ? info['virtual-size'] : 0,
      actualSize: typeof info['actual-size'] === 'number' ? info['actual-size'] : 0,
      backingFile: typeof backing === 'string' ? backing : null,
    };
  }

  async resizeDisk(file: string, sizeGiB: number): Promise<DiskInfo> {
    const abs = path.resolve(file);
    if (!(sizeGiB > 0) || sizeGiB > 65536)
      throw new HypervisorError('invalid_spec', `sizeGiB must be in (0, 65536] (got ${sizeGiB})`);
    if (!existsSync(abs)) throw new HypervisorError('disk_not_found', `disk ${abs} not found`);
    if (this.diskInUse(abs))
      throw new HypervisorError('already_running', `disk ${abs} is used by a running domain`);
    await this.qemuImgRun(['resize', '-q', '-f', 'qcow2', abs, `${Math.round(sizeGiB * 1024)}M`]);
    return this.diskInfo(abs);
  }

  async convertDisk(opts: ConvertDiskOptions): Promise<DiskInfo> {
    const source = path.resolve(opts.source);
    const target = path.resolve(opts.target);
    if (!existsSync(source))
      throw new HypervisorError('disk_not_found', `disk ${source} not found`);
    if (existsSync(target))
      throw new HypervisorError('disk_exists', `disk ${target} already exists`);
    // A running guest writes its disk while qemu-img reads it: the copy would be inconsistent.
    if (this.diskInUse(source))
      throw new HypervisorError('already_running', `disk ${source} is used by a running domain`);
    const partial = `${target}.part`;
    await fsp.mkdir(path.dirname(target), { recursive: true });
    await fsp.rm(partial, { force: true });
    try {
      await this.runConvert(source, partial, opts);
      await fsp.rename(partial, target);
    } catch (error) {
      await fsp.rm(partial, { force: true });
      throw error;
    }
    return this.diskInfo(target);
  }

  /**
   * `qemu-img convert -p`: reads the source (and its backing chain, formats given, never probed)
   * into a standalone qcow2, reporting progress from qemu-img's "(n.nn/100%)" lines. It runs at a
   * lower CPU priority than the guests.
   */
  private runConvert(source: string, target: string, opts: ConvertDiskOptions): Promise<void> {
    const { onProgress, signal } = opts;
    if (signal?.aborted)
      return Promise.reject(new HypervisorError('command_failed', 'qemu-img convert aborted'));
    return new Promise<void>((resolve, reject) => {
      const args = ['convert', '-p', '-f', 'qcow2', '-O', 'qcow2', source, target];
      const child = spawn(this.qemuImg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      if (child.pid) {
        try {
          os.setPriority(child.pid, 10);
        } catch {
          /* not allowed here: it runs at the default priority */
        }
      }
      let stderr = '';
      let pending = '';
      let last = -1;
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (chunk: string) => {
        pending += chunk;
        const parts = pending.split(/[\r\n]/);
        pending = parts.pop() ?? '';
        for (const part of parts) {
          const match = /\((\d+(?:\.\d+)?)\/100%\)/.exec(part);
          const percent = match?.[1] ? Number(match[1]) : NaN;
          if (Number.isFinite(percent) && percent !== last) {
            last = percent;
            onProgress?.(percent);
          }
        }
      });
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        if (stderr.length < 8192) stderr += chunk;
      });
      const abort = () => child.kill('SIGKILL');
      signal?.addEventListener('abort', abort, { once: true });
      child.once('error', (error) => {
        signal?.removeEventListener('abort', abort);
        reject(
          new HypervisorError('command_failed', `qemu-img convert failed: ${errorMessage(error)}`, {
            cause: error,
          }),
        );
      });
      child.once('close', (code, sig) => {
        signal?.removeEventListener('abort', abort);
        if (code === 0) return resolve();
        const why = signal?.aborted
          ? 'aborted'
          : stderr.trim() || (sig ? `killed by ${sig}` : `exit code ${String(code)}`);
        reject(new HypervisorError('command_failed', `qemu-img convert failed: ${why}`));
      });
    });
  }

  // ---------------------------------------------------------------- start
  async start(spec: DomainSpec): Promise<DomainRuntime> {
    if (this.closed) throw new HypervisorError('start_failed', 'driver is closed');
    validateSpec(spec);
    const id = spec.id;
    if (this.monitors.has(id) || this.starting.has(id))
      throw new HypervisorError('already_running', `domain ${id} is already running`);
    this.starting.add(id);
    try {
      for (const file of [spec.diskPath, ...spec.hardware.isos, ...spec.hardware.floppies]) {
        if (file && !existsSync(file))
          throw new HypervisorError('invalid_spec', `file not found: ${file}`);
      }
      const runDir = this.runDirOf(id);
      await fsp.mkdir(runDir, { recursive: true, mode: 0o700 });
      // a runtime.json with a live QEMU means a domain we have not adopted: refuse rather than double-start
      const previous = await this.readRuntime(runDir);
      if (previous && isPidAlive(previous.pid) && pidServes(previous.pid, previous.qmpPath)) {
        throw new HypervisorError(
          'already_running',
          `domain ${id} has a live QEMU (pid ${previous.pid}); call adopt()`,
        );
      }
      await this.cleanRunDir(runDir, false);
      let lastError: unknown;
      for (let attempt = 1; attempt <= 3; attempt++) {
        try {
          return await this.spawnOnce(spec, runDir);
        } catch (error) {
          lastError = error;
          if (!(error instanceof RetryablePortError)) throw error;
        }
      }
      throw new HypervisorError(
        'start_failed',
        `start of ${id} failed: ${errorMessage(lastError)}`,
        { cause: lastError },
      );
    } finally {
      this.starting.delete(id);
    }
  }

  private async spawnOnce(spec: DomainSpec, runDir: string): Promise<DomainRuntime> {
    const vncPort = await this.vncPorts.allocate();
    let spicePort: number;
    try {
      spicePort = await this.spicePorts.allocate();
    } catch (error) {
      this.vncPorts.release(vncPort);
      throw new HypervisorError('start_failed', errorMessage(error));
    }
    const qmpPath = path.join(runDir, 'qmp.sock');
    const pidPath = path.join(runDir, 'qemu.pid');
    const logPath = path.join(runDir, 'qemu.log');
    const args = buildQemuArgs(spec, {
      accel: this.accel,
      vncPort,
      spicePort,
      qmpPath,
      pidPath,
      sandbox: this.sandbox,
      startPaused: true,
    });
    const releasePorts = () => {
      this.vncPorts.release(vncPort);
      this.spicePorts.release(spicePort);
    };

    const logFd = openSync(logPath, 'w', 0o600);
    let child: ChildProcess;
    try {
      child = spawn(this.qemuBinary, args, { detached: true, stdio: ['ignore', logFd, logFd] });
    } catch (error) {
      releasePorts();
      throw new HypervisorError(
        'start_failed',
        `cannot spawn ${this.qemuBinary}: ${errorMessage(error)}`,
        { cause: error },
      );
    } finally {
      closeSync(logFd);
    }
    child.unref();
    const startedAt = new Date().toISOString();

    let earlyExit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    const exitedEarly = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        earlyExit = { code, signal };
        resolve();
      });
      child.once('error', (error) => {
        earlyExit = { code: null, signal: null };
        void fsp.appendFile(logPath, `spawn error: ${error.message}\n`).finally(resolve);
      });
    });

    const fail = async (message: string, cause?: unknown): Promise<never> => {
      if (!earlyExit && child.pid) {
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await Promise.race([exitedEarly, sleep(3000)]);
      }
      releasePorts();
      const tail = await logTail(logPath);
      await this.cleanRunDir(runDir, false);
      if (ADDRESS_IN_USE.test(tail)) throw new RetryablePortError(tail);
      throw new HypervisorError('start_failed', `${message}${tail ? `\n${tail}` : ''}`, { cause });
    };

    let qmp: QmpClient;
    try {
      const connecting = connectQmp(qmpPath, { timeoutMs: this.startTimeoutMs });
      connecting.catch(() => undefined);
      const result = await Promise.race([connecting, exitedEarly.then(() => undefined)]);
      if (!result) {
        void connecting.then(
          (c) => c.close(),
          () => undefined,
        );
        const how = earlyExit?.signal
          ? `signal ${earlyExit.signal}`
          : `code ${String(earlyExit?.code)}`;
        return await fail(`QEMU exited during start (${how})`);
      }
      qmp = result;
    } catch (error) {
      return await fail(`QEMU did not answer on QMP: ${errorMessage(error)}`, error);
    }

    try {
      await qmp.execute('set_password', { protocol: 'vnc', password: spec.vncPassword });
      await qmp.execute('set_password', { protocol: 'spice', password: spec.spicePassword });
      await qmp.execute('cont');
    } catch (error) {
      qmp.close();
      return await fail(`QEMU setup over QMP failed: ${errorMessage(error)}`, error);
    }

    const pid = child.pid ?? 0;
    const runtime: PersistedRuntime = {
      id: spec.id,
      name: spec.name,
      pid,
      vncPort,
      spicePort,
      qmpPath,
      runDir,
      startedAt,
      accel: this.accel,
      diskPath: spec.diskPath ? path.resolve(spec.diskPath) : '',
      args,
    };
    await fsp.writeFile(
      path.join(runDir, 'runtime.json'),
      `${JSON.stringify(runtime, null, 2)}\n`,
      { mode: 0o600 },
    );
    const monitor = this.attach(runtime, qmp, 'running');
    monitor.child = child;
    child.removeAllListeners('exit');
    child.once('exit', (code, signal) => {
      void this.finalize(monitor, { code, signal });
    });
    if (earlyExit) void this.finalize(monitor, earlyExit);
    return publicRuntime(runtime);
  }

  // ---------------------------------------------------------------- monitoring
  private attach(runtime: PersistedRuntime, qmp: QmpClient, state: DomainRunState): Monitor {
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
    this.monitors.set(runtime.id, monitor);
    this.vncPorts.reserve(runtime.vncPort);
    this.spicePorts.reserve(runtime.spicePort);
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
    const id = monitor.runtime.id;
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
        return;
    }
    this.emitTyped('state', id, monitor.state, detail);
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

  private async finalize(
    monitor: Monitor,
    how: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  ) {
    if (monitor.done) return;
    monitor.done = true;
    const { runtime } = monitor;
    if (this.monitors.get(runtime.id) === monitor) this.monitors.delete(runtime.id);
    monitor.qmp?.close();
    this.vncPorts.release(runtime.vncPort);
    this.spicePorts.release(runtime.spicePort);
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
    if (!expected || (code !== null && code !== 0)) {
      const tail = await logTail(path.join(runtime.runDir, 'qemu.log'), 5);
      if (tail) reason += `\n${tail}`;
    }
    const info: ExitInfo = { code, signal, reason, expected, at: new Date().toISOString() };
    await this.writeExit(runtime.runDir, info);
    await this.cleanRunDir(runtime.runDir, true);
    monitor.resolveExited(info);
    if (!this.closed) this.emitTyped('exit', runtime.id, info);
  }

  private async writeExit(runDir: string, info: ExitInfo) {
    try {
      await fsp.writeFile(path.join(runDir, 'exit.json'), `${JSON.stringify(info, null, 2)}\n`, {
        mode: 0o600,
      });
    } catch {
      /* run dir removed */
    }
  }

  /** Remove the live-process files (keeps qemu.log; keeps exit.json when `keepExit`). */
  private async cleanRunDir(runDir: string, keepExit: boolean) {
    const names = ['qmp.sock', 'qemu.pid', 'runtime.json'];
    if (!keepExit) names.push('exit.json');
    try {
      for (const entry of await fsp.readdir(runDir))
        if (entry.startsWith('screendump-')) names.push(entry);
    } catch {
      return;
    }
    await Promise.all(names.map((n) => fsp.rm(path.join(runDir, n), { force: true })));
  }

  private async readRuntime(runDir: string): Promise<PersistedRuntime | undefined> {
    try {
      return parseRuntime(await fsp.readFile(path.join(runDir, 'runtime.json'), 'utf8'));
    } catch {
      return undefined;
    }
  }

  private monitorOf(id: string): Monitor {
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

  private async command<T = unknown>(
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

  // ---------------------------------------------------------------- power
  async shutdown(id: string): Promise<void> {
    await this.command(id, 'system_powerdown');
  }

  async stop(id: string, options?: { timeoutMs?: number }): Promise<void> {
    const monitor = this.monitors.get(id);
    if (!monitor || monitor.done) return;
    monitor.stopRequested = true;
    const timeoutMs = options?.timeoutMs ?? 5000;
    const qmp = monitor.qmp && !monitor.qmp.closed ? monitor.qmp : undefined;
    if (qmp) {
      try {
        await qmp.execute('quit', undefined, { timeoutMs: Math.min(timeoutMs, 2000) });
      } catch {
        /* the socket closing under us is the normal answer to quit */
      }
    }
    const first = await Promise.race([
      monitor.exited,
      sleep(qmp ? timeoutMs : 0).then(() => undefined),
    ]);
    if (first) return;
    const { pid, qmpPath } = monitor.runtime;
    if (isPidAlive(pid) && pidServes(pid, qmpPath)) {
      monitor.killed = true;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    const second = await Promise.race([monitor.exited, sleep(5000).then(() => undefined)]);
    if (!second) await this.finalize(monitor, { code: null, signal: 'SIGKILL' });
  }

  async reset(id: string): Promise<void> {
    await this.command(id, 'system_reset');
  }

  async pause(id: string): Promise<void> {
    await this.command(id, 'stop');
    const monitor = this.monitors.get(id);
    if (monitor) monitor.state = 'paused';
  }

  async resume(id: string): Promise<void> {
    await this.command(id, 'cont');
    const monitor = this.monitors.get(id);
    if (monitor) monitor.state = 'running';
  }

  async status(id: string): Promise<DomainStatus> {
    const monitor = this.monitors.get(id);
    if (!monitor || monitor.done) return 'absent';
    if (monitor.state === 'shutdown') return 'shutdown';
    try {
      const result = await this.command(id, 'query-status', undefined, 3000);
      if (isRecord(result) && typeof result.status === 'string') {
        monitor.state = mapQmpStatus(result.status);
        return monitor.state;
      }
      return monitor.state;
    } catch {
      if (monitor.done || !isPidAlive(monitor.runtime.pid)) return 'absent';
      return monitor.state;
    }
  }

  async screenshot(id: string): Promise<Buffer> {
    const monitor = this.monitorOf(id);
    const file = path.join(
      monitor.runtime.runDir,
      `screendump-${process.pid}-${++monitor.screenshotSeq}.png`,
    );
    try {
      await this.command(id, 'screendump', { filename: file, format: 'png' }, 10_000);
      return await fsp.readFile(file);
    } finally {
      await fsp.rm(file, { force: true });
    }
  }

  async setPasswords(
    id: string,
    passwords: { vnc?: string; spice?: string },
    options: { validForSeconds?: number } = {},
  ): Promise<void> {
    const { validForSeconds } = options;
    if (
      validForSeconds !== undefined &&
      !(Number.isInteger(validForSeconds) && validForSeconds > 0)
    )
      throw new HypervisorError('invalid_spec', 'validForSeconds must be a positive integer');
    // `never` resets an expiry an earlier call may have set.
    const time = validForSeconds === undefined ? 'never' : `+${validForSeconds}`;
    if (passwords.vnc !== undefined) {
      if (!passwords.vnc) throw new HypervisorError('invalid_spec', 'empty VNC password');
      await this.command(id, 'set_password', { protocol: 'vnc', password: passwords.vnc });
      await this.command(id, 'expire_password', { protocol: 'vnc', time });
    }
    if (passwords.spice !== undefined) {
      if (!passwords.spice) throw new HypervisorError('invalid_spec', 'empty SPICE password');
      await this.command(id, 'set_password', { protocol: 'spice', password: passwords.spice });
      await this.command(id, 'expire_password', { protocol: 'spice', time });
    }
  }

  // ---------------------------------------------------------------- inventory
  async list(): Promise<DomainRuntime[]> {
    const out: DomainRuntime[] = [];
    for (const monitor of this.monitors.values()) {
      if (!monitor.done && isPidAlive(monitor.runtime.pid))
        out.push(publicRuntime(monitor.runtime));
    }
    return out;
  }

  get(id: string): DomainRuntime | undefined {
    const monitor = this.monitors.get(id);
    return monitor && !monitor.done ? publicRuntime(monitor.runtime) : undefined;
  }

  async lastExit(id: string): Promise<ExitInfo | undefined> {
    try {
      const v: unknown = JSON.parse(
        await fsp.readFile(path.join(this.runDirOf(id), 'exit.json'), 'utf8'),
      );
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

  async adopt(): Promise<AdoptResult> {
    const result: AdoptResult = { adopted: [], dead: [] };
    let entries: string[];
    try {
      entries = await fsp.readdir(this.runRoot);
    } catch {
      return result;
    }
    for (const id of entries) {
      if (!DOMAIN_ID_PATTERN.test(id) || this.starting.has(id)) continue;
      const existing = this.monitors.get(id);
      if (existing && !existing.done) {
        result.adopted.push(publicRuntime(existing.runtime));
        continue;
      }
      const runDir = path.join(this.runRoot, id);
      const runtime = await this.readRuntime(runDir);
      const dead = async (reason: string) => {
        const tail = await logTail(path.join(runDir, 'qemu.log'), 5);
        const info: ExitInfo = {
          code: null,
          signal: null,
          reason: tail ? `${reason}\n${tail}` : reason,
          expected: false,
          at: new Date().toISOString(),
        };
        await this.writeExit(runDir, info);
        await this.cleanRunDir(runDir, true);
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
      this.attach(runtime, qmp, state);
      result.adopted.push(publicRuntime(runtime));
    }
    return result;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pollTimer);
    for (const monitor of this.monitors.values()) {
      monitor.qmp?.close();
      monitor.child?.removeAllListeners('exit');
    }
    this.monitors.clear();
    this.removeAllListeners();
  }
}

class RetryablePortError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryablePortError';
  }
}
