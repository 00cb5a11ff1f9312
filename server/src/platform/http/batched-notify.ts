/**
 * NOTIFYs sent in batches: each `SELECT pg_notify($1, $2)` asked while one is on its way waits and
 * goes with the others asked meanwhile, in one statement (one transaction: PostgreSQL delivers its
 * notifications in order, after the earlier ones). Under a burst a node then sends one NOTIFY
 * statement per round trip instead of one per event.
 *
 * A batch's messages of one channel also travel packed, several to a notification (under
 * PostgreSQL's 8,000-byte limit): the sending process's mark on the first line, then one message a
 * line (JSON has no raw line break). The listening connection handed out by the pool unpacks them
 * into one notification each before the adapter sees them, and drops whole the ones this process
 * sent (the adapter would parse each only to skip it). Each message of a batch gets a sequence
 * number (`"n"`, a JSON field the receivers ignore), as PostgreSQL delivers identical
 * notifications of one transaction only once.
 *
 * `batchNotifies(pool)` answers a pool for the socket.io PostgreSQL adapter: its NOTIFYs are
 * batched and packed, its connections unpack, every other query is the pool's own.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** The statement the adapter sends each message with. */
const NOTIFY = 'SELECT pg_notify($1, $2)';
const NOTIFY_MANY = 'SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS t(c, p)';
/** Messages sent in one statement at most. */
const MAX_BATCH = 500;
/** Bytes of one packed notification at most (PostgreSQL refuses 8,000 or more). */
const MAX_PACKED_BYTES = 7_900;
/** The first character of a packed notification (a JSON message starts with `{`). */
const PACKED = '~';

/**
 * Packs the messages of one channel into as few payloads as fit: `~mark` then one message a line.
 * A message too long to share a notification with the mark goes alone, as it was.
 */
export function packPayloads(mark: string, payloads: readonly string[]): string[] {
  const head = `${PACKED}${mark}`;
  const out: string[] = [];
  let current = head;
  let bytes = Buffer.byteLength(head);
  for (const payload of payloads) {
    const size = Buffer.byteLength(payload) + 1;
    if (Buffer.byteLength(head) + size > MAX_PACKED_BYTES) {
      out.push(payload);
      continue;
    }
    if (bytes + size > MAX_PACKED_BYTES) {
      out.push(current);
      current = head;
      bytes = Buffer.byteLength(head);
    }
    current += `\n${payload}`;
    bytes += size;
  }
  if (current !== head) out.push(current);
  return out;
}

/**
 * The messages of a notification: a packed one's lines, none when `mark` (this process) sent it,
 * any other payload as it is.
 */
export function unpackPayload(mark: string, payload: string): string[] {
  if (!payload.startsWith(PACKED)) return [payload];
  const lines = payload.split('\n');
  return lines[0] === `${PACKED}${mark}` ? [] : lines.slice(1);
}

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
  /** this process's mark on its packed notifications */
  const mark = randomBytes(8).toString('hex');
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
      // By channel, in the order asked; PostgreSQL keeps a transaction's notifications in order.
      const byChannel = new Map<string, string[]>();
      for (const { channel, payload } of batch) {
        const list = byChannel.get(channel) ?? [];
        list.push(payload.startsWith('{"') ? `{"n":${seq++},${payload.slice(1)}` : payload);
        byChannel.set(channel, list);
      }
      const channels: string[] = [];
      const payloads: string[] = [];
      for (const [channel, list] of byChannel)
        for (const packed of packPayloads(mark, list)) {
          channels.push(channel);
          payloads.push(packed);
        }
      try {
        await pool.query(NOTIFY_MANY, [channels, payloads]);
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

  // A connection of this pool hands its listeners one notification per message, and none of the
  // ones this process sent.
  const unpacking = (client: pg.PoolClient): pg.PoolClient => {
    const emit = client.emit.bind(client);
    client.emit = (event: string | symbol, ...args: unknown[]): boolean => {
      const notification = args[0] as pg.Notification | undefined;
      if (event !== 'notification' || typeof notification?.payload !== 'string')
        return emit(event, ...args);
      for (const payload of unpackPayload(mark, notification.payload))
        emit(event, { ...notification, payload });
      return true;
    };
    return client;
  };
  const connect = async () => unpacking(await pool.connect());

  const proxy = new Proxy(pool, {
    get(target, key) {
      if (key === 'query') return query;
      if (key === 'connect') return connect;
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
