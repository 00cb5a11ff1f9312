/**
 * Libvirt's domain events, read from a second long-lived `virsh event --all --loop` per host (the
 * command session is busy answering commands; an event loop would block it). Only the lifecycle and
 * reboot events are parsed; the process is started again after it ended (a second later, then
 * backing off while the host does not answer), until closed.
 * The driver also polls the list of running domains, so an end missed while this stream was down
 * is still noticed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { virshEnv } from './virsh-session.ts';

/** One event line: `event 'lifecycle' for domain 'vdi-x': Suspended Paused`. */
export interface LibvirtEvent {
  /** `lifecycle`, `reboot`, ... */
  type: string;
  domain: string;
  /** For lifecycle: the event (`Started`, `Suspended`, `Resumed`, `Shutdown`, `Stopped`, ...). */
  event: string;
  /** For lifecycle: the rest (`Booted`, `Paused`, `Destroyed`, `Failed`, `Finished after guest request`). */
  detail: string;
}

const LINE = /^(?:\S+ \S+: )?event '([^']+)' for domain '([^']+)'(?::\s*(\S+)\s*(.*))?$/;

/** Parses one line of `virsh event --loop` (with or without `--timestamp`). */
export function parseEventLine(line: string): LibvirtEvent | undefined {
  const match = LINE.exec(line.trim());
  if (!match?.[1] || !match[2]) return undefined;
  return {
    type: match[1],
    domain: match[2],
    event: match[3] ?? '',
    detail: (match[4] ?? '').trim(),
  };
}

export interface LibvirtEventStreamOptions {
  uri: string;
  virsh?: string;
  onEvent: (event: LibvirtEvent) => void;
  /** First delay before the stream is started again after it ended (ms). Default 1000. */
  restartMs?: number;
}

export class LibvirtEventStream {
  private child: ChildProcess | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Stream ends in a row that came soon after their start. */
  private failures = 0;

  constructor(private readonly options: LibvirtEventStreamOptions) {}

  /** Starts reading events (idempotent). */
  start(): void {
    if (this.closed || this.child) return;
    // stdbuf: each event line is written at once, not when virsh's output buffer fills.
    const child = spawn(
      'stdbuf',
      [
        '-oL',
        this.options.virsh ?? 'virsh',
        '-q',
        '-c',
        this.options.uri,
        'event',
        '--all',
        '--loop',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'], env: virshEnv() },
    );
    this.child = child;
    if (child.stdout) {
      const lines = createInterface({ input: child.stdout });
      lines.on('line', (line) => {
        const event = parseEventLine(line);
        if (event) this.options.onEvent(event);
      });
    }
    const startedAt = Date.now();
    child.once('error', () => undefined);
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
      if (this.closed) return;
      // A host that does not answer is asked again less and less often (up to 30 s apart).
      const base = this.options.restartMs ?? 1000;
      this.failures = Date.now() - startedAt < 10_000 ? this.failures + 1 : 0;
      const delay = Math.min(base * 2 ** Math.max(0, this.failures - 1), 30_000);
      this.restartTimer = setTimeout(() => this.start(), delay);
      this.restartTimer.unref();
    });
  }

  close(): void {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null) child.kill('SIGTERM');
  }
}
