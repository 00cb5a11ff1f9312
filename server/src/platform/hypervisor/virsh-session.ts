/**
 * One long-lived interactive `virsh` per libvirt host: commands are written to its stdin one at a
 * time, each followed by `echo <marker>`, and its merged stdout/stderr is read up to that marker.
 * For a `qemu+ssh://` URI this keeps one SSH connection open for every command the driver sends,
 * instead of a handshake per call. The process is started on the first command and again after it
 * died (the host went away, a command timed out).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { HypervisorError } from './types.ts';

/** A command virsh answered with `error: …` lines. */
export class VirshError extends Error {
  constructor(
    message: string,
    /** The `error:` lines, without their prefix. */
    readonly lines: string[],
  ) {
    super(message);
    this.name = 'VirshError';
  }
}

/** The connection to the host failed or broke (virsh exited, or a command timed out). */
export class VirshConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VirshConnectionError';
  }
}

export interface VirshSessionOptions {
  /** Libvirt connection URI, e.g. `qemu:///session` or `qemu+ssh://user@host/system`. */
  uri: string;
  /** Default `virsh`. */
  virsh?: string;
  /** Default limit of one command (ms). Default 30000. */
  timeoutMs?: number;
}

interface Pending {
  marker: string;
  resolve: (text: string) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Arguments are plain words: quoting beyond that is not needed by the driver, so it is refused. */
const PLAIN_ARG = /^[A-Za-z0-9_./:=,@+%-]+$/;

/** One argument as virsh's own command parser reads it back. */
export function quoteArg(arg: string): string {
  if (PLAIN_ARG.test(arg)) return arg;
  if (/['"\\\n\r]/.test(arg))
    throw new HypervisorError('invalid_spec', `unsupported character in ${JSON.stringify(arg)}`);
  return `'${arg}'`;
}

/** The environment of virsh: English messages, so the driver can read them. */
export function virshEnv(): NodeJS.ProcessEnv {
  return { ...process.env, LC_ALL: 'C', LANG: 'C' };
}

export class VirshSession {
  readonly uri: string;
  /** The URI without its query (which may name a key file), for messages. */
  private readonly label: string;
  private readonly virsh: string;
  private readonly timeoutMs: number;
  private child: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private buffer = '';
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private seq = 0;
  private closed = false;

  constructor(options: VirshSessionOptions) {
    this.uri = options.uri;
    this.label = options.uri.replace(/\?.*$/, '');
    this.virsh = options.virsh ?? 'virsh';
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /**
   * Runs one command (the words after `virsh`) and resolves with its output, without the prompt
   * lines. Rejects {@link VirshError} when virsh printed `error:` lines, {@link VirshConnectionError}
   * when the process died or the command timed out. Commands run one after the other.
   */
  run(args: string[], timeoutMs = this.timeoutMs): Promise<string> {
    const line = args.map(quoteArg).join(' ');
    const next = this.queue.then(() => this.exchange(line, timeoutMs));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private spawnVirsh(): Promise<void> {
    if (this.closed) return Promise.reject(new VirshConnectionError('the session is closed'));
    // stderr joins stdout in the same pipe, so an error line is always read before the marker;
    // stdbuf makes virsh write each line at once instead of when its 4 KiB buffer fills.
    const script = 'exec stdbuf -oL -eL "$0" -q -c "$1" 2>&1';
    const child = spawn('sh', ['-c', script, this.virsh, this.uri], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: virshEnv(),
    });
    this.child = child;
    this.buffer = '';
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      if (this.child !== child) return;
      this.buffer += chunk;
      this.drain();
    });
    child.stdin?.on('error', () => undefined);
    child.once('exit', (code, signal) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.ready = undefined;
      const said = this.buffer
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !l.startsWith('virsh #') && !l.startsWith('virsh >'))
        .slice(-4)
        .join('; ');
      this.buffer = '';
      const pending = this.pending;
      this.pending = undefined;
      if (pending) {
        clearTimeout(pending.timer);
        pending.reject(
          new VirshConnectionError(
            `virsh for ${this.label} exited (${signal ?? `code ${String(code)}`})${said ? `: ${said}` : ''}`,
          ),
        );
      }
    });
    // The first marker proves the connection is up.
    return this.exchangeNow('', 15_000).then(() => undefined);
  }

  private async exchange(line: string, timeoutMs: number): Promise<string> {
    if (!this.child || !this.ready) {
      this.ready = this.spawnVirsh();
      try {
        await this.ready;
      } catch (error) {
        this.kill();
        throw error;
      }
    }
    return this.exchangeNow(line, timeoutMs);
  }

  private exchangeNow(line: string, timeoutMs: number): Promise<string> {
    const child = this.child;
    if (!child?.stdin) return Promise.reject(new VirshConnectionError('virsh is not running'));
    const marker = `__vdi_${process.pid}_${++this.seq}__`;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.pending?.marker !== marker) return;
        this.pending = undefined;
        // The session's state is unknown now: start over at the next command.
        this.kill();
        reject(
          new VirshConnectionError(
            `virsh for ${this.label} did not answer ${JSON.stringify(line)} within ${timeoutMs} ms`,
          ),
        );
      }, timeoutMs);
      this.pending = { marker, resolve, reject, timer };
      child.stdin?.write(`${line ? `${line}\n` : ''}echo ${marker}\n`);
    });
  }

  /** Completes the pending command once its marker line arrived. */
  private drain() {
    const pending = this.pending;
    if (!pending) return;
    // The marker as `echo` printed it, not as the prompt line repeated the command.
    const match = new RegExp(`(?<!echo )${pending.marker}`).exec(this.buffer);
    if (!match) return;
    const text = this.buffer.slice(0, match.index);
    this.buffer = this.buffer.slice(match.index + match[0].length).replace(/^\n/, '');
    this.pending = undefined;
    clearTimeout(pending.timer);
    const lines = text
      .split('\n')
      .filter((l) => !l.startsWith('virsh #') && !l.startsWith('virsh >'));
    const errors = lines.filter((l) => l.startsWith('error: ')).map((l) => l.slice(7).trim());
    if (errors.length > 0) {
      pending.reject(new VirshError(errors.join('; '), errors));
      return;
    }
    pending.resolve(lines.join('\n').trim());
  }

  private kill() {
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  /** Ends the virsh process (and its SSH connection). */
  close(): void {
    this.closed = true;
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      clearTimeout(pending.timer);
      pending.reject(new VirshConnectionError('the session is closed'));
    }
    const child = this.child;
    this.kill();
    child?.stdin?.end();
  }
}
