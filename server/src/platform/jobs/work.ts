/**
 * Background work that runs once across the portal nodes sharing one database, through leases
 * and a job queue in PostgreSQL (leases.ts, job-queue.ts):
 *
 * - the **leader**: one process holds the `leader` lease at a time; periodic work that must run
 *   once (the recycle-bin purge, the reconciler's share of rows no live node owns) runs on it;
 * - **node liveness**: each process holds `node:<NODE_NAME>` while it runs, so the others know
 *   which nodes are alive (what a dead node ran is taken over);
 * - **exclusive work** (`exclusive`): a piece of work under a named lease (one desktop's disk
 *   being made), skipped when another process has it;
 * - **jobs** (`enqueue` / `handle`): work that must survive the process that started it (making
 *   a deployment's disks, starting its desktops): a row claimed by one process, renewed while it
 *   runs, taken over by another process once its lease expires.
 *
 * Every lease is renewed at each beat (a third of the lease): a process killed in the middle of a
 * job leaves it to another within one lease and one beat. A job handler stops at its signal
 * (the process is closing, or its lease was taken over) and is written idempotently: a job taken
 * over is run again from the database's state, never from the first run's memory. On the
 * embedded PGlite the one process holds every lease.
 */
import { randomBytes } from 'node:crypto';
import type { Database } from '../db/client.ts';
import { createLeases } from './leases.ts';
import { jobStatements, type JobRow } from './job-queue.ts';

/** The lease a node holds while it runs. */
export const NODE_LEASE_PREFIX = 'node:';
export const LEADER_LEASE = 'leader';
/** A failed job is tried this many times in all (then dropped, with an error in the log). */
const MAX_ATTEMPTS = 5;
/** How long a failed job waits before it is tried again, times its attempts. */
const RETRY_MS = 2_000;
/** How long a closing process waits for its running jobs to stop. */
const STOP_WAIT_MS = 10_000;

export interface Job extends JobRow {
  /** Aborted when the job must stop: the process closes, or another process took the job over. */
  signal: AbortSignal;
}

export type JobHandler = (job: Job) => Promise<void>;

/** A lease this process holds until it releases it. */
export interface Held {
  signal: AbortSignal;
  /** Gives the lease back (once). */
  release(): Promise<void>;
}

export interface WorkLog {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface WorkOptions {
  nodeName: string;
  /** how long a lease lasts without renewal (ms); renewed every third of it */
  leaseMs: number;
  log: WorkLog;
}

export interface Work {
  /** This process (node name and a random part): the holder of its leases. */
  readonly holder: string;
  readonly nodeName: string;
  readonly leaseMs: number;
  /** This process holds the leader lease (as of its last beat). */
  readonly isLeader: boolean;
  /** Runs the jobs of `kind` here, at most `concurrency` at once. Call before start(). */
  handle(kind: string, handler: JobHandler, options?: { concurrency?: number }): void;
  /**
   * Adds a job (none when one with this key is waiting or running) and, when this process runs
   * that kind and has room, claims it at once; `finished` resolves when it ended here (at once
   * when another process runs it).
   */
  enqueue(
    kind: string,
    key: string,
    payload?: Record<string, unknown>,
  ): Promise<{ finished: Promise<void> }>;
  /**
   * Takes the lease `name` until `release()` (renewed meanwhile; its signal aborts when it is
   * lost); undefined when another process (or call) has it.
   */
  hold(name: string): Promise<Held | undefined>;
  /** Runs `fn` under the lease `name`; answers `ran: false` when another process (or call) has it. */
  exclusive<T>(
    name: string,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<{ ran: true; value: T } | { ran: false }>;
  /** The names of the nodes alive now (this one included). */
  liveNodes(): Promise<Set<string>>;
  /** The leases held now (by any process) whose name starts with `prefix`. */
  liveLeases(prefix: string): Promise<Set<string>>;
  /** Adds work done at every beat (renewing other rows this process holds). */
  onBeat(fn: (holder: string) => Promise<void>): void;
  /** The first beat, then one every third of the lease. */
  start(): Promise<void>;
  /** One beat now: leases renewed, leader taken when free, free jobs claimed. */
  beat(): Promise<void>;
  /** Resolves once the jobs running here have ended. */
  idle(): Promise<void>;
  /** Closing: running jobs stop and are given back, the leases released. */
  stop(): Promise<void>;
  /** As a killed process: everything stops here and nothing more is written (tests). */
  halt(): void;
}

interface Running {
  controller: AbortController;
  done: Promise<void>;
}

export function createWork(query: Database['query'], options: WorkOptions): Work {
  const { nodeName, leaseMs, log } = options;
  const holder = `${nodeName}#${randomBytes(6).toString('hex')}`;
  const leases = createLeases(query, holder);
  const jobs = jobStatements(query, holder);
  const nodeLease = `${NODE_LEASE_PREFIX}${nodeName}`;
  const handlers = new Map<string, { handler: JobHandler; concurrency: number }>();
  const running = new Map<string, Running & { kind: string }>();
  const held = new Map<string, AbortController>();
  /** Leases being taken now (not renewed before they are held). */
  const taking = new Set<string>();
  const beatHooks: ((holder: string) => Promise<void>)[] = [];
  let leader = false;
  let stopped = false;
  let halted = false;
  let timer: NodeJS.Timeout | undefined;
  let beating: Promise<void> | undefined;
  let polling = false;
  let pollAgain = false;
  let warnedName = false;

  const spare = (kind: string) => {
    const entry = handlers.get(kind);
    if (!entry) return 0;
    let busy = 0;
    for (const r of running.values()) if (r.kind === kind) busy++;
    return Math.max(0, entry.concurrency - busy);
  };

  /** A job whose lease was not renewed in time: what it left undone waits for its next claim. */
  const lostJob = (row: JobRow) =>
    log.warn({ job: row.key, attempts: row.attempts }, 'job lease lost; left to its next claim');

  const run = (row: JobRow): Promise<void> => {
    const entry = handlers.get(row.kind);
    if (!entry) return Promise.resolve();
    const controller = new AbortController();
    const done = (async () => {
      try {
        await entry.handler({ ...row, signal: controller.signal });
        if (halted) return;
        // Stopped under way (closing): given back, to be run again from the database's state.
        if (controller.signal.aborted) {
          if (stopped) await jobs.giveBack(row.id, 0);
          else lostJob(row);
        } else await jobs.done(row.id);
      } catch (err) {
        if (halted) return;
        if (controller.signal.aborted) {
          if (stopped) await jobs.giveBack(row.id, 0);
          else lostJob(row);
          return;
        }
        if (row.attempts >= MAX_ATTEMPTS) {
          log.error({ err, job: row.key, attempts: row.attempts }, 'job failed; dropped');
          await jobs.done(row.id);
        } else {
          log.warn({ err, job: row.key, attempts: row.attempts }, 'job failed; tried again');
          await jobs.giveBack(row.id, RETRY_MS * row.attempts);
        }
      }
    })()
      .catch((err: unknown) => {
        if (!halted) log.warn({ err, job: row.key }, 'job state not stored');
      })
      .finally(() => {
        running.delete(row.id);
        if (!stopped) kick();
      });
    running.set(row.id, { kind: row.kind, controller, done });
    return done;
  };

  const poll = async () => {
    if (polling) {
      pollAgain = true;
      return;
    }
    polling = true;
    try {
      do {
        pollAgain = false;
        for (const kind of handlers.keys()) {
          if (stopped) return;
          const room = spare(kind);
          if (room === 0) continue;
          for (const row of await jobs.claim(kind, room, leaseMs)) {
            if (stopped) {
              if (!halted) await jobs.giveBack(row.id, 0);
            } else void run(row);
          }
        }
      } while (pollAgain && !stopped);
    } finally {
      polling = false;
    }
  };

  const kick = () => {
    if (stopped) return;
    setImmediate(() => {
      poll().catch((err: unknown) => log.warn({ err }, 'job claim failed'));
    });
  };

  const beatNow = async () => {
    if (stopped) return;
    try {
      const named = await leases.take(nodeLease, leaseMs);
      if (!named && !warnedName) {
        warnedName = true;
        log.warn({ node: nodeName }, 'another running process has this NODE_NAME');
      }
      leader = !stopped && (await leases.take(LEADER_LEASE, leaseMs));
    } catch (err) {
      leader = false;
      log.warn({ err }, 'lease renewal failed');
      return;
    }
    if (stopped) return;
    // Only what was held when the renewal was asked is lost when it is not renewed: a lease or a
    // job taken while the renewal ran is not in its answer (such a job, marked lost, finished
    // without being recorded done, and stayed in the queue until its lease ran out).
    const asked = [...held.keys()];
    const kept = await leases.renew(asked, leaseMs);
    for (const name of asked) if (!kept.has(name)) held.get(name)?.abort('lost');
    const renewing = [...running.keys()];
    const still = await jobs.renew(renewing, leaseMs);
    for (const id of renewing) if (!still.has(id)) running.get(id)?.controller.abort('lost');
    for (const hook of beatHooks) await hook(holder);
    await poll();
  };

  const beat = async () => {
    if (beating) return beating;
    beating = beatNow()
      .catch((err: unknown) => {
        if (!halted) log.warn({ err }, 'work beat failed');
      })
      .finally(() => {
        beating = undefined;
      });
    return beating;
  };

  const abortAll = (reason: string) => {
    for (const r of running.values()) r.controller.abort(reason);
    for (const c of held.values()) c.abort(reason);
  };

  const hold = async (name: string): Promise<Held | undefined> => {
    if (held.has(name) || taking.has(name) || stopped) return undefined;
    // Reserved before the database answers: a second call of this process is refused too.
    taking.add(name);
    let taken: boolean;
    try {
      taken = await leases.take(name, leaseMs);
    } finally {
      taking.delete(name);
    }
    if (!taken) return undefined;
    const controller = new AbortController();
    held.set(name, controller);
    let released = false;
    return {
      signal: controller.signal,
      async release() {
        if (released) return;
        released = true;
        if (held.get(name) === controller) held.delete(name);
        if (!halted)
          await leases
            .release(name)
            .catch((err: unknown) => log.warn({ err, lease: name }, 'lease not released'));
      },
    };
  };

  return {
    holder,
    nodeName,
    leaseMs,
    get isLeader() {
      return leader && !stopped;
    },
    handle(kind, handler, { concurrency = 1 } = {}) {
      handlers.set(kind, { handler, concurrency });
    },
    async enqueue(kind, key, payload = {}) {
      const id = await jobs.add(kind, key, payload);
      if (id === undefined || stopped || spare(kind) === 0) return { finished: Promise.resolve() };
      const row = await jobs.claimId(id, leaseMs);
      if (row && stopped) {
        if (!halted) await jobs.giveBack(row.id, 0);
        return { finished: Promise.resolve() };
      }
      return { finished: row ? run(row) : Promise.resolve() };
    },
    hold,
    async exclusive(name, fn) {
      const lease = await hold(name);
      if (!lease) return { ran: false };
      try {
        return { ran: true, value: await fn(lease.signal) };
      } finally {
        await lease.release();
      }
    },
    async liveNodes() {
      const live = await leases.live(NODE_LEASE_PREFIX);
      return new Set([...live.keys()].map((name) => name.slice(NODE_LEASE_PREFIX.length)));
    },
    async liveLeases(prefix) {
      return new Set((await leases.live(prefix)).keys());
    },
    onBeat(fn) {
      beatHooks.push(fn);
    },
    async start() {
      await beat();
      if (stopped) return;
      timer = setInterval(() => void beat(), Math.max(10, Math.floor(leaseMs / 3)));
      timer.unref();
    },
    beat,
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running.values()].map((r) => r.done));
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      abortAll('stop');
      await beating;
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref());
      await Promise.race([Promise.allSettled([...running.values()].map((r) => r.done)), deadline]);
      if (halted) return;
      leader = false;
      for (const name of [LEADER_LEASE, nodeLease])
        await leases.release(name).catch(() => undefined);
    },
    halt() {
      halted = true;
      stopped = true;
      leader = false;
      clearInterval(timer);
      abortAll('halt');
    },
  };
}
