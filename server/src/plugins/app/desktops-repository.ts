/**
 * Desktops. Every change goes through update()/create()/remove(): one statement that writes the row
 * and bumps `version`, then one publish on the event bus. The list query for GET /user/desktops is a
 * prepared statement on the (user_id, name) index.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyPluginAsync } from 'fastify';
import { and, asc, eq, inArray, or, isNull, sql } from 'drizzle-orm';
import { globalPlugin } from '../../lib/plugin.ts';
import { desktops, type DesktopInsert, type DesktopRow } from '../../db/schema.ts';
import type { Desktop, DesktopState, ViewerKey } from '../../../../src/generated/types.ts';

/** Columns the wire shape needs (runtime secrets never leave the database here). */
const listColumns = {
  id: desktops.id,
  userId: desktops.userId,
  categoryId: desktops.categoryId,
  groupId: desktops.groupId,
  name: desktops.name,
  description: desktops.description,
  type: desktops.type,
  state: desktops.state,
  detail: desktops.detail,
  templateId: desktops.templateId,
  hardware: desktops.hardware,
  guestProperties: desktops.guestProperties,
  image: desktops.image,
  server: desktops.server,
  tag: desktops.tag,
  visible: desktops.visible,
  accessed: desktops.accessed,
  scheduled: desktops.scheduled,
  bookingId: desktops.bookingId,
  currentAction: desktops.currentAction,
  version: desktops.version,
  queue: desktops.queue,
  ip: sql<string | null>`${desktops.runtime}->>'ip'`.as('ip'),
};

export type DesktopListRow = Pick<
  DesktopRow,
  | 'id'
  | 'userId'
  | 'categoryId'
  | 'groupId'
  | 'name'
  | 'description'
  | 'type'
  | 'state'
  | 'detail'
  | 'templateId'
  | 'hardware'
  | 'guestProperties'
  | 'image'
  | 'server'
  | 'tag'
  | 'visible'
  | 'accessed'
  | 'scheduled'
  | 'bookingId'
  | 'currentAction'
  | 'version'
  | 'queue'
> & { ip: string | null };

/** Wire viewer keys in the spec's default order (vnc, spice, rdp, rdpgw, rdpvpn). */
const viewerOrder: readonly ViewerKey[] = [
  'browser-vnc',
  'file-spice',
  'browser-rdp',
  'file-rdpgw',
  'file-rdpvpn',
];

/**
 * Row -> wire shape of reference-resources section 3.1 (schema Desktop). Fields this server never
 * fills (progress of disk downloads, booking times, deployment names, storage ids, permissions,
 * thumbnails) are left out rather than sent as null/[] to keep the list small (goal G4: ≤ 350 B
 * per desktop); fields that can be cleared (detail, ip, current_action) are always sent, because
 * socket payloads are merged into cached records.
 */
export function toWire(row: DesktopListRow): Desktop {
  const gp = row.guestProperties as { viewers?: Record<string, unknown> };
  const configured = new Set(Object.keys(gp.viewers ?? {}).map((k) => k.replace(/_/g, '-')));
  const viewers = viewerOrder.filter((k) => configured.has(k));
  const hw = row.hardware as { reservables?: { vgpus?: string[] | null } };
  const vgpus = hw.reservables?.vgpus ?? null;
  const image = row.image as Desktop['image'];
  const scheduled = row.scheduled as Desktop['scheduled'];
  const wire: Desktop = {
    id: row.id,
    name: row.name,
    description: row.description,
    image: image && Object.keys(image).length > 0 ? image : { type: 'stock', id: '1', url: '' },
    state: row.state as DesktopState,
    type: row.type,
    viewers,
    ip: row.state === 'started' ? row.ip : null,
    template: row.templateId,
    editable: true,
    scheduled: scheduled ?? { shutdown: false },
    server: row.server,
    accessed: Math.floor(row.accessed.getTime() / 1000),
    tag: row.tag,
    visible: row.visible,
    user: row.userId,
    needs_booking: Array.isArray(vgpus) && vgpus.length > 0,
    booking_id: row.bookingId ?? false,
    detail: row.detail,
    current_action: row.currentAction,
    queue: (row.queue as Desktop['queue']) ?? null,
    version: row.version,
  };
  if (vgpus) wire.reservables = { vgpus };
  return wire;
}

export type DesktopPatch = Partial<
  Omit<DesktopInsert, 'id' | 'version' | 'createdAt' | 'updatedAt'>
>;

export interface DesktopsRepository {
  /** The caller's desktops (deployment desktops only when visible), ordered by name. */
  listForUser(userId: string): Promise<Desktop[]>;
  /**
   * The same list as a JSON string, cached per user: every write through this repository drops the
   * user's entry at once; writes made by another node are seen after LIST_CACHE_MS at most.
   */
  listJsonForUser(userId: string): Promise<string>;
  byId(id: string): Promise<DesktopRow | undefined>;
  create(values: Omit<DesktopInsert, 'id' | 'version'> & { id?: string }): Promise<Desktop>;
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

/** Upper bound for a list served from memory after a write on ANOTHER node (same-node writes invalidate). */
export const LIST_CACHE_MS = 1000;

const plugin: FastifyPluginAsync = async (app) => {
  const { db } = app;
  const listCache = new Map<string, { json: Promise<string>; until: number; generation: number }>();
  const generations = new Map<string, number>();
  const invalidate = (userId: string) => {
    generations.set(userId, (generations.get(userId) ?? 0) + 1);
    listCache.delete(userId);
  };
  const listStatement = db
    .select(listColumns)
    .from(desktops)
    .where(
      and(
        eq(desktops.userId, sql.placeholder('userId')),
        or(isNull(desktops.tag), eq(desktops.visible, true)),
      ),
    )
    .orderBy(asc(desktops.name), asc(desktops.id))
    .prepare('user_desktops_list');

  const publish = (name: 'desktops.created' | 'desktops.updated', d: Desktop, ownerId: string) =>
    app.events.publish({ name, payload: d, ownerId });

  const repo: DesktopsRepository = {
    async listForUser(userId) {
      const rows = (await listStatement.execute({ userId })) as DesktopListRow[];
      return rows.map(toWire);
    },
    listJsonForUser(userId) {
      const now = Date.now();
      const hit = listCache.get(userId);
      if (hit && hit.until > now) return hit.json;
      const generation = generations.get(userId) ?? 0;
      const json = repo.listForUser(userId).then((list) => JSON.stringify(list));
      if (listCache.size > 10_000) listCache.clear();
      const entry = { json, until: now + LIST_CACHE_MS, generation };
      listCache.set(userId, entry);
      json.then(
        () => {
          // a write during the load made this result stale: do not keep it
          if ((generations.get(userId) ?? 0) !== generation && listCache.get(userId) === entry)
            listCache.delete(userId);
        },
        () => {
          if (listCache.get(userId) === entry) listCache.delete(userId);
        },
      );
      return json;
    },
    async byId(id) {
      const rows = await db.select().from(desktops).where(eq(desktops.id, id)).limit(1);
      return rows[0];
    },
    async create(values) {
      const rows = await db
        .insert(desktops)
        .values({ ...values, id: values.id ?? randomUUID() })
        .returning(listColumns);
      const row = rows[0] as DesktopListRow | undefined;
      if (!row) throw new Error('desktop not created');
      invalidate(row.userId);
      const wire = toWire(row);
      publish('desktops.created', wire, row.userId);
      return wire;
    },
    async update(id, patch, fromStates) {
      const condition = fromStates
        ? and(eq(desktops.id, id), inArray(desktops.state, [...fromStates]))
        : eq(desktops.id, id);
      const rows = await db
        .update(desktops)
        .set({ ...patch, version: sql`${desktops.version} + 1`, updatedAt: sql`now()` })
        .where(condition)
        .returning(listColumns);
      const row = rows[0] as DesktopListRow | undefined;
      if (!row) return undefined;
      invalidate(row.userId);
      const wire = toWire(row);
      if (row.tag !== null && !row.visible)
        app.events.publish({
          name: 'desktops.deleted',
          payload: { id, version: row.version },
          ownerId: row.userId,
        });
      else publish('desktops.updated', wire, row.userId);
      return wire;
    },
    async publishCurrent(id, name) {
      const rows = await db.select(listColumns).from(desktops).where(eq(desktops.id, id)).limit(1);
      const row = rows[0] as DesktopListRow | undefined;
      if (!row) return undefined;
      invalidate(row.userId);
      const wire = toWire(row);
      publish(name, wire, row.userId);
      return wire;
    },
    async remove(id) {
      const rows = await db
        .delete(desktops)
        .where(eq(desktops.id, id))
        .returning({ userId: desktops.userId, version: desktops.version });
      const row = rows[0];
      if (!row) return false;
      invalidate(row.userId);
      app.events.publish({
        name: 'desktops.deleted',
        payload: { id, version: row.version + 1 },
        ownerId: row.userId,
      });
      return true;
    },
  };
  app.decorate('desktops', repo);
};

export default globalPlugin(plugin, 'desktops-repository');
