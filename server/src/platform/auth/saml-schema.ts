/**
 * The schema check of every SAML message samlify parses: xmllint compiled to WebAssembly checks it
 * against the SAML 2.0 protocol schema (and the assertion, XML signature and XML encryption
 * schemas it imports) in one long-lived worker thread (saml-schema-worker.mjs).
 *
 * - The thread starts at the first message, not at boot, and is reused for every message: the
 *   WebAssembly compile and the schema files are paid once.
 * - A message is valid only when xmllint says so (exit code 0); anything else refuses it.
 * - One message is checked at a time; at most MAX_WAITING wait behind it, a further one is refused
 *   at once (SchemaValidatorUnavailableError) rather than queued without end.
 * - A check that takes longer than its timeout ends the thread (it cannot be interrupted
 *   otherwise) and is refused; a thread that dies refuses its message. Either way the next
 *   message starts a new thread.
 * - The thread keeps the process alive only while it has work; `close` waits for the work under
 *   way and ends it (the app does so when it closes).
 */
import { Worker } from 'node:worker_threads';

/**
 * Messages waiting behind the one being checked: a class signing in at once waits a few seconds at
 * most (a check takes some 25 ms), while a flood is refused rather than held in memory.
 */
export const MAX_WAITING = 256;
/** How long one check may take, from when the thread gets it. */
export const CHECK_TIMEOUT_MS = 10_000;

/** The check could not run (busy, timed out, thread died): the message is refused all the same. */
export class SchemaValidatorUnavailableError extends Error {}

/** The message does not follow the SAML schemas. */
export class SchemaInvalidError extends Error {}

interface Job {
  id: number;
  xml: string;
  resolve: (valid: true) => void;
  reject: (error: Error) => void;
}

interface WorkerAnswer {
  id: number;
  exitCode?: number;
  output?: string;
  failed?: string;
}

const WORKER_URL = new URL('./saml-schema-worker.mjs', import.meta.url);

export interface SchemaValidatorOptions {
  timeoutMs?: number;
  maxWaiting?: number;
}

export class SamlSchemaValidator {
  private worker: Worker | null = null;
  private current: Job | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly waiting: Job[] = [];
  private nextId = 1;
  private idle: (() => void)[] = [];

  /** How long one check may take, from when the thread gets it. */
  timeoutMs: number;
  private readonly maxWaiting: number;

  constructor(options: SchemaValidatorOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? CHECK_TIMEOUT_MS;
    this.maxWaiting = options.maxWaiting ?? MAX_WAITING;
  }

  /** samlify's validator: resolves when the message is valid, rejects otherwise. */
  readonly validate = (xml: string): Promise<true> =>
    new Promise<true>((resolve, reject) => {
      if (this.waiting.length >= this.maxWaiting) {
        reject(new SchemaValidatorUnavailableError('the SAML schema validator is busy'));
        return;
      }
      this.waiting.push({ id: this.nextId++, xml, resolve, reject });
      this.pump();
    });

  /** Threads started so far, and whether one runs now (for the tests). */
  threadsStarted = 0;
  get running(): boolean {
    return this.worker !== null;
  }

  /** Waits for the messages under way, then ends the thread. */
  async close(): Promise<void> {
    if (this.current || this.waiting.length > 0)
      await new Promise<void>((resolve) => this.idle.push(resolve));
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }

  private start(): Worker {
    const worker = new Worker(WORKER_URL);
    this.threadsStarted += 1;
    worker.on('message', (answer: WorkerAnswer) => this.answered(worker, answer));
    worker.on('error', (error) => this.died(worker, error.message));
    worker.on('exit', (code) => this.died(worker, `exited with code ${code}`));
    return worker;
  }

  private pump(): void {
    if (this.current) return;
    const job = this.waiting.shift();
    if (!job) {
      this.worker?.unref();
      for (const resolve of this.idle.splice(0)) resolve();
      return;
    }
    this.worker ??= this.start();
    this.worker.ref();
    this.current = job;
    const worker = this.worker;
    this.timer = setTimeout(() => {
      this.discard(worker);
      this.settle(new SchemaValidatorUnavailableError('the SAML schema check timed out'));
    }, this.timeoutMs);
    worker.postMessage({ id: job.id, xml: job.xml });
  }

  /** Ends the current check with its outcome and starts the next one. */
  private settle(outcome: true | Error): void {
    const job = this.current;
    if (!job) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.current = null;
    if (outcome === true) job.resolve(true);
    else job.reject(outcome);
    this.pump();
  }

  private answered(worker: Worker, answer: WorkerAnswer): void {
    if (worker !== this.worker || answer.id !== this.current?.id) return;
    if (answer.failed !== undefined) {
      this.discard(worker);
      this.settle(new SchemaValidatorUnavailableError(`xmllint failed: ${answer.failed}`));
    } else if (answer.exitCode === 0) this.settle(true);
    else
      this.settle(
        new SchemaInvalidError(
          `the message does not follow the SAML schemas: ${(answer.output ?? '').trim().slice(0, 500)}`,
        ),
      );
  }

  /** A thread that errs or exits is done: its check is refused, the next message gets a new one. */
  private died(worker: Worker, reason: string): void {
    if (worker !== this.worker) return;
    this.worker = null;
    this.settle(new SchemaValidatorUnavailableError(`the SAML schema validator ${reason}`));
  }

  /** Ends a thread that can no longer be trusted with work (the next message starts another). */
  private discard(worker: Worker): void {
    if (worker === this.worker) this.worker = null;
    void worker.terminate();
  }
}

/** The process's validator, given to samlify (its validator is one for the whole process). */
export const samlSchemaValidator = new SamlSchemaValidator();
