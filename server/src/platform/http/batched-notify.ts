/**
 * NOTIFYs sent in batches: each `SELECT pg_notify($1, $2)` asked while one is on its way waits and
 * goes with the others asked meanwhile, in one statement (one transaction: PostgreSQL delivers its
 * notifications in order, after the earlier ones). Under a burst a node then sends one NOTIFY
 * statement per round trip instead of one per event, and the listeners are woken once per batch.
 * Each payload of a batch gets a sequence number (`"n"`, a JSON field the receivers ignore), as
 * PostgreSQL delivers identical notifications of one transaction only once.
 *
 * `batchNotifies(pool)` answers a pool for the socket.io PostgreSQL adapter: its NOTIFYs are
 * batched, every other query and connection is the pool's own.
 */
import type pg from 'pg';

/** The statement the adapter sends each message with. */
const NOTIFY = 'SELECT pg_notify($1, $2)';
const NOTIFY_MANY = 'SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS t(c, p)';
/** Notifications sent in one statement at most. */
const MAX_BATCH = 500;

interface Pending {
  channel: string;
  payload: string;
  done: (err?: unknown) => void;
}

export interface BatchedNotifies {
  /** The pool to hand the adapter. */
  pool: pg.Pool;
  /** Resolves once every NOTIFY asked before the call was sent. */
  flushed(): Promise<void>;
}

export function batchNotifies(pool: pg.Pool): BatchedNotifies {
  const queue: Pending[] = [];
  let sending = false;
  let seq = 0;
  let asked = 0;
  let sent = 0;
  const waiters: { upTo: number; resolve: () => void }[] = [];

  const settle = () => {
    for (let i = waiters.length - 1; i >= 0; i--) {
      const waiter = waiters[i];
      if (waiter && waiter.upTo <= sent) {
        waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  };

  const send = async () => {
    if (sending) return;
    sending = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, MAX_BATCH);
      const payloads = batch.map(({ payload }) =>
        payload.startsWith('{"') ? `{"n":${seq++},${payload.slice(1)}` : payload,
      );
      try {
        await pool.query(NOTIFY_MANY, [batch.map(({ channel }) => channel), payloads]);
        for (const item of batch) item.done();
      } catch (err) {
        for (const item of batch) item.done(err);
      }
      sent += batch.length;
      settle();
    }
    sending = false;
  };

  const query = (text: unknown, params?: unknown) => {
    if (text !== NOTIFY || !Array.isArray(params))
      return (pool.query as (...args: unknown[]) => Promise<unknown>)(text, params);
    asked += 1;
    return new Promise<void>((resolve, reject) => {
      queue.push({
        channel: String(params[0]),
        payload: String(params[1]),
        done: (err) => (err === undefined ? resolve() : reject(err as Error)),
      });
      void send();
    });
  };

  const proxy = new Proxy(pool, {
    get(target, key) {
      if (key === 'query') return query;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function'
        ? (value as (...args: unknown[]) => unknown).bind(target)
        : value;
    },
  });
  return {
    pool: proxy,
    flushed: () =>
      sent >= asked
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ upTo: asked, resolve })),
  };
}
