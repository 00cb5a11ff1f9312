/**
 * Plain CRUD of a stored resource from its schema: list, show, create, update and delete of the
 * table its generated `storage` entry names, scoped by role from the same entry (admins reach
 * every record, managers their category's, everyone else what they own), mapped between rows and
 * the wire by the generated mappers, with the computed properties (`x-db.computed`) selected with
 * the columns, the version column bumped where the table has one, and an audit entry (snapshots
 * from the generated wire mapping, secrets left out) written in the same transaction as the
 * write. A domain adds hooks only where its behaviour differs (checks, locks, side effects).
 *
 * Reads outside the caller's scope are not found (404); writes to a record outside it are
 * refused (403). Roles allowed per operation come from the generated operation table.
 */
import { and, asc, eq, getTableColumns, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { storage, type StorageName } from '../db/schema.ts';
import type { Db } from '../db/client.ts';
import type { Executor, InsertOf, RowOf } from '../repository/entity-repository.ts';
import { ApiError } from '../http/api-error.ts';
import { operations, type Operation } from '../../../../src/generated/api.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { role } from '../../../../src/generated/policy.ts';

/** Who writes: a user of the portal or the command line (an admin). */
export interface CrudActor {
  id: string;
  name: string;
  role: Role;
  /** the actor's own category */
  categoryId: string;
}

/** One audit entry of a write, as the host's audit log takes it. */
export interface CrudAuditEntry {
  action: string;
  targetType: string;
  targetId: string;
  targetName: string | null;
  categoryId: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

export interface CrudContext<Row> {
  tx: Executor;
  actor: CrudActor;
  /** the record before the write (update and delete) */
  before?: Row;
}

/**
 * The behaviour a resource adds to plain CRUD. Every hook runs inside the write's transaction but
 * `prepareCreate`, `aroundDelete` and `afterCommit`.
 */
export interface CrudHooks<Row, Insert, Create, Update, Wire, Prepared = undefined> {
  /**
   * Work before the create's transaction: what must not hold it open (slow work such as hashing,
   * reads beside it, which wait for it on a one-connection database); beforeCreate gets its answer.
   */
  prepareCreate?(actor: CrudActor, body: Create): Promise<Prepared>;
  /** Checks and locks before the insert; answers column values added to (or replacing) the body's. */
  beforeCreate?(
    ctx: CrudContext<Row> & { prepared: Prepared | undefined },
    body: Create,
    values: Partial<Insert>,
  ): Promise<Partial<Insert>>;
  /** Checks and locks before the update; answers column values replacing those of the body. */
  beforeUpdate?(
    ctx: CrudContext<Row> & { before: Row },
    body: Update,
    patch: Partial<Insert>,
  ): Promise<Partial<Insert>>;
  /** After the insert (records made with it); answers what the audit adds to the after snapshot. */
  afterCreate?(ctx: CrudContext<Row>, row: Row): Promise<Record<string, unknown>>;
  /**
   * Checks before the delete, and what must go with the record (references to it); answers what
   * the audit adds to the before snapshot (the records gone with it).
   */
  beforeDelete?(ctx: CrudContext<Row> & { before: Row }): Promise<Record<string, unknown>>;
  /** After the write, in its transaction (events, side effects). */
  afterWrite?(
    ctx: CrudContext<Row>,
    write: { kind: 'create' | 'update' | 'delete'; after: Row | null },
  ): Promise<void>;
  /** After the write committed (what must not see an uncommitted record: caches, sessions). */
  afterCommit?(
    actor: CrudActor,
    write: { kind: 'create' | 'update' | 'delete'; before: Row | null; after: Row | null },
  ): Promise<void>;
  /**
   * A delete that needs work outside its transaction (stopping what the record owns): given the
   * record as read before, it runs `remove` (the delete's checks, write and audit) in a
   * transaction it opens itself. Without it the delete runs in a transaction of its own.
   */
  aroundDelete?(
    actor: CrudActor,
    record: Row,
    remove: (tx: Executor) => Promise<void>,
  ): Promise<void>;
  /** The finishing touch of a wire record (defaults a read fills in). */
  toWire?(wire: Wire, row: Row): Wire;
}

export interface CrudDefinition<N extends StorageName, Wire, Create, Update, Prepared = undefined> {
  /** the x-resource name: operation keys are `<resource>.<op>` */
  resource: string;
  /** the generated storage entry of its table */
  storage: N;
  /** what the errors call a record (`Group not found`) */
  label: string;
  /** the generated row -> wire mapper of a read row (stored and computed properties) */
  toWire(row: RowOf<N>): Wire;
  /** the generated wire -> columns mappers of the create and update bodies */
  fromCreate(body: Create): Partial<InsertOf<N>>;
  fromUpdate(body: Update): Partial<InsertOf<N>>;
  /** list order (row keys), then the primary key */
  orderBy?: readonly string[];
  /**
   * What the role scope reaches but the actor still does not read (a manager never sees an admin
   * account): ANDed to the list and show conditions, so such a record is not found.
   */
  hidden?(actor: CrudActor): SQL | undefined;
  /** The error of an insert that meets a unique key: the insert then adds nothing. */
  conflict?(values: Partial<InsertOf<N>>): ApiError;
  /** The table's writer when the domain has one (every write of the table goes through it). */
  writer?: CrudWriter<RowOf<N>, InsertOf<N>>;
  /** the audit log of the host, and the record's target type in it; absent = not audited */
  audit?: {
    targetType: string;
    append(on: Executor, actor: CrudActor, entry: CrudAuditEntry): Promise<void>;
    /** the target name of an entry (default: the record's `name`) */
    targetName?(row: RowOf<N>): string | null;
  };
  hooks?: CrudHooks<RowOf<N>, InsertOf<N>, Create, Update, Wire, Prepared>;
}

/** The writes of one table by primary key. */
export interface CrudWriter<Row, Insert> {
  /** Inserts the row; undefined when it meets a unique key (nothing is inserted). */
  insert(on: Executor, values: Partial<Insert>): Promise<Row | undefined>;
  /** Changes the row; undefined when it is gone. */
  update(on: Executor, id: string, patch: Partial<Insert>): Promise<Row | undefined>;
  remove(on: Executor, id: string): Promise<void>;
}

export interface CrudService<Wire, Create, Update> {
  list(actor: CrudActor): Promise<Wire[]>;
  show(actor: CrudActor, id: string): Promise<Wire>;
  create(actor: CrudActor, body: Create): Promise<{ id: string }>;
  update(actor: CrudActor, id: string, body: Update): Promise<void>;
  remove(actor: CrudActor, id: string): Promise<void>;
}

const forbidden = (message: string) => new ApiError('forbidden', message, 'forbidden', null);

export function crudService<N extends StorageName, Wire, Create, Update, Prepared = undefined>(
  db: Db,
  def: CrudDefinition<N, Wire, Create, Update, Prepared>,
): CrudService<Wire, Create, Update> {
  type Row = RowOf<N>;
  type Insert = InsertOf<N>;
  const entry = storage[def.storage];
  // The one place the generated table is seen through its columns by name; the mappers and hooks
  // are typed by the entity's row, insert and wire types.
  const table = entry.table as unknown as Record<string, PgColumn>;
  const column = (key: string): PgColumn => {
    const c = table[key];
    if (!c) throw new Error(`${def.storage} has no column ${key}`);
    return c;
  };
  const id = Object.values(getTableColumns(entry.table)).find((c) => c.primary) as PgColumn;
  const owner = entry.owner ? column(entry.owner) : null;
  const category = entry.category ? column(entry.category) : null;
  const fields = { ...getTableColumns(entry.table), ...(entry.computed ?? {}) };
  const notFound = () => new ApiError('not_found', `${def.label} not found`, 'not_found', {});

  const requireRole = (actor: CrudActor, op: string) => {
    const operation = (operations as Readonly<Record<string, Operation>>)[`${def.resource}.${op}`];
    if (operation?.roles && !operation.roles.includes(actor.role))
      throw forbidden(`${actor.role} may not call ${def.resource}.${op}`);
  };
  /** The rows the actor reaches: admins all, managers their category, others their own. */
  const scope = (actor: CrudActor): SQL | undefined => {
    if (actor.role === role.admin) return undefined;
    if (actor.role === role.manager && category) return eq(category, actor.categoryId);
    return owner ? eq(owner, actor.id) : sql`false`;
  };
  const reaches = (actor: CrudActor, row: Row): boolean => {
    const record = row as Record<string, unknown>;
    if (actor.role === role.admin) return true;
    if (actor.role === role.manager && entry.category)
      return record[entry.category] === actor.categoryId;
    return !!entry.owner && record[entry.owner] === actor.id;
  };
  const read = async (on: Executor, where: SQL | undefined): Promise<Row[]> =>
    (await on
      .select(fields)
      .from(entry.table as never)
      .where(where)
      .orderBy(...(def.orderBy ?? []).map((key) => asc(column(key))), asc(id))) as Row[];
  const wireOf = (row: Row): Wire => {
    const wire = def.toWire(row);
    return def.hooks?.toWire ? def.hooks.toWire(wire, row) : wire;
  };
  const snapshot = (row: Row): Record<string, unknown> =>
    (entry.snapshot as (r: Row) => Record<string, unknown>)(row);
  const nameOf = (row: Row): string | null => {
    if (def.audit?.targetName) return def.audit.targetName(row);
    const name = (row as Record<string, unknown>).name;
    return typeof name === 'string' ? name : null;
  };
  const categoryOf = (row: Row): string | null => {
    const value = entry.category ? (row as Record<string, unknown>)[entry.category] : null;
    return typeof value === 'string' ? value : null;
  };
  const audit = async (
    tx: Executor,
    actor: CrudActor,
    op: 'create' | 'update' | 'delete',
    row: Row,
    before: Record<string, unknown> | null,
    after: Record<string, unknown> | null,
  ) => {
    if (!def.audit) return;
    await def.audit.append(tx, actor, {
      action: `${def.resource}.${op}`,
      targetType: def.audit.targetType,
      targetId: String((row as Record<string, unknown>)[idKey] ?? ''),
      targetName: nameOf(row),
      categoryId: categoryOf(row),
      before,
      after,
    });
  };
  const idKey =
    Object.entries(getTableColumns(entry.table)).find(([, c]) => c.primary)?.[0] ?? 'id';
  /**
   * The record a write changes, its row locked until the write commits (so the checks of the
   * hooks and the before snapshot hold for the write): 404 when absent, 403 outside the actor's
   * scope.
   */
  const writable = async (tx: Executor, actor: CrudActor, key: string): Promise<Row> => {
    const [row] = (await tx
      .select()
      .from(entry.table as never)
      .where(eq(id, key))
      .limit(1)
      .for('update')) as Row[];
    if (!row) throw notFound();
    if (!reaches(actor, row)) throw forbidden(`That ${def.label.toLowerCase()} is out of reach`);
    return row;
  };
  const set = (patch: Partial<Insert>): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...patch };
    if (entry.version) out[entry.version] = sql`${column(entry.version)} + 1`;
    return out;
  };
  /** The generic writer: by primary key, the version column bumped on each change. */
  const writer: CrudWriter<Row, Insert> = def.writer ?? {
    async insert(on, values) {
      const insert = on.insert(entry.table as never).values(values as never);
      const rows = (await (
        def.conflict ? insert.onConflictDoNothing() : insert
      ).returning()) as Row[];
      return rows[0];
    },
    async update(on, key, patch) {
      const rows = (await on
        .update(entry.table as never)
        .set(set(patch) as never)
        .where(eq(id, key))
        .returning()) as Row[];
      return rows[0];
    },
    async remove(on, key) {
      await on.delete(entry.table as never).where(eq(id, key));
    },
  };
  const visible = (actor: CrudActor): SQL | undefined => and(scope(actor), def.hidden?.(actor));

  return {
    async list(actor) {
      requireRole(actor, 'list');
      return (await read(db, visible(actor))).map(wireOf);
    },
    async show(actor, key) {
      requireRole(actor, 'show');
      const [row] = await read(db, and(eq(id, key), visible(actor)));
      if (!row) throw notFound();
      return wireOf(row);
    },
    async create(actor, body) {
      requireRole(actor, 'create');
      const prepared = await def.hooks?.prepareCreate?.(actor, body);
      const created = await db.transaction(async (tx) => {
        const ctx = { tx, actor, prepared };
        let values: Partial<Insert> = def.fromCreate(body);
        values = { ...values, ...((await def.hooks?.beforeCreate?.(ctx, body, values)) ?? {}) };
        const row = await writer.insert(tx, values);
        if (!row) {
          if (def.conflict) throw def.conflict(values);
          throw new Error(`${def.storage}: insert returned no row`);
        }
        const extra = (await def.hooks?.afterCreate?.(ctx, row)) ?? {};
        await audit(tx, actor, 'create', row, null, { ...snapshot(row), ...extra });
        await def.hooks?.afterWrite?.(ctx, { kind: 'create', after: row });
        return row;
      });
      await def.hooks?.afterCommit?.(actor, { kind: 'create', before: null, after: created });
      return { id: String((created as Record<string, unknown>)[idKey]) };
    },
    async update(actor, key, body) {
      requireRole(actor, 'update');
      const write = await db.transaction(async (tx) => {
        const before = await writable(tx, actor, key);
        const ctx = { tx, actor, before };
        let patch: Partial<Insert> = def.fromUpdate(body);
        patch = { ...patch, ...((await def.hooks?.beforeUpdate?.(ctx, body, patch)) ?? {}) };
        const after = Object.keys(patch).length > 0 ? await writer.update(tx, key, patch) : before;
        if (!after) throw notFound();
        await audit(tx, actor, 'update', after, snapshot(before), snapshot(after));
        await def.hooks?.afterWrite?.(ctx, { kind: 'update', after });
        return { before, after };
      });
      await def.hooks?.afterCommit?.(actor, { kind: 'update', ...write });
    },
    async remove(actor, key) {
      requireRole(actor, 'delete');
      let removed: Row | undefined;
      const remove = async (tx: Executor) => {
        const before = await writable(tx, actor, key);
        const ctx = { tx, actor, before };
        const extra = (await def.hooks?.beforeDelete?.(ctx)) ?? {};
        await writer.remove(tx, key);
        await audit(tx, actor, 'delete', before, { ...snapshot(before), ...extra }, null);
        await def.hooks?.afterWrite?.(ctx, { kind: 'delete', after: null });
        removed = before;
      };
      const around = def.hooks?.aroundDelete;
      if (around) await around(actor, await writable(db, actor, key), remove);
      else await db.transaction(remove);
      if (removed)
        await def.hooks?.afterCommit?.(actor, { kind: 'delete', before: removed, after: null });
    },
  };
}
