/**
 * The cluster bus: the changes every node must apply to what it holds in memory (sessions ended,
 * a user changed, a desktop changed, the role-visibility config or the portal settings changed).
 * `publish` applies a message on this node at once (its handlers run synchronously, in the order
 * they were added) and, on PostgreSQL, sends it to every other node with NOTIFY on the
 * CLUSTER_CHANNEL (the messages published while a send is on its way go together in the next),
 * where the same handlers run: one code path on every node, the one that made
 * the change included. Messages sent together share notifications, as many to one as fit. A node hears the channel through one dedicated connection of its own,
 * which also sends its messages (so they arrive in the order they were published), reconnected
 * when it is lost; after a reconnection the `resync` handlers run (what was notified
 * meanwhile is lost: caches are dropped and configs read again). The embedded PGlite serves one
 * node: messages stay in this process.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import type pg from 'pg';
import { globalPlugin } from '../lib/plugin.ts';
import type { Database } from '../db/client.ts';
import type { NetworkDef } from '../hypervisor/network-defs.ts';

export const CLUSTER_CHANNEL = 'vdi_cluster';
/** NOTIFY refuses payloads of 8,000 bytes or more: session ids travel in chunks of this many. */
const IDS_PER_MESSAGE = 100;
/** Messages sent in one statement at most. */
const MESSAGES_PER_SEND = 200;
/** Delay before the listening connection is opened again, doubled up to RECONNECT_MAX_MS. */
const RECONNECT_MIN_MS = 250;
const RECONNECT_MAX_MS = 5_000;

export type ClusterMessage =
  /** sessions revoked (logout, revocation, user disabled): their sockets and consoles close */
  | { kind: 'sessions.revoked'; ids: string[] }
  /**
   * a user's account changed in what a session carries (disabled, deleted, role or group): cached
   * sessions are read again, the user's sockets reconnect, the user's consoles are checked again
   */
  | { kind: 'user.changed'; userId: string }
  /** a user's WireGuard keys or address changed: the VPN endpoint's peers follow */
  | { kind: 'vpn.changed'; userId: string }
  /** a desktop was written (created, updated, deleted or hidden): caches and consoles follow */
  | {
      kind: 'desktop.changed';
      id: string;
      ownerId: string;
      change: 'created' | 'updated' | 'deleted';
      state: string;
    }
  /**
   * an admin made, changed or removed a desktop network through node `node`, which brought its own
   * host in step before answering: the other nodes' hosts follow
   */
  | { kind: 'network.changed'; node: string; before: NetworkDef | null; after: NetworkDef | null }
  /** the role-visibility config was saved: every node reads the running copy again */
  | { kind: 'role-visibility.changed' }
  /** portal settings were written: every node reads them again */
  | { kind: 'settings.changed' }
  /** a token signing key was added: every node reads the keys again (the newest signs) */
  | { kind: 'signing-keys.changed' }
  /** this node missed notifications (its listening connection was lost): drop what may be stale */
  | { kind: 'resync' };

export type ClusterKind = ClusterMessage['kind'];
type Handler<K extends ClusterKind> = (
  message: Extract<ClusterMessage, { kind: K }>,
) => void | Promise<void>;

export interface ClusterBus {
  /** This node's name (NODE_NAME, else host name and port). */
  readonly nodeName: string;
  /** True once this node hears the other nodes (always true on the embedded database). */
  readonly listening: boolean;
  /** Applies the message on this node now and sends it to every other node. */
  publish(message: ClusterMessage): void;
  /** Adds a handler of one kind of message (a throwing or rejecting handler is logged). */
  on<K extends ClusterKind>(kind: K, handler: Handler<K>): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    cluster: ClusterBus;
  }
}

interface Envelope {
  /** the sending process (a node hears its own notifications and skips them unread) */
  from: string;
  /** its place among the envelopes sent together */
  n?: number;
  /** the messages, in the order they were published */
  messages?: ClusterMessage[];
  /** one message (what a node of an earlier version sends) */
  message?: ClusterMessage;
}

/** Bytes of one notification at most (PostgreSQL refuses 8,000 or more). */
const MAX_ENVELOPE_BYTES = 7_900;

/** The start of every envelope `from` sends: what its own listener skips without parsing. */
const envelopeHead = (from: string) => `{"from":${JSON.stringify(from)},"n":`;

/** The envelopes of `messages`: as many messages to one as fit in a notification, in order. */
export function envelopesOf(messages: readonly ClusterMessage[], from: string): string[] {
  const head = envelopeHead(from);
  const out: string[] = [];
  let batch: string[] = [];
  let bytes = 0;
  const close = () => {
    if (batch.length === 0) return;
    out.push(`${head}${out.length},"messages":[${batch.join(',')}]}`);
    batch = [];
    bytes = 0;
  };
  for (const message of messages) {
    const text = JSON.stringify(message);
    const size = Buffer.byteLength(text) + 1;
    if (bytes + size + head.length + 32 > MAX_ENVELOPE_BYTES) close();
    batch.push(text);
    bytes += size;
  }
  close();
  return out;
}

/** The messages to send for one published message (session ids split to fit one NOTIFY each). */
export function splitMessage(message: ClusterMessage): ClusterMessage[] {
  if (message.kind !== 'sessions.revoked' || message.ids.length <= IDS_PER_MESSAGE)
    return [message];
  const parts: ClusterMessage[] = [];
  for (let i = 0; i < message.ids.length; i += IDS_PER_MESSAGE)
    parts.push({ kind: 'sessions.revoked', ids: message.ids.slice(i, i + IDS_PER_MESSAGE) });
  return parts;
}

/**
 * Sends a message to every node listening on this database, from `from` (a node's process, or
 * the admin command line); the embedded database has no other node to tell.
 */
export async function notifyNodes(
  database: Pick<Database, 'kind' | 'query'>,
  messages: ClusterMessage | readonly ClusterMessage[],
  from: string,
): Promise<void> {
  if (database.kind !== 'postgres') return;
  const parts = (Array.isArray(messages) ? messages : [messages]).flatMap(splitMessage);
  // One statement, one transaction: the notifications arrive in this order. Each envelope has a
  // number of its own: PostgreSQL delivers identical notifications of one transaction once.
  await database.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
    CLUSTER_CHANNEL,
    envelopesOf(parts, from),
  ]);
}

const queryOn =
  (client: pg.Client): Database['query'] =>
  async <T>(text: string, params?: unknown[]) =>
    (await client.query(text, params)).rows as T[];

const plugin: FastifyPluginAsync = async (app) => {
  const { config } = app;
  const processId = `${config.nodeName}#${randomBytes(6).toString('hex')}`;
  const handlers = new Map<ClusterKind, ((message: ClusterMessage) => void | Promise<void>)[]>();
  const remote = app.database.kind === 'postgres' && config.databaseUrl !== undefined;
  let listening = !remote;
  let client: pg.Client | undefined;

  const deliver = (message: ClusterMessage) => {
    for (const handler of handlers.get(message.kind) ?? []) {
      try {
        const result = handler(message);
        if (result instanceof Promise)
          result.catch((err: unknown) =>
            app.log.warn({ err, kind: message.kind }, 'cluster message handler failed'),
          );
      } catch (err) {
        app.log.warn({ err, kind: message.kind }, 'cluster message handler failed');
      }
    }
  };

  // Sent on the listening connection while it is up: one connection sends in the order of the
  // publishes, and the pool's connections stay for requests. The pool while it reconnects. The
  // messages published while a send is on its way go together in the next one.
  const queue: ClusterMessage[] = [];
  let sending = false;
  const sendQueued = async () => {
    if (sending) return;
    sending = true;
    while (queue.length > 0) {
      const batch = queue.splice(0, MESSAGES_PER_SEND);
      const viaPool = () => notifyNodes(app.database, batch, processId);
      await (
        client
          ? notifyNodes({ kind: app.database.kind, query: queryOn(client) }, batch, processId)
              // The listening connection lost under the send: once more through the pool (the
              // handlers take a message twice as once).
              .catch(viaPool)
          : viaPool()
      ).catch((err: unknown) =>
        app.log.warn(
          { err, kinds: [...new Set(batch.map((m) => m.kind))] },
          'cluster messages not sent to the other nodes',
        ),
      );
    }
    sending = false;
  };
  const send = (message: ClusterMessage) => {
    queue.push(message);
    void sendQueued();
  };

  app.decorate('cluster', {
    nodeName: config.nodeName,
    get listening() {
      return listening;
    },
    publish(message) {
      deliver(message);
      if (remote) send(message);
    },
    on(kind, handler) {
      const list = handlers.get(kind) ?? [];
      // Delivered only messages of this kind (handlers are kept by kind).
      list.push((message) => handler(message as Extract<ClusterMessage, { kind: typeof kind }>));
      handlers.set(kind, list);
    },
  } satisfies ClusterBus);

  if (!remote || !config.databaseUrl) return;
  const url = config.databaseUrl;
  // The PostgreSQL client is loaded only by a node on PostgreSQL (the embedded database needs none).
  const { Client } = (await import('pg')).default;
  let closing = false;
  let everConnected = false;
  let delay = RECONNECT_MIN_MS;
  let timer: NodeJS.Timeout | undefined;

  const ownHead = envelopeHead(processId);
  const onNotification = (n: pg.Notification) => {
    if (n.channel !== CLUSTER_CHANNEL || !n.payload || n.payload.startsWith(ownHead)) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(n.payload) as Envelope;
    } catch {
      return;
    }
    if (envelope.from === processId) return;
    for (const message of envelope.messages ?? (envelope.message ? [envelope.message] : []))
      if (typeof message?.kind === 'string') deliver(message);
  };

  const schedule = () => {
    if (closing || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, RECONNECT_MAX_MS);
  };

  const connect = async (): Promise<void> => {
    const next = new Client({ connectionString: url, keepAlive: true });
    const lost = (err?: Error) => {
      if (client !== next && client !== undefined) return;
      client = undefined;
      if (listening && !closing) app.log.warn({ err }, 'cluster bus connection lost; reconnecting');
      listening = false;
      next.removeAllListeners('notification');
      void next.end().catch(() => undefined);
      schedule();
    };
    next.on('error', lost);
    next.on('end', () => lost());
    next.on('notification', onNotification);
    try {
      await next.connect();
      await next.query(`LISTEN ${CLUSTER_CHANNEL}`);
    } catch (err) {
      next.removeAllListeners();
      next.on('error', () => undefined);
      void next.end().catch(() => undefined);
      app.log.warn({ err }, 'cluster bus could not listen; retrying');
      schedule();
      return;
    }
    if (closing) {
      void next.end().catch(() => undefined);
      return;
    }
    client = next;
    listening = true;
    delay = RECONNECT_MIN_MS;
    if (everConnected) deliver({ kind: 'resync' });
    everConnected = true;
  };

  await connect();
  app.addHook('onClose', async () => {
    closing = true;
    clearTimeout(timer);
    const open = client;
    client = undefined;
    listening = false;
    if (open) {
      open.removeAllListeners('end');
      await open.end().catch(() => undefined);
    }
  });
};

export default globalPlugin(plugin, 'cluster-bus');
