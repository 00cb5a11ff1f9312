/**
 * Desktops: the generic repository of the `desktops` table plus what differs for them: the wire
 * fields computed from other columns (viewers, ip, booking flags, the stock card), the per-user
 * list cache behind GET /user/desktops, and one socket event per write. Every change goes through
 * create()/update()/remove(): one statement that writes the row and bumps `version`, then one
 * publish on the event bus.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { and, eq, getTableColumns, inArray, ne, sql } from 'drizzle-orm';
import { globalPlugin } from '../../platform/lib/plugin.ts';
import { compressBody, type BodyEncoding } from '../../platform/http/compress.ts';
import { desktops, users, type DesktopInsert, type DesktopRow } from '../../platform/db/schema.ts';
import type { Desktop, Role } from '../../../../src/generated/types.ts';
import { desktopListReader, toWire } from './desktop-wire.ts';
import {
  entityRepository,
  type EntityRepository,
  type Executor,
} from '../../platform/repository/entity-repository.ts';
import {
  announceBastionTargetsRemoved,
  removingBastionTargets,
} from '../../platform/repository/desktop-bastion-targets.ts';

export { cardImageId, stockImageOf, toWire, type DesktopWireSource } from './desktop-wire.ts';

/** A desktop row with its owner's current role (what the ownership rules look at). */
export type OwnedDesktopRow = DesktopRow & { ownerRole: Role };

/**
 * A user's desktop list as it goes out: serialised once per version of the list, as UTF-8 bytes,
 * and compressed once per encoding a client asks for.
 */
export interface ListAnswer {
  /** The list as JSON text (schema Desktop[]). */
  json: string;
  /** The same text as UTF-8 bytes. */
  body: Buffer;
  /** The bytes compressed with `encoding`: computed on the first call, then the same buffer. */
  encoded(encoding: BodyEncoding): Promise<Buffer>;
}

export type DesktopPatch = Partial<
  Omit<DesktopInsert, 'id' | 'version' | 'createdAt' | 'updatedAt'>
>;

export interface DesktopsRepository {
  /** The generic table access (scoping, conditions); writes go through the methods below. */
  table: EntityRepository<'desktops'>;
  /**
   * The caller's desktops (deployment desktops only when visible), ordered by name then id; with
   * `limit`, only the first of them.
   */
  listForUser(userId: string, limit?: number): Promise<Desktop[]>;
  /**
   * The same list as it goes out (ListAnswer), cached per user and version of the user's list:
   * every write through this repository drops the user's entry at once on every node (the cluster
   * bus), and so does every desktop event on the event bus; what a node missed is read again after
   * LIST_CACHE_MS at most.
   */
  listAnswerForUser(userId: string): Promise<ListAnswer>;
  /** One desktop with its owner's current role (read in the same statement). */
  byId(id: string, on?: Executor): Promise<OwnedDesktopRow | undefined>;
  /** Rows in any of these states (the reconciler). */
  inStates(states: readonly string[]): Promise<DesktopRow[]>;
  /** The user's desktops of a type made from a template (temporary desktops). */
  fromTemplate(userId: string, type: Desktop['type'], templateId: string): Promise<DesktopRow[]>;
  /** True when the user has another desktop with this (trimmed) name. */
  nameTaken(userId: string, name: string, exceptId?: string, on?: Executor): Promise<boolean>;
  create(
    values: Omit<DesktopInsert, 'id' | 'version'> & { id?: string },
    on?: Executor,
  ): Promise<Desktop>;
  /**
   * Writes the patch, bumps version, publishes desktop_update. With `fromStates` the write only
   * happens while the current state is one of them (atomic compare-and-set). Undefined when the row
   * is gone or the condition did not hold.
   */
  update(
    id: string,
    patch: DesktopPatch,
    fromStates?: readonly string[],
  ): Promise<Desktop | undefined>;
  remove(id: string): Promise<boolean>;
  /**
   * For a row deleted inside a caller's own transaction (`table.remove(id, tx)`), once it has
   * committed: drops the owner's cached list and publishes the deletion.
   */
  announceRemoved(row: DesktopRow): void;
  /**
   * For rows written inside a caller's own transaction: drops the owner's cached list and publishes
   * the row as it is now. Undefined when the row does not exist.
   */
  publishCurrent(
    id: string,
    name: 'desktops.created' | 'desktops.updated',
  ): Promise<Desktop | undefined>;
}

declare module 'fastify' {
  interface FastifyInstance {
    desktops: DesktopsRepository;
  }
}

/** Upper bound for a list served from memory after a write whose notification a node missed. */
export const LIST_CACHE_MS = 1000;

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;
  // A desktop's bastion target leaves with it, carried on the removed row (and so into the bin).
  const table = removingBastionTargets(entityRepository(db, 'desktops'), db);
  const listCache = new Map<
    string,
    { answer: Promise<ListAnswer>; until: number; generation: number }
  >();
  const generations = new Map<string, number>();
  const invalidate = (userId: string) => {
    generations.set(userId, (generations.get(userId) ?? 0) + 1);
    listCache.delete(userId);
  };
  // Every node (this one included) drops the owner's cached list when a desktop is written.
  app.cluster.on('desktop.changed', ({ ownerId }) => invalidate(ownerId));
  app.cluster.on('resync', () => listCache.clear());
  const changed = (row: DesktopRow, change: 'created' | 'updated' | 'deleted') =>
    app.cluster.publish({
      kind: 'desktop.changed',
      id: row.id,
      ownerId: row.userId,
      change,
      state: row.state,
    });
  const listDesktops = desktopListReader(db);

  // The read of every desktop request, built once (outside a transaction).
  const byIdStatement = db
    .select({ row: getTableColumns(desktops), ownerRole: users.role })
    .from(desktops)
    .innerJoin(users, eq(users.id, desktops.userId))
    .where(eq(desktops.id, sql.placeholder('id')))
    .limit(1)
    .prepare('desktop_by_id_with_owner_role');

  const publish = (name: 'desktops.created' | 'desktops.updated', d: Desktop, ownerId: string) =>
    app.events.publish({ name, payload: d, ownerId });

  const repo: DesktopsRepository = {
    table,
    listForUser: listDesktops,
    listAnswerForUser(userId) {
      const now = Date.now();
      const hit = listCache.get(userId);
      if (hit && hit.until > now) return hit.answer;
      const generation = generations.get(userId) ?? 0;
      const answer = repo.listForUser(userId).then((list) => listAnswerOf(JSON.stringify(list)));
      if (listCache.size > 10_000) listCache.clear();
      const entry = { answer, until: now + LIST_CACHE_MS, generation };
      listCache.set(userId, entry);
      answer.then(
        () => {
          // a write during the load made this result stale: do not keep it
          if ((generations.get(userId) ?? 0) !== generation && listCache.get(userId) === entry)
            listCache.delete(userId);
        },
        () => {
          if (listCache.get(userId) === entry) listCache.delete(userId);
        },
      );
      return answer;
    },
    async byId(id, on = db) {
      const rows =
        on === db
          ? await byIdStatement.execute({ id })
          : await on
              .select({ row: getTableColumns(desktops), ownerRole: users.role })
              .from(desktops)
              .innerJoin(users, eq(users.id, desktops.userId))
              .where(eq(desktops.id, id))
              .limit(1);
      const found = rows[0];
      return found ? { ...found.row, ownerRole: found.ownerRole } : undefined;
    },
    inStates: (states) =>
      table.list({ where: inArray(desktops.state, [...states] as Desktop['state'][]) }),
    fromTemplate: (userId, type, templateId) =>
      table.list({
        where: and(
          eq(desktops.userId, userId),
          eq(desktops.type, type),
          eq(desktops.templateId, templateId),
        ),
      }),
    async nameTaken(userId, name, exceptId, on = db) {
      const rows = await table.list({
        where: and(
          eq(desktops.userId, userId),
          sql`trim(${desktops.name}) = ${name.trim()}`,
          exceptId ? ne(desktops.id, exceptId) : undefined,
        ),
        on,
      });
      return rows.length > 0;
    },
    async create(values, on) {
      const row = await table.create({ ...values, id: values.id ?? randomUUID() }, on);
      changed(row, 'created');
      const wire = toWire(row);
      publish('desktops.created', wire, row.userId);
      return wire;
    },
    async update(id, patch, fromStates) {
      const row = await table.update(id, patch, {
        condition: fromStates
          ? inArray(desktops.state, [...fromStates] as Desktop['state'][])
          : undefined,
        conditionKey: fromStates ? `state in ${[...fromStates].join(',')}` : '',
      });
      if (!row) return undefined;
      const hidden = row.tag !== null && !row.visible;
      changed(row, hidden ? 'deleted' : 'updated');
      const wire = toWire(row);
      if (hidden)
        app.events.publish({
          name: 'desktops.deleted',
          payload: { id, version: row.version },
          ownerId: row.userId,
        });
      else publish('desktops.updated', wire, row.userId);
      return wire;
    },
    async publishCurrent(id, name) {
      const row = await table.get(id);
      if (!row) return undefined;
      changed(row, name === 'desktops.created' ? 'created' : 'updated');
      const wire = toWire(row);
      publish(name, wire, row.userId);
      return wire;
    },
    async remove(id) {
      const row = await table.remove(id);
      if (!row) return false;
      repo.announceRemoved(row);
      return true;
    },
    announceRemoved(row) {
      changed(row, 'deleted');
      announceBastionTargetsRemoved(app, row);
      app.events.publish({
        name: 'desktops.deleted',
        payload: { id: row.id, version: row.version + 1 },
        ownerId: row.userId,
      });
    },
  };
  // Every desktop event drops the owner's list, also one whose write this repository did not make
  // (an event bus that carries other nodes' events brings theirs here).
  app.events.subscribe((event) => {
    if (event.name.startsWith('desktops.')) invalidate(event.ownerId);
  });
  app.decorate('desktops', repo);
};

/** The list's JSON text with its bytes, and each compressed form made once, when first asked. */
function listAnswerOf(json: string): ListAnswer {
  const body = Buffer.from(json, 'utf8');
  const encoded = new Map<BodyEncoding, Promise<Buffer>>();
  return {
    json,
    body,
    encoded(encoding) {
      let bytes = encoded.get(encoding);
      if (!bytes) {
        const made = compressBody(body, encoding);
        encoded.set(encoding, made);
        // a failed compression is tried again by the next request
        made.catch(() => encoded.delete(encoding));
        bytes = made;
      }
      return bytes;
    },
  };
}

export default globalPlugin(plugin, 'desktops-repository');
