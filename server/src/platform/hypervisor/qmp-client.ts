/**
 * A small QMP (QEMU Machine Protocol) client over a unix socket. No dependency.
 *
 * Protocol: newline-delimited JSON. QEMU greets with `{"QMP": {...}}`; the client must send
 * `qmp_capabilities` before any other command. Commands carry an `id` echoed in the reply
 * (`{"return": ...}` or `{"error": {"class", "desc"}}`); asynchronous `{"event": ...}` messages
 * can arrive at any time.
 *
 * Note: a QEMU `-qmp ...,server=on` socket serves ONE client at a time; a second connection waits
 * (no greeting) until the first one closes.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';

/** An asynchronous QMP event. */
export interface QmpEvent {
  event: string;
  data: Record<string, unknown>;
  timestamp: { seconds: number; microseconds: number };
}

/** A QMP command answered with an error (`class` is QEMU's error class, e.g. `GenericError`). */
export class QmpCommandError extends Error {
  readonly errorClass: string;
  readonly command: string;
  constructor(command: string, errorClass: string, desc: string) {
    super(`QMP ${command}: ${desc}`);
    this.name = 'QmpCommandError';
    this.errorClass = errorClass;
    this.command = command;
  }
}

/** Connection-level failure: refused, timed out, closed while waiting. */
export class QmpConnectionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'QmpConnectionError';
  }
}

export interface QmpConnectOptions {
  /** Give up connecting (including retries while the socket does not exist yet) after this. Default 5000. */
  timeoutMs?: number;
  /** Retry ENOENT / ECONNREFUSED until `timeoutMs` (the socket appears shortly after spawn). Default true. */
  retry?: boolean;
  /** Default timeout of each command. Default 10000. */
  commandTimeoutMs?: number;
  /** Stops the retries (the QEMU that would open the socket has exited). */
  signal?: AbortSignal;
}

interface Pending {
  command: string;
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

type QmpClientEvents = {
  /** Every asynchronous QMP event. */
  event: [event: QmpEvent];
  /** The socket closed (QEMU exited, or `close()`); fired once. */
  close: [error: Error | undefined];
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/**
 * Pause between two connection attempts while the socket is missing: a start waits for QMP on its
 * critical path, and a refused connect to a unix socket costs next to nothing.
 */
const RETRY_MS = 10;

/** A connected, negotiated QMP session. Create with {@link connectQmp}. */
export class QmpClient extends EventEmitter<QmpClientEvents> {
  /** The greeting's `QMP.version.qemu` (`{ major, minor, micro }`). */
  readonly version: { major: number; minor: number; micro: number };
  private readonly socket: net.Socket;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffer = '';
  private closedFlag = false;
  private readonly commandTimeoutMs: number;

  private constructor(
    socket: net.Socket,
    version: QmpClient['version'],
    leftover: string,
    commandTimeoutMs: number,
  ) {
    super();
    this.socket = socket;
    this.version = version;
    this.commandTimeoutMs = commandTimeoutMs;
    this.buffer = leftover;
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (error) => this.finish(error));
    socket.on('close', () => this.finish(undefined));
    if (this.buffer) queueMicrotask(() => this.onData(''));
  }

  /** true once the socket has closed. */
  get closed(): boolean {
    return this.closedFlag;
  }

  /** Run a command; resolves with its `return` value, rejects with QmpCommandError / QmpConnectionError. */
  execute<T = unknown>(
    command: string,
    args?: Record<string, unknown>,
    options?: { timeoutMs?: number },
  ): Promise<T> {
    if (this.closedFlag)
      return Promise.reject(new QmpConnectionError(`QMP ${command}: connection closed`));
    const id = this.nextId++;
    const timeoutMs = options?.timeoutMs ?? this.commandTimeoutMs;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new QmpConnectionError(`QMP ${command}: no answer within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { command, resolve: (v) => resolve(v as T), reject, timer });
      const message = args ? { execute: command, arguments: args, id } : { execute: command, id };
      this.socket.write(`${JSON.stringify(message)}\n`);
    });
  }

  /** Close the connection (pending commands reject). QEMU keeps running. */
  close(): void {
    this.socket.destroy();
    this.finish(undefined);
  }

  private onData(chunk: string) {
    this.buffer += chunk;
    let nl = this.buffer.indexOf('\n');
    while (nl >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line) this.onMessage(line);
      nl = this.buffer.indexOf('\n');
    }
  }

  private onMessage(line: string) {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not JSON: ignore
    }
    if (!isRecord(message)) return;
    if (typeof message.event === 'string') {
      const ts = isRecord(message.timestamp) ? message.timestamp : {};
      this.emit('event', {
        event: message.event,
        data: isRecord(message.data) ? message.data : {},
        timestamp: {
          seconds: typeof ts.seconds === 'number' ? ts.seconds : 0,
          microseconds: typeof ts.microseconds === 'number' ? ts.microseconds : 0,
        },
      });
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (!pending) return;
    this.pending.delete(message.id);
    clearTimeout(pending.timer);
    if (isRecord(message.error)) {
      const cls = typeof message.error.class === 'string' ? message.error.class : 'GenericError';
      const desc = typeof message.error.desc === 'string' ? message.error.desc : 'error';
      pending.reject(new QmpCommandError(pending.command, cls, desc));
    } else {
      pending.resolve(message.return);
    }
  }

  private finish(error: Error | undefined) {
    if (this.closedFlag) return;
    this.closedFlag = true;
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer);
      pending.reject(
        new QmpConnectionError(`QMP ${pending.command}: connection closed`, { cause: error }),
      );
      this.pending.delete(id);
    }
    this.emit('close', error);
  }

  /** @internal used by connectQmp */
  static async handshake(
    socket: net.Socket,
    deadline: number,
    commandTimeoutMs: number,
  ): Promise<QmpClient> {
    socket.setEncoding('utf8');
    let buffer = '';
    const greeting = await new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(
        () => done(new QmpConnectionError('QMP: no greeting (is another client connected?)')),
        Math.max(1, deadline - Date.now()),
      );
      const onData = (chunk: string) => {
        buffer += chunk;
        const nl = buffer.indexOf('\n');
        if (nl < 0) return;
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        try {
          const parsed: unknown = JSON.parse(line);
          if (isRecord(parsed) && isRecord(parsed.QMP)) done(undefined, parsed.QMP);
          else done(new QmpConnectionError(`QMP: unexpected greeting ${line.slice(0, 200)}`));
        } catch (error) {
          done(new QmpConnectionError('QMP: greeting is not JSON', { cause: error }));
        }
      };
      const onClose = () => done(new QmpConnectionError('QMP: closed before greeting'));
      const onError = (error: Error) =>
        done(new QmpConnectionError(`QMP: ${error.message}`, { cause: error }));
      function done(error: Error | undefined, value?: Record<string, unknown>) {
        clearTimeout(timer);
        socket.off('data', onData);
        socket.off('close', onClose);
        socket.off('error', onError);
        if (error) reject(error);
        else resolve(value ?? {});
      }
      socket.on('data', onData);
      socket.on('close', onClose);
      socket.on('error', onError);
    });
    const v =
      isRecord(greeting.version) && isRecord(greeting.version.qemu) ? greeting.version.qemu : {};
    const version = {
      major: typeof v.major === 'number' ? v.major : 0,
      minor: typeof v.minor === 'number' ? v.minor : 0,
      micro: typeof v.micro === 'number' ? v.micro : 0,
    };
    const client = new QmpClient(socket, version, buffer, commandTimeoutMs);
    try {
      await client.execute('qmp_capabilities', undefined, {
        timeoutMs: Math.max(1000, deadline - Date.now()),
      });
    } catch (error) {
      client.close();
      throw error;
    }
    return client;
  }
}

function connectOnce(path: string, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection({ path });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new QmpConnectionError(`QMP: connect to ${path} timed out`));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    });
  });
}

/**
 * Connect to a QMP unix socket, read the greeting and negotiate capabilities.
 * Retries while the socket is missing or refuses (QEMU still starting) until `timeoutMs`.
 */
export async function connectQmp(
  path: string,
  options: QmpConnectOptions = {},
): Promise<QmpClient> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const retry = options.retry ?? true;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    let socket: net.Socket;
    try {
      socket = await connectOnce(path, Math.max(1, deadline - Date.now()));
    } catch (error) {
      lastError = error;
      const code = isRecord(error) ? error.code : undefined;
      const retriable = code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'EAGAIN';
      if (!retry || !retriable || options.signal?.aborted || Date.now() + RETRY_MS >= deadline) {
        throw new QmpConnectionError(
          `QMP: cannot connect to ${path}: ${error instanceof Error ? error.message : String(error)}`,
          { cause: lastError },
        );
      }
      await sleep(RETRY_MS);
      continue;
    }
    try {
      return await QmpClient.handshake(socket, deadline, options.commandTimeoutMs ?? 10_000);
    } catch (error) {
      socket.destroy();
      throw error;
    }
  }
}
