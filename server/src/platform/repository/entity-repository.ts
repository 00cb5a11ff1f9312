/**
 * The generic repository every stored entity gets from its generated storage entry
 * (`storage` in src/generated/db.ts): get, list, create, update and delete, scoped by owner and
 * category (admins see everything, managers their category, everybody else what they own), with
 * the version column bumped on every write. Entity-specific repositories wrap it where behaviour
 * differs (the desktops' list cache and socket events, the users' names).
 */
import { and, asc, eq, inArray, is, sql, SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import { storage, type StorageName } from '../db/schema.ts';
import type { Db } from '../db/client.ts';
import type { Role } from '../../../../src/generated/types.ts';
import { role } from '../../../../src/generated/policy.ts';

/** Who is asking: scoping reads and writes to what this caller may see. */
export interface Scope {
  userId: string;
  role: Role;
  categoryId: string;
}

type Entry<N extends StorageName> = (typeof storage)[N];
export type RowOf<N extends StorageName> = Entry<N>['table']['$inferSelect'];
export type InsertOf<N extends StorageName> = Entry<N>['table']['$inferInsert'];

/** A database handle or a transaction on it (PGlite has one connection: writes in a transaction use it). */
export type Executor = Pick<Db, 'select' | 'insert' | 'update' | 'delete' | 'execute'>;

export interface EntityRepository<N extends StorageName> {
  name: N;
  /** One row by primary key. */
  get(id: string, on?: Executor): Promise<RowOf<N> | undefined>;
  /** Rows matching `where`, ordered by `orderBy` (default: primary key). */
  list(options?: {
    where?: SQL | undefined;
    orderBy?: SQL | PgColumn;
    on?: Executor;
  }): Promise<RowOf<N>[]>;
  /** Rows the scope may see, with an optional extra condition. */
  listFor(scope: Scope, where?: SQL): Promise<RowOf<N>[]>;
  /** True when the scope may see (and manage) the row: admin, its category's manager, its owner. */
  visibleTo(scope: Scope, row: RowOf<N>): boolean;
  /** The condition selecting the rows a scope may see (undefined for admins). */
  scopeCondition(scope: Scope): SQL | undefined;
  create(values: InsertOf<N>, on?: Executor): Promise<RowOf<N>>;
  /**
   * Writes `patch` (bumping the version column) where the primary key matches and `condition`
   * holds; undefined when no row matched. With `conditionKey` (the caller's name for its
   * condition: the same key always comes with the same condition), a write outside a transaction
   * reuses one prepared statement per condition and set of patched columns.
   */
  update(
    id: string,
    patch: Partial<InsertOf<N>>,
    options?: { condition?: SQL | undefined; conditionKey?: string; on?: Executor },
  ): Promise<RowOf<N> | undefined>;
  /** Deletes the row; returns it as it was, or undefined. */
  remove(id: string, on?: Executor): Promise<RowOf<N> | undefined>;
  /** Rows by primary key, in no particular order. */
  byIds(ids: readonly string[]): Promise<RowOf<N>[]>;
  /** The table's column by row key (for conditions the caller builds). */
  column(key: string): PgColumn;
}

export function entityRepository<N extends StorageName>(db: Db, name: N): EntityRepository<N> {
  const entry = storage[name];
  // The one place the generated table is seen through its columns by name; every caller is typed
  // by the entity's row and insert types.
  const table = entry.table as unknown as Record<string, PgColumn> & Entry<N>['table'];
  const column = (key: string): PgColumn => {
    const c = table[key];
    if (!c) throw new Error(`${name} has no column ${key}`);
    return c;
  };
  const id = Object.values(table).find((c) => (c as PgColumn | undefined)?.primary) as PgColumn;
  const owner = entry.owner ? column(entry.owner) : null;
  const category = entry.category ? column(entry.category) : null;
  const versionKey = entry.version;
  type Row = RowOf<N>;
  const from = (on: Executor) =>
    on.select().from(entry.table as never) as unknown as {
      where(c: SQL | undefined): {
        limit(n: number): Promise<Row[]>;
        orderBy(o: SQL | PgColumn): Promise<Row[]>;
      };
    };

  const scopeCondition = (scope: Scope): SQL | undefined => {
    if (scope.role === role.admin) return undefined;
    if (scope.role === role.manager && category) return eq(category, scope.categoryId);
    return owner ? eq(owner, scope.userId) : sql`false`;
  };

  /**
   * The read by key outside a transaction, built once: its SQL is not composed again per call and
   * the database plans it once per connection.
   */
  let byKey: { execute(values: { key: unknown }): Promise<Row[]> } | undefined;

  /**
   * The prepared writes by condition key and patched columns: the statement's SQL is composed
   * once, the values go as its parameters (each encoded by its column, as in a plain write).
   */
  const updates = new Map<string, { execute(values: Record<string, unknown>): Promise<Row[]> }>();
  /** More shapes than this are not expected; past it, writes are composed each time. */
  const MAX_PREPARED_UPDATES = 64;
  const setOf = (patch: Record<string, unknown>) => {
    const set: Record<string, unknown> = { ...patch };
    if (versionKey) set[versionKey] = sql`${column(versionKey)} + 1`;
    if ('updatedAt' in table) set.updatedAt = sql`now()`;
    return set;
  };
  const preparedUpdate = (
    conditionKey: string,
    keys: string[],
    nulls: ReadonlySet<string>,
    condition: SQL | undefined,
  ) => {
    const shape = `${conditionKey}|${keys.map((k) => (nulls.has(k) ? `${k}=null` : k)).join(',')}`;
    let statement = updates.get(shape);
    if (statement || updates.size >= MAX_PREPARED_UPDATES) return statement;
    // A null is written as SQL NULL, as a plain write does (a column's encoder is not given it).
    const placeholders = Object.fromEntries(
      keys.map((key) => [key, nulls.has(key) ? sql`NULL` : sql.placeholder(key)]),
    );
    statement = db
      .update(entry.table as never)
      .set(setOf(placeholders) as never)
      .where(and(eq(id, sql.placeholder('__key')), condition))
      .returning()
      .prepare(`${name}_update_${updates.size + 1}`) as unknown as typeof statement;
    if (statement) updates.set(shape, statement);
    return statement;
  };

  const repo: EntityRepository<N> = {
    name,
    column,
    scopeCondition,
    async get(key, on = db) {
      if (on !== db) return (await from(on).where(eq(id, key)).limit(1))[0];
      byKey ??= db
        .select()
        .from(entry.table as never)
        .where(eq(id, sql.placeholder('key')))
        .limit(1)
        .prepare(`${name}_by_id`) as unknown as typeof byKey;
      return (await byKey?.execute({ key }))?.[0];
    },
    async list({ where, orderBy, on = db } = {}) {
      return from(on)
        .where(where)
        .orderBy(orderBy ?? asc(id));
    },
    listFor(scope, where) {
      return repo.list({ where: and(scopeCondition(scope), where) });
    },
    visibleTo(scope, row) {
      const record = row as Record<string, unknown>;
      if (scope.role === role.admin) return true;
      if (
        scope.role === role.manager &&
        entry.category &&
        record[entry.category] === scope.categoryId
      )
        return true;
      return !!entry.owner && record[entry.owner] === scope.userId;
    },
    async create(values, on = db) {
      const rows = (await on
        .insert(entry.table as never)
        .values(values as never)
        .returning()) as Row[];
      const row = rows[0];
      if (!row) throw new Error(`${name}: insert returned no row`);
      return row;
    },
    async update(key, patch, { condition, conditionKey, on = db } = {}) {
      const values = patch as Record<string, unknown>;
      // Drizzle leaves undefined values out of a write; a value that is SQL stays in its text.
      const keys = Object.keys(values).filter((k) => values[k] !== undefined);
      if (conditionKey !== undefined && on === db && !keys.some((k) => is(values[k], SQL))) {
        const nulls = new Set(keys.filter((k) => values[k] === null));
        const statement = preparedUpdate(conditionKey, keys, nulls, condition);
        if (statement) return (await statement.execute({ ...values, __key: key }))[0];
      }
      const set = setOf(values);
      const rows = (await on
        .update(entry.table as never)
        .set(set as never)
        .where(and(eq(id, key), condition))
        .returning()) as Row[];
      return rows[0];
    },
    async remove(key, on = db) {
      const rows = (await on
        .delete(entry.table as never)
        .where(eq(id, key))
        .returning()) as Row[];
      return rows[0];
    },
    async byIds(ids) {
      if (ids.length === 0) return [];
      return from(db)
        .where(inArray(id, [...ids]))
        .orderBy(asc(id));
    },
  };
  return repo;
}
