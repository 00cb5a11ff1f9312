/**
 * Spawning a QEMU for a start: the start's passwords in two files only this user reads -> QEMU
 * (reads them at launch, its guest runs at once: VNC and SPICE ask for them from the first
 * connection) -> QMP handshake -> the files removed -> `runtime.json`. QEMU is spawned detached (own session / process group, stdio to
 * `qemu.log`, unref'd), so it survives a server restart. A start that failed because one of its
 * ports was taken meanwhile throws {@link RetryablePortError}: the caller tries other ports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fsp, openSync, closeSync } from 'node:fs';
import path from 'node:path';
import { errorMessage, logTail, sleep } from './host-process.ts';
import { buildQemuArgs } from './qemu-command.ts';
import type { ProcessEnd } from './qemu-monitor.ts';
import { cleanRunDir, PASSWORD_FILES, type PersistedRuntime } from './qemu-run-dir.ts';
import { connectQmp, type QmpClient } from './qmp-client.ts';
import type { PortAllocator } from './port-allocator.ts';
import { HypervisorError, type Accel, type DomainSpec } from './types.ts';

/**
 * What QEMU's log says when a port chosen for it was taken meanwhile (by another process, another
 * portal on the same host): VNC, SPICE ("binding socket to 127.0.0.1:5931 failed") or a host
 * forwarding. The start is then tried again on other ports.
 */
const ADDRESS_IN_USE =
  /address already in use|failed to bind|failed to start vnc|could not set up host forwarding|failed to listen|binding socket to \S+ failed|failed to open spice sockets/i;

/** Whether a failed start's log says one of its ports was taken. */
export function portWasTaken(log: string): boolean {
  return ADDRESS_IN_USE.test(log);
}

export class RetryablePortError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RetryablePortError';
  }
}

/** What a spawn needs of the driver. */
export interface SpawnContext {
  qemuBinary: string;
  accel: Accel;
  sandbox: boolean;
  startTimeoutMs: number;
  vncPorts: PortAllocator;
  spicePorts: PortAllocator;
  /** The SPICE certificates' directory: the SPICE port then speaks TLS only. */
  spiceX509Dir?: string;
}

/** A QEMU that runs the domain, answers on QMP and has its `runtime.json`. */
export interface SpawnedQemu {
  runtime: PersistedRuntime;
  qmp: QmpClient;
  child: ChildProcess;
  /** How the child ended, when it already did (an end its caller's listeners did not see). */
  earlyExit: () => ProcessEnd | undefined;
}

/** Spawns one QEMU for the spec in `runDir`, on newly allocated ports (released if it fails). */
export async function spawnQemu(
  ctx: SpawnContext,
  spec: DomainSpec,
  runDir: string,
): Promise<SpawnedQemu> {
  const vncPort = await ctx.vncPorts.allocate();
  let spicePort: number;
  try {
    spicePort = await ctx.spicePorts.allocate();
  } catch (error) {
    ctx.vncPorts.release(vncPort);
    throw new HypervisorError('start_failed', errorMessage(error));
  }
  const qmpPath = path.join(runDir, 'qmp.sock');
  const pidPath = path.join(runDir, 'qemu.pid');
  const logPath = path.join(runDir, 'qemu.log');
  const passwordFiles = {
    vnc: path.join(runDir, PASSWORD_FILES[0]),
    spice: path.join(runDir, PASSWORD_FILES[1]),
  };
  const args = buildQemuArgs(spec, {
    accel: ctx.accel,
    vncPort,
    spicePort,
    spiceX509Dir: ctx.spiceX509Dir,
    qmpPath,
    pidPath,
    sandbox: ctx.sandbox,
    passwordFiles,
    startPaused: false,
  });
  const releasePorts = () => {
    ctx.vncPorts.release(vncPort);
    ctx.spicePorts.release(spicePort);
  };
  // Readable by this user only, and only until QEMU has read them (see below).
  const writeSecret = (file: string, secret: string) =>
    fsp.writeFile(file, secret, { mode: 0o600, flag: 'w' });
  try {
    await Promise.all([
      writeSecret(passwordFiles.vnc, spec.vncPassword),
      writeSecret(passwordFiles.spice, spec.spicePassword),
    ]);
  } catch (error) {
    releasePorts();
    await cleanRunDir(runDir, false);
    throw new HypervisorError('start_failed', `cannot write the passwords: ${errorMessage(error)}`);
  }

  const logFd = openSync(logPath, 'w', 0o600);
  let child: ChildProcess;
  try {
    child = spawn(ctx.qemuBinary, args, { detached: true, stdio: ['ignore', logFd, logFd] });
  } catch (error) {
    releasePorts();
    void cleanRunDir(runDir, false);
    throw new HypervisorError(
      'start_failed',
      `cannot spawn ${ctx.qemuBinary}: ${errorMessage(error)}`,
      { cause: error },
    );
  } finally {
    closeSync(logFd);
  }
  child.unref();
  const startedAt = new Date().toISOString();

  let earlyExit: ProcessEnd | undefined;
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
    await cleanRunDir(runDir, false);
    if (portWasTaken(tail)) throw new RetryablePortError(tail);
    throw new HypervisorError('start_failed', `${message}${tail ? `\n${tail}` : ''}`, { cause });
  };

  let qmp: QmpClient;
  try {
    // A QEMU that exits during its start never opens the socket: stop asking for it then.
    const exited = new AbortController();
    void exitedEarly.then(() => exited.abort());
    const connecting = connectQmp(qmpPath, {
      timeoutMs: ctx.startTimeoutMs,
      signal: exited.signal,
    });
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

  // QEMU answers on QMP once it has made its objects: it has read the passwords.
  // (A file left behind is removed by the next start of the domain: cleanRunDir.)
  await Promise.all(
    Object.values(passwordFiles).map((file) =>
      fsp.rm(file, { force: true }).catch(() => undefined),
    ),
  );

  const pid = child.pid ?? 0;
  const runtime: PersistedRuntime = {
    id: spec.id,
    name: spec.name,
    pid,
    vncPort,
    spicePort,
    spiceTls: !!ctx.spiceX509Dir,
    qmpPath,
    runDir,
    startedAt,
    accel: ctx.accel,
    diskPath: spec.diskPath ? path.resolve(spec.diskPath) : '',
    args,
  };
  await fsp.writeFile(path.join(runDir, 'runtime.json'), `${JSON.stringify(runtime, null, 2)}\n`, {
    mode: 0o600,
  });
  return { runtime, qmp, child, earlyExit: () => earlyExit };
}
