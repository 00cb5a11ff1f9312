/**
 * The administration of reservable items (the GPU cards whose profiles are booked): the plain
 * CRUD of the adminReservables resource (list and show with the profiles count, create, update,
 * delete) and what items add to it: a new item is of kind gpus and gets its id from the server,
 * names are unique among items (any case), and an item is not deleted while it has profiles or
 * plans that have not ended (its row, locked by the delete, is the lock a new profile of the item
 * takes, so none is added meanwhile).
 */
import { randomUUID } from 'node:crypto';
import { and, count, eq, gt, ne, sql } from 'drizzle-orm';
import type {
  AdminReservable,
  AdminReservableCreate,
  AdminReservableUpdate,
} from '../../../../src/generated/types.ts';
import {
  adminReservableFromCreate,
  adminReservableFromUpdate,
  adminReservableReadToWire,
  plannerEvents,
  reservableItems,
  reservableProfiles,
  type AdminReservableReadRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { crudService } from '../../platform/crud/crud-service.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { appendAudit } from '../directory/index.ts';
import { countOf, exists, inUse } from './reservables-shared.ts';

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

export function reservableItemsCrud(db: Db) {
  return crudService<
    'reservableItems',
    AdminReservable,
    AdminReservableCreate,
    AdminReservableUpdate
  >(db, {
    resource: 'adminReservables',
    storage: 'reservableItems',
    label: 'Reservable item',
    toWire: (row) => adminReservableReadToWire(row as AdminReservableReadRow),
    fromCreate: adminReservableFromCreate,
    fromUpdate: adminReservableFromUpdate,
    orderBy: ['name'],
    audit: { targetType: 'reservable_item', append: appendAudit },
    hooks: {
      async beforeCreate({ tx }, body) {
        await checkItemName(tx, body.name);
        return { id: randomUUID(), type: 'gpus', name: body.name.trim() };
      },
      async beforeUpdate({ tx, before }, body) {
        if (body.name === undefined) return {};
        await checkItemName(tx, body.name, before.id);
        return { name: body.name.trim() };
      },
      async beforeDelete({ tx, before }) {
        const uses = Object.fromEntries(
          Object.entries({
            profiles: await countOf(
              tx
                .select({ n: count() })
                .from(reservableProfiles)
                .where(eq(reservableProfiles.itemId, before.id)),
            ),
            plans: await countOf(
              tx
                .select({ n: count() })
                .from(plannerEvents)
                .where(
                  and(eq(plannerEvents.itemId, before.id), gt(plannerEvents.endAt, new Date())),
                ),
            ),
          }).filter(([, n]) => n > 0),
        );
        if (Object.keys(uses).length > 0) throw inUse('reservable item', uses);
        return {};
      },
    },
  });
}
