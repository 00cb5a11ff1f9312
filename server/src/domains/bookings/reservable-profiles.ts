/**
 * The administration of reservable profiles (what a desktop names and a booking takes units of).
 * A profile keeps at least the units its bookings take at once and is not deleted while in use.
 */
import { and, count, eq, gt, ne, sql } from 'drizzle-orm';
import type {
  AdminReservableProfile,
  AdminReservableProfileCreate,
  AdminReservableProfileUpdate,
} from '../../../../src/generated/types.ts';
import {
  adminReservableProfileFromCreate,
  adminReservableProfileFromUpdate,
  adminReservableProfileReadToWire,
  bookingPriorities,
  bookings,
  deployments,
  desktops,
  plannerEvents,
  reservableProfiles,
  templates,
  type AdminReservableProfileReadRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { crudService, type CrudActor } from '../../platform/crud/crud-service.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { appendAudit } from '../directory/index.ts';
import {
  allowedFrom,
  checkLists,
  countOf,
  creating,
  exists,
  inUse,
  itemRow,
  rolesOf,
  type Directory,
} from './reservables-shared.ts';

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

/**
 * The profiles' plain CRUD (list and show with the item's name and the allowed roles as the form
 * shows them, create, update, delete) and what profiles add to it: the id is the one sent (what a
 * desktop names), names are unique within the item, the rule group exists, the allowed lists name
 * existing users and groups, the units stay at least what bookings take at once (the profile's
 * row, locked by the write, is the lock every booking change takes), and a profile in use is not
 * deleted.
 */
export function reservableProfilesCrud(db: Db, directory: Directory) {
  const service = crudService<
    'reservableProfiles',
    AdminReservableProfile,
    AdminReservableProfileCreate,
    AdminReservableProfileUpdate
  >(db, {
    resource: 'adminReservableProfiles',
    storage: 'reservableProfiles',
    label: 'Reservable profile',
    toWire: (row) => ({
      ...adminReservableProfileReadToWire(row as AdminReservableProfileReadRow),
      allowed_roles: rolesOf(row.allowed),
    }),
    fromCreate: adminReservableProfileFromCreate,
    fromUpdate: adminReservableProfileFromUpdate,
    orderBy: ['name'],
    audit: { targetType: 'reservable_profile', append: appendAudit },
    hooks: {
      async beforeCreate({ tx }, body) {
        await checkLists(directory, body.allowed);
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
        return {
          id: body.id,
          name: body.name.trim(),
          priorityId,
          allowed: allowedFrom({}, body.allowed_roles ?? [], body.allowed),
        };
      },
      async beforeUpdate({ tx, before }, body) {
        await checkLists(directory, body.allowed);
        if (body.name !== undefined)
          await checkProfileName(tx, before.itemId, body.name, before.id);
        if (body.priority_id !== undefined) await checkRuleGroup(tx, body.priority_id);
        if (body.units !== undefined && body.units < before.units) {
          const booked = await unitsBookedAtOnce(tx, before.id, new Date());
          if (body.units < booked)
            throw new ApiError(
              'precondition_required',
              `Bookings that have not ended take ${booked} units at once`,
              'units_in_use',
              { units: booked },
            );
        }
        return {
          ...(body.name === undefined ? {} : { name: body.name.trim() }),
          ...(body.allowed_roles !== undefined || body.allowed !== undefined
            ? { allowed: allowedFrom(before.allowed, body.allowed_roles, body.allowed) }
            : {}),
        };
      },
      async beforeDelete({ tx, before }) {
        const uses = await profileUses(tx, before.id, new Date());
        if (Object.keys(uses).length > 0) throw inUse('reservable profile', uses);
        return {};
      },
    },
  });
  // A create whose id another create took meanwhile answers the same 409 as one taken before.
  return {
    ...service,
    create: (actor: CrudActor, body: AdminReservableProfileCreate) =>
      creating(
        () => service.create(actor, body),
        () => exists('reservable profile', 'id', 'reservable_exists'),
      ),
  } satisfies typeof service;
}
