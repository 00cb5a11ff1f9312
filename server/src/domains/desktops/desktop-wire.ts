/**
 * A desktop as it goes on the wire (schema Desktop), for the list and the desktop events, and the
 * list's own read: it selects only the columns the wire shape is made of and the four values it
 * takes from inside the JSON columns: the rest of a row (most of it JSON) is what the database
 * spent most of its time sending and the driver parsing.
 */
import { and, eq, inArray, isNull, or, sql, type SQL } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import {
  desktops,
  desktopToWire,
  desktopWireColumns,
  type DesktopRow,
  type DesktopWireRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { constants } from '../../../../src/generated/constants.ts';
import type {
  Desktop,
  DesktopGuestProperties,
  DesktopHardware,
  DesktopRuntime,
  Image,
} from '../../../../src/generated/types.ts';
import { configuredViewers } from '../../../../common/viewers.ts';

const STOCK_CARDS = constants.desktops.stockCards.value;

/**
 * The stock card of a desktop without an image of its own: one of the stock cards, derived from
 * the id (its characters folded modulo the number of cards, plus 1), so a desktop keeps its card.
 */
export function stockImageOf(id: string): { id: string; type: 'stock'; url: string } {
  let t = 0;
  for (const c of id) t = (2 * t + c.charCodeAt(0)) % 2 ** 31;
  return { id: String((t % STOCK_CARDS) + 1), type: 'stock', url: '' };
}

/** The card image as the list sends it: the uploaded card's file name, else the stock card's id. */
export function cardImageId(row: Pick<DesktopRow, 'id'> & { image: Pick<Image, 'id'> }): string {
  return row.image.id ?? stockImageOf(row.id).id;
}

/**
 * Row -> wire shape (schema Desktop): the lean record the list and the desktop events carry. The
 * stored fields come from the generated mapper, plus those computed from other columns; a field
 * without a value (an empty description, no ip, no booking, no scheduled shutdown) is left out,
 * never sent as null. An event carries this whole record and the client replaces its cached one,
 * so a field left out is one that has no value now.
 */
/**
 * What toWire reads of a desktop: its wire columns and four values inside its JSON columns. The
 * list selects only these (the rest of a row's JSON is most of what the database sends and parses);
 * every other read passes its whole row.
 */
export type DesktopWireSource = DesktopWireRow & {
  image: Pick<Image, 'id'>;
  runtime: Pick<DesktopRuntime, 'ip'>;
  hardware: Pick<DesktopHardware, 'reservables'>;
  guestProperties: Pick<DesktopGuestProperties, 'viewers'>;
};

export function toWire(row: DesktopWireSource): Desktop {
  return wireOf(
    row,
    row.image.id,
    row.runtime.ip,
    row.hardware.reservables?.vgpus,
    configuredViewers(row.guestProperties.viewers),
  );
}

/**
 * toWire from the wire columns and the four values it takes from the JSON columns. One object is
 * built, its fields assigned in the wire's order (no intermediate objects: the list maps thousands
 * of rows).
 */
function wireOf(
  row: DesktopWireRow,
  imageId: Image['id'],
  runtimeIp: DesktopRuntime['ip'],
  vgpus: NonNullable<DesktopHardware['reservables']>['vgpus'],
  viewers: Desktop['viewers'],
): Desktop {
  const {
    description,
    scheduled,
    next_booking_start,
    next_booking_end,
    booking_id,
    queue,
    detail,
    ...always
  } = desktopToWire(row);
  const wire: Desktop = { ...always, image: imageId ?? stockImageOf(row.id).id, viewers };
  if (description) wire.description = description;
  const ip = row.state === 'started' ? runtimeIp : null;
  if (ip) wire.ip = ip;
  if (scheduled && (scheduled.shutdown !== false || scheduled.extensions !== undefined))
    wire.scheduled = scheduled;
  if (vgpus && vgpus.length > 0) wire.reservables = { vgpus };
  if (next_booking_start !== undefined) wire.next_booking_start = next_booking_start;
  if (next_booking_end !== undefined) wire.next_booking_end = next_booking_end;
  if (booking_id) wire.booking_id = booking_id;
  if (queue) wire.queue = queue;
  if (detail) wire.detail = detail;
  return wire;
}

/**
 * The viewers of a `guest_properties.viewers` read as its JSON text: the desktops of a list mostly
 * share a few, so each distinct text is parsed once (a fresh array per record all the same).
 */
function viewersReader(): (text: string | null) => Desktop['viewers'] {
  const known = new Map<string, Desktop['viewers']>();
  return (text) => {
    if (text === null) return configuredViewers(undefined);
    let viewers = known.get(text);
    if (!viewers) {
      viewers = configuredViewers(JSON.parse(text) as Record<string, unknown>);
      if (known.size >= 1000) known.clear();
      known.set(text, viewers);
    }
    return [...viewers];
  };
}

/**
 * How one wire column travels inside the list's JSON text, and how its value comes back as the
 * driver would have given it: a timestamp as whole epoch milliseconds (the driver's Date keeps
 * milliseconds too), text, JSON, booleans and plain numbers as they are. Another column type
 * throws when the reader is built, so a wire field of a type this does not know fails at startup.
 */
function listColumn(column: PgColumn): { value: SQL; decode?: (value: unknown) => unknown } {
  switch (column.columnType) {
    case 'PgTimestamp':
      return {
        value: sql`floor(extract(epoch from ${column}) * 1000)`,
        decode: (value) => (value === null ? null : new Date(value as number)),
      };
    case 'PgText':
    case 'PgVarchar':
    case 'PgUUID':
    case 'PgJsonb':
    case 'PgJson':
    case 'PgBoolean':
    case 'PgInteger':
    case 'PgSmallInt':
      return { value: sql`${column}` };
    default:
      throw new Error(
        `the desktop list cannot read ${column.name} (${column.columnType}) from JSON: add its type`,
      );
  }
}

/**
 * The caller's desktops (deployment desktops only when visible), ordered by name, on the wire; with
 * `limit`, only the first of them in that order (what a page draws first while it reads the whole
 * list). The database answers the list as one JSON text (an array per desktop: its wire columns,
 * then the four values from inside its JSON columns): one value to hand over and one native
 * parse, instead of the driver turning thousands of rows of a dozen fields each into objects.
 */
export function desktopListReader(db: Db): (userId: string, limit?: number) => Promise<Desktop[]> {
  // The wire columns as codegen lists them (a field added to the schema is read too).
  const keys = desktopWireColumns;
  const columns = keys.map((key) => listColumn(desktops[key]));
  const extras = [
    sql`${desktops.image}->>'id'`,
    sql`${desktops.runtime}->>'ip'`,
    sql`${desktops.hardware}->'reservables'->'vgpus'`,
    // Text, not JSON: viewersReader parses each distinct one once.
    sql`(${desktops.guestProperties}->'viewers')::text`,
  ];
  const values = sql.join([...columns.map((column) => column.value), ...extras], sql`, `);
  const listed = and(
    eq(desktops.userId, sql.placeholder('userId')),
    or(isNull(desktops.tag), eq(desktops.visible, true)),
  );
  const asList = {
    list: sql<string>`coalesce(json_agg(json_build_array(${values}) order by ${desktops.name}, ${desktops.id}), '[]')::text`,
  };
  const statement = db.select(asList).from(desktops).where(listed).prepare('user_desktops_list');
  const first = db
    .select({ id: desktops.id })
    .from(desktops)
    .where(listed)
    .orderBy(desktops.name, desktops.id)
    .limit(sql.placeholder('limit'));
  const firstStatement = db
    .select(asList)
    .from(desktops)
    .where(inArray(desktops.id, first))
    .prepare('user_desktops_first');
  const n = keys.length;
  return async (userId, limit) => {
    const [answer] = await (limit === undefined
      ? statement.execute({ userId })
      : firstStatement.execute({ userId, limit }));
    const rows = JSON.parse(answer?.list ?? '[]') as unknown[][];
    const viewersOf = viewersReader();
    return rows.map((values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) {
        const decode = columns[i]?.decode;
        row[keys[i] as string] = decode ? decode(values[i]) : values[i];
      }
      return wireOf(
        row as DesktopWireRow,
        (values[n] as string | null) ?? undefined,
        (values[n + 1] as string | null) ?? undefined,
        (values[n + 2] as NonNullable<DesktopHardware['reservables']>['vgpus'] | null) ?? undefined,
        viewersOf(values[n + 3] as string | null),
      );
    });
  };
}
