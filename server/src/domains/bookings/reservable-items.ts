/** The administration of reservable items (the GPU cards whose profiles are booked). */
import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, gt, ne, sql } from 'drizzle-orm';
import type { AdminReservable } from '../../../../src/generated/types.ts';
import {
  plannerEvents,
  reservableItems,
  reservableProfiles,
  type ReservableRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { recordAudit } from './reservables-audit.ts';
import type { ReservablesAdmin } from './reservables-service.ts';
import {
  countOf,
  creating,
  defined,
  exists,
  inUse,
  itemRow,
  notFound,
} from './reservables-shared.ts';

const itemToWire = (row: ReservableRow, profiles: number): AdminReservable => ({
  id: row.id,
  name: row.name,
  brand: row.brand,
  model: row.model,
  description: row.description,
  enabled: row.enabled,
  profiles,
});

// What the audit keeps of a row: the wire shape, without the computed counts.
const itemAudit = (row: ReservableRow) => ({ ...itemToWire(row, 0), profiles: undefined });

/** An item's name is unique among items (`exceptId`: the item being renamed). */
async function checkItemName(on: Executor, name: string, exceptId?: string): Promise<void> {
  const n = await countOf(
    on
      .select({ n: count() })
      .from(reservableItems)
      .where(
        and(
          sql`lower(${reservableItems.name}) = lower(${name.trim()})`,
          exceptId ? ne(reservableItems.id, exceptId) : undefined,
        ),
      ),
  );
  if (n > 0) throw exists('reservable item', 'name', 'reservable_exists');
}

export function reservableItemsAdmin(
  db: Db,
): Pick<ReservablesAdmin, 'items' | 'item' | 'createItem' | 'updateItem' | 'deleteItem'> {
  return {
    async items() {
      const rows = await db.select().from(reservableItems).orderBy(asc(reservableItems.name));
      const counts = await db
        .select({ itemId: reservableProfiles.itemId, n: count() })
        .from(reservableProfiles)
        .groupBy(reservableProfiles.itemId);
      const byItem = new Map(counts.map((c) => [c.itemId, Number(c.n)]));
      return rows.map((row) => itemToWire(row, byItem.get(row.id) ?? 0));
    },

    async item(id) {
      const row = await itemRow(db, id);
      const n = await countOf(
        db.select({ n: count() }).from(reservableProfiles).where(eq(reservableProfiles.itemId, id)),
      );
      return itemToWire(row, n);
    },

    async createItem(actor, body) {
      return creating(
        () =>
          db.transaction(async (tx) => {
            await checkItemName(tx, body.name);
            const [row] = await tx
              .insert(reservableItems)
              .values({
                id: randomUUID(),
                type: 'gpus',
                name: body.name.trim(),
                brand: body.brand ?? null,
                model: body.model ?? null,
                description: body.description ?? null,
                enabled: body.enabled ?? true,
              })
              .returning();
            if (!row) throw new ApiError('internal_server');
            await recordAudit(tx, {
              actor,
              action: 'adminReservables.create',
              targetType: 'reservable_item',
              targetId: row.id,
              targetName: row.name,
              before: null,
              after: itemAudit(row),
            });
            return row.id;
          }),
        () => exists('reservable item', 'name', 'reservable_exists'),
      );
    },

    async updateItem(actor, id, body) {
      await db.transaction(async (tx) => {
        const before = await itemRow(tx, id, true);
        if (body.name !== undefined) await checkItemName(tx, body.name, id);
        const [after] = await tx
          .update(reservableItems)
          .set(
            defined({
              name: body.name?.trim(),
              brand: body.brand,
              model: body.model,
              description: body.description,
              enabled: body.enabled,
            }),
          )
          .where(eq(reservableItems.id, id))
          .returning();
        if (!after) throw notFound('Reservable item', id);
        await recordAudit(tx, {
          actor,
          action: 'adminReservables.update',
          targetType: 'reservable_item',
          targetId: id,
          targetName: after.name,
          before: itemAudit(before),
          after: itemAudit(after),
        });
      });
    },

    async deleteItem(actor, id) {
      await db.transaction(async (tx) => {
        const before = await itemRow(tx, id, true);
        const now = new Date();
        const uses = Object.fromEntries(
          Object.entries({
            profiles: await countOf(
              tx
                .select({ n: count() })
                .from(reservableProfiles)
                .where(eq(reservableProfiles.itemId, id)),
            ),
            plans: await countOf(
              tx
                .select({ n: count() })
                .from(plannerEvents)
                .where(and(eq(plannerEvents.itemId, id), gt(plannerEvents.endAt, now))),
            ),
          }).filter(([, n]) => n > 0),
        );
        if (Object.keys(uses).length > 0) throw inUse('reservable item', uses);
        await tx.delete(reservableItems).where(eq(reservableItems.id, id));
        await recordAudit(tx, {
          actor,
          action: 'adminReservables.delete',
          targetType: 'reservable_item',
          targetId: id,
          targetName: before.name,
          before: itemAudit(before),
          after: null,
        });
      });
    },
  };
}
