/**
 * The administration of reservable profiles (what a desktop names and a booking takes units of).
 * A profile keeps at least the units its bookings take at once and is not deleted while in use.
 */
import { and, asc, count, eq, gt, ne, sql } from 'drizzle-orm';
import type { AdminReservableProfile } from '../../../../src/generated/types.ts';
import {
  bookingPriorities,
  bookings,
  deployments,
  desktops,
  plannerEvents,
  reservableItems,
  reservableProfiles,
  templates,
  type ReservableProfileRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { recordAudit } from './reservables-audit.ts';
import type { ReservablesAdmin } from './reservables-service.ts';
import {
  allowedFrom,
  countOf,
  creating,
  defined,
  exists,
  inUse,
  itemRow,
  notFound,
  rolesOf,
} from './reservables-shared.ts';

const profileToWire = (
  row: ReservableProfileRow,
  itemName: string | null,
): AdminReservableProfile => ({
  id: row.id,
  item_id: row.itemId,
  item_name: itemName,
  name: row.name,
  description: row.description,
  profile: row.profile,
  units: row.units,
  enabled: row.enabled,
  priority_id: row.priorityId,
  allowed_roles: rolesOf(row.allowed),
  allowed: row.allowed,
});

async function profileRow(on: Executor, id: string, lock = false): Promise<ReservableProfileRow> {
  const query = on.select().from(reservableProfiles).where(eq(reservableProfiles.id, id));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw notFound('Reservable profile', id);
  return row;
}

/** A profile's name is unique within its item. */
async function checkProfileName(
  on: Executor,
  itemId: string,
  name: string,
  exceptId?: string,
): Promise<void> {
  const n = await countOf(
    on
      .select({ n: count() })
      .from(reservableProfiles)
      .where(
        and(
          eq(reservableProfiles.itemId, itemId),
          sql`lower(${reservableProfiles.name}) = lower(${name.trim()})`,
          exceptId ? ne(reservableProfiles.id, exceptId) : undefined,
        ),
      ),
  );
  if (n > 0) throw exists('reservable profile', 'name', 'reservable_exists');
}

/** A profile names an existing rule group (`default` always exists: no rule = no limits). */
async function checkRuleGroup(on: Executor, group: string): Promise<void> {
  if (group === 'default') return;
  const n = await countOf(
    on.select({ n: count() }).from(bookingPriorities).where(eq(bookingPriorities.ruleId, group)),
  );
  if (n === 0)
    throw new ApiError(
      'not_found',
      'No booking priority rule has this group',
      'booking_priority_not_found',
      { priority_id: group },
    );
}

/**
 * The most units the profile's bookings that have not ended take at one instant (each booking
 * counts from its start to its end; one ending as another starts does not overlap it).
 */
async function unitsBookedAtOnce(on: Executor, profileId: string, now: Date): Promise<number> {
  const rows = await on
    .select({ start: bookings.startAt, end: bookings.endAt, units: bookings.units })
    .from(bookings)
    .where(and(eq(bookings.profileId, profileId), gt(bookings.endAt, now)));
  const edges = rows.flatMap((r) => [
    { at: r.start.getTime(), delta: r.units },
    { at: r.end.getTime(), delta: -r.units },
  ]);
  edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
  let current = 0;
  let most = 0;
  for (const edge of edges) {
    current += edge.delta;
    most = Math.max(most, current);
  }
  return most;
}

/** What still uses a profile: desktops, templates, deployments, bookings and plans not ended. */
async function profileUses(on: Executor, id: string, now: Date): Promise<Record<string, number>> {
  const names = JSON.stringify([id]);
  const named = (column: typeof desktops.hardware | typeof templates.hardware) =>
    sql`(${column} -> 'reservables' -> 'vgpus') @> ${names}::jsonb`;
  const uses = {
    desktops: await countOf(
      on.select({ n: count() }).from(desktops).where(named(desktops.hardware)),
    ),
    templates: await countOf(
      on.select({ n: count() }).from(templates).where(named(templates.hardware)),
    ),
    deployments: await countOf(
      on
        .select({ n: count() })
        .from(deployments)
        .where(
          sql`(${deployments.createDict} -> 'hardware' -> 'reservables' -> 'vgpus') @> ${names}::jsonb`,
        ),
    ),
    bookings: await countOf(
      on
        .select({ n: count() })
        .from(bookings)
        .where(and(eq(bookings.profileId, id), gt(bookings.endAt, now))),
    ),
    plans: await countOf(
      on
        .select({ n: count() })
        .from(plannerEvents)
        .where(and(eq(plannerEvents.subitemId, id), gt(plannerEvents.endAt, now))),
    ),
  };
  return Object.fromEntries(Object.entries(uses).filter(([, n]) => n > 0));
}

export function reservableProfilesAdmin(
  db: Db,
): Pick<
  ReservablesAdmin,
  'profiles' | 'profile' | 'createProfile' | 'updateProfile' | 'deleteProfile'
> {
  return {
    async profiles() {
      const rows = await db
        .select({ profile: reservableProfiles, itemName: reservableItems.name })
        .from(reservableProfiles)
        .leftJoin(reservableItems, eq(reservableItems.id, reservableProfiles.itemId))
        .orderBy(asc(reservableProfiles.name), asc(reservableProfiles.id));
      return rows.map((r) => profileToWire(r.profile, r.itemName));
    },

    async profile(id) {
      const row = await profileRow(db, id);
      const [item] = await db
        .select({ name: reservableItems.name })
        .from(reservableItems)
        .where(eq(reservableItems.id, row.itemId));
      return profileToWire(row, item?.name ?? null);
    },

    async createProfile(actor, body) {
      return creating(
        () =>
          db.transaction(async (tx) => {
            // The item's row is locked so that it is not deleted while it gets a profile.
            await itemRow(tx, body.item_id, true);
            const [taken] = await tx
              .select({ id: reservableProfiles.id })
              .from(reservableProfiles)
              .where(eq(reservableProfiles.id, body.id));
            if (taken) throw exists('reservable profile', 'id', 'reservable_exists');
            await checkProfileName(tx, body.item_id, body.name);
            const priorityId = body.priority_id ?? 'default';
            await checkRuleGroup(tx, priorityId);
            const [row] = await tx
              .insert(reservableProfiles)
              .values({
                id: body.id,
                itemId: body.item_id,
                name: body.name.trim(),
                description: body.description ?? null,
                profile: body.profile,
                units: body.units,
                enabled: body.enabled ?? true,
                priorityId,
                allowed: allowedFrom({}, body.allowed_roles ?? [], body.allowed),
              })
              .returning();
            if (!row) throw new ApiError('internal_server');
            await recordAudit(tx, {
              actor,
              action: 'adminReservableProfiles.create',
              targetType: 'reservable_profile',
              targetId: row.id,
              targetName: row.name,
              before: null,
              after: profileToWire(row, null),
            });
            return row.id;
          }),
        () => exists('reservable profile', 'id', 'reservable_exists'),
      );
    },

    async updateProfile(actor, id, body) {
      await db.transaction(async (tx) => {
        // The profile's row lock is the one every booking change takes: no booking slips in
        // between the check of the units and the change.
        const before = await profileRow(tx, id, true);
        if (body.name !== undefined) await checkProfileName(tx, before.itemId, body.name, id);
        if (body.priority_id !== undefined) await checkRuleGroup(tx, body.priority_id);
        if (body.units !== undefined && body.units < before.units) {
          const booked = await unitsBookedAtOnce(tx, id, new Date());
          if (body.units < booked)
            throw new ApiError(
              'precondition_required',
              `Bookings that have not ended take ${booked} units at once`,
              'units_in_use',
              { units: booked },
            );
        }
        const allowed =
          body.allowed_roles !== undefined || body.allowed !== undefined
            ? allowedFrom(before.allowed, body.allowed_roles, body.allowed)
            : undefined;
        const [after] = await tx
          .update(reservableProfiles)
          .set(
            defined({
              name: body.name?.trim(),
              description: body.description,
              profile: body.profile,
              units: body.units,
              enabled: body.enabled,
              priorityId: body.priority_id,
              allowed,
            }),
          )
          .where(eq(reservableProfiles.id, id))
          .returning();
        if (!after) throw notFound('Reservable profile', id);
        await recordAudit(tx, {
          actor,
          action: 'adminReservableProfiles.update',
          targetType: 'reservable_profile',
          targetId: id,
          targetName: after.name,
          before: profileToWire(before, null),
          after: profileToWire(after, null),
        });
      });
    },

    async deleteProfile(actor, id) {
      await db.transaction(async (tx) => {
        const before = await profileRow(tx, id, true);
        const uses = await profileUses(tx, id, new Date());
        if (Object.keys(uses).length > 0) throw inUse('reservable profile', uses);
        await tx.delete(reservableProfiles).where(eq(reservableProfiles.id, id));
        await recordAudit(tx, {
          actor,
          action: 'adminReservableProfiles.delete',
          targetType: 'reservable_profile',
          targetId: id,
          targetName: before.name,
          before: profileToWire(before, null),
          after: null,
        });
      });
    },
  };
}
