/**
 * The administration of reservable items, their profiles and the booking priority rules. The
 * bookings engine reads these tables on every call (no cache), so a change applies to the next
 * booking at once. Every write records its audit entry in the same transaction. An item or a
 * profile still in use is not deleted (428 `reservable_in_use`), a profile keeps at least the
 * units its bookings take at once (428 `units_in_use`), and ids and names are unique (409).
 */
import { randomUUID } from 'node:crypto';
import { and, asc, count, eq, gt, ne, sql } from 'drizzle-orm';
import type {
  AdminBookingPriority,
  AdminBookingPriorityCreate,
  AdminBookingPriorityGroup,
  AdminBookingPriorityUpdate,
  AdminReservable,
  AdminReservableCreate,
  AdminReservableProfile,
  AdminReservableProfileCreate,
  AdminReservableProfileUpdate,
  AdminReservableUpdate,
  Allowed,
  AllowedShareLists2,
  Role,
} from '../../../../src/generated/types.ts';
import {
  bookingPriorities,
  bookings,
  deployments,
  desktops,
  plannerEvents,
  reservableItems,
  reservableProfiles,
  templates,
  type BookingRuleRow,
  type ReservableProfileRow,
  type ReservableRow,
} from '../../platform/db/schema.ts';
import type { Db } from '../../platform/db/client.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { Caller } from '../../platform/auth/auth-context.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import { recordAudit } from './reservables-audit.ts';

export type Actor = Caller & { name: string };

const ALL_ROLES: readonly Role[] = ['admin', 'manager', 'advanced', 'user'];

/** The stored roles list as the form shows it: [] (everyone) lists every role, false none. */
function rolesOf(allowed: Allowed): Role[] {
  const roles = allowed.roles;
  if (roles === undefined || roles === false) return [];
  if (roles.length === 0) return [...ALL_ROLES];
  return ALL_ROLES.filter((r) => roles.includes(r));
}

/**
 * The stored allowed object from the form's roles and users/groups lists: every role listed is
 * stored as [] (everyone), none as false; categories keep what they were (false when new).
 */
function allowedFrom(
  previous: Allowed,
  roles: readonly Role[] | undefined,
  lists: AllowedShareLists2 | undefined,
): Allowed {
  const next: Allowed = {
    roles: previous.roles ?? false,
    categories: previous.categories ?? false,
    groups: previous.groups ?? false,
    users: previous.users ?? false,
  };
  if (roles !== undefined) {
    const set = new Set(roles);
    next.roles =
      set.size === 0
        ? false
        : ALL_ROLES.every((r) => set.has(r))
          ? []
          : [...ALL_ROLES].filter((r) => set.has(r));
  }
  if (lists?.groups !== undefined) next.groups = lists.groups;
  if (lists?.users !== undefined) next.users = lists.users;
  return next;
}

const notFound = (what: string, id: string) =>
  new ApiError('not_found', `${what} not found`, 'not_found', { id });

const exists = (what: string, field: string, code: string) =>
  new ApiError('conflict', `A ${what} with this ${field} already exists`, code, { field });

const inUse = (what: string, uses: Record<string, number>) =>
  new ApiError('precondition_required', `The ${what} is in use`, 'reservable_in_use', uses);

/** Whether a write failed on a unique key (two creates of one id at the same instant). */
function uniqueViolation(err: unknown): boolean {
  const codeOf = (e: unknown) =>
    e && typeof e === 'object' && 'code' in e ? (e as { code: unknown }).code : undefined;
  const cause = err && typeof err === 'object' && 'cause' in err ? err.cause : undefined;
  return codeOf(err) === '23505' || codeOf(cause) === '23505';
}

/** A create whose id another create took meanwhile answers the same 409 as when it was taken before. */
async function creating<T>(work: () => Promise<T>, conflict: () => ApiError): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (uniqueViolation(err)) throw conflict();
    throw err;
  }
}

/** Drops the keys whose value is undefined (a body's absent fields). */
function defined<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(values).filter(([, v]) => v !== undefined),
  ) as Partial<T>;
}

export interface ReservablesAdmin {
  items(): Promise<AdminReservable[]>;
  item(id: string): Promise<AdminReservable>;
  createItem(actor: Actor, body: AdminReservableCreate): Promise<string>;
  updateItem(actor: Actor, id: string, body: AdminReservableUpdate): Promise<void>;
  deleteItem(actor: Actor, id: string): Promise<void>;
  profiles(): Promise<AdminReservableProfile[]>;
  profile(id: string): Promise<AdminReservableProfile>;
  createProfile(actor: Actor, body: AdminReservableProfileCreate): Promise<string>;
  updateProfile(actor: Actor, id: string, body: AdminReservableProfileUpdate): Promise<void>;
  deleteProfile(actor: Actor, id: string): Promise<void>;
  rules(): Promise<AdminBookingPriority[]>;
  rule(id: string): Promise<AdminBookingPriority>;
  ruleGroups(): Promise<AdminBookingPriorityGroup[]>;
  createRule(actor: Actor, body: AdminBookingPriorityCreate): Promise<string>;
  updateRule(actor: Actor, id: string, body: AdminBookingPriorityUpdate): Promise<void>;
  deleteRule(actor: Actor, id: string): Promise<void>;
}

export function reservablesAdmin(db: Db): ReservablesAdmin {
  const itemToWire = (row: ReservableRow, profiles: number): AdminReservable => ({
    id: row.id,
    name: row.name,
    brand: row.brand,
    model: row.model,
    description: row.description,
    enabled: row.enabled,
    profiles,
  });

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

  const ruleToWire = (row: BookingRuleRow): AdminBookingPriority => ({
    id: row.id,
    rule_group: row.ruleId,
    name: row.name,
    description: row.description,
    priority: row.priority,
    forbid_time: row.forbidTime,
    max_time: row.maxTime,
    max_items: row.maxItems,
    max_booking_days: row.maxBookingDays,
    allowed_roles: rolesOf(row.allowed),
    allowed: row.allowed,
  });

  // What the audit keeps of a row: the wire shape, without the computed counts.
  const itemAudit = (row: ReservableRow) => ({ ...itemToWire(row, 0), profiles: undefined });

  async function itemRow(on: Executor, id: string, lock = false): Promise<ReservableRow> {
    const query = on.select().from(reservableItems).where(eq(reservableItems.id, id));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Reservable item', id);
    return row;
  }

  async function profileRow(on: Executor, id: string, lock = false): Promise<ReservableProfileRow> {
    const query = on.select().from(reservableProfiles).where(eq(reservableProfiles.id, id));
    const [row] = lock ? await query.for('update') : await query;
    if (!row) throw notFound('Reservable profile', id);
    return row;
  }

  async function ruleRow(on: Executor, id: string): Promise<BookingRuleRow> {
    const [row] = await on.select().from(bookingPriorities).where(eq(bookingPriorities.id, id));
    if (!row) throw notFound('Booking priority rule', id);
    return row;
  }

  async function countOf(query: PromiseLike<{ n: number }[]>): Promise<number> {
    const [row] = await query;
    return Number(row?.n ?? 0);
  }

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

    async rules() {
      const rows = await db
        .select()
        .from(bookingPriorities)
        .orderBy(
          asc(bookingPriorities.ruleId),
          asc(bookingPriorities.priority),
          asc(bookingPriorities.id),
        );
      return rows.map(ruleToWire);
    },

    async rule(id) {
      return ruleToWire(await ruleRow(db, id));
    },

    async ruleGroups() {
      const rows = await db
        .selectDistinct({ ruleId: bookingPriorities.ruleId })
        .from(bookingPriorities)
        .orderBy(asc(bookingPriorities.ruleId));
      const groups = ['default', ...rows.map((r) => r.ruleId).filter((g) => g !== 'default')];
      return groups.map((g) => ({ id: g, name: g }));
    },

    async createRule(actor, body) {
      return creating(
        () =>
          db.transaction(async (tx) => {
            const [row] = await tx
              .insert(bookingPriorities)
              .values({
                id: randomUUID(),
                ruleId: body.rule_group,
                name: body.name.trim(),
                description: body.description ?? null,
                priority: body.priority ?? 0,
                forbidTime: body.forbid_time ?? 0,
                maxTime: body.max_time ?? null,
                maxItems: body.max_items ?? null,
                maxBookingDays: body.max_booking_days ?? null,
                allowed: allowedFrom({}, body.allowed_roles ?? [], body.allowed),
              })
              .returning();
            if (!row) throw new ApiError('internal_server');
            await recordAudit(tx, {
              actor,
              action: 'adminBookingPriorities.create',
              targetType: 'booking_priority',
              targetId: row.id,
              targetName: row.name,
              before: null,
              after: ruleToWire(row),
            });
            return row.id;
          }),
        () => exists('booking priority rule', 'id', 'conflict'),
      );
    },

    async updateRule(actor, id, body) {
      await db.transaction(async (tx) => {
        const before = await ruleRow(tx, id);
        const allowed =
          body.allowed_roles !== undefined || body.allowed !== undefined
            ? allowedFrom(before.allowed, body.allowed_roles, body.allowed)
            : undefined;
        const [after] = await tx
          .update(bookingPriorities)
          .set(
            defined({
              ruleId: body.rule_group,
              name: body.name?.trim(),
              description: body.description,
              priority: body.priority,
              forbidTime: body.forbid_time,
              maxTime: body.max_time,
              maxItems: body.max_items,
              maxBookingDays: body.max_booking_days,
              allowed,
            }),
          )
          .where(eq(bookingPriorities.id, id))
          .returning();
        if (!after) throw notFound('Booking priority rule', id);
        await recordAudit(tx, {
          actor,
          action: 'adminBookingPriorities.update',
          targetType: 'booking_priority',
          targetId: id,
          targetName: after.name,
          before: ruleToWire(before),
          after: ruleToWire(after),
        });
      });
    },

    async deleteRule(actor, id) {
      await db.transaction(async (tx) => {
        const before = await ruleRow(tx, id);
        await tx.delete(bookingPriorities).where(eq(bookingPriorities.id, id));
        await recordAudit(tx, {
          actor,
          action: 'adminBookingPriorities.delete',
          targetType: 'booking_priority',
          targetId: id,
          targetName: before.name,
          before: ruleToWire(before),
          after: null,
        });
      });
    },
  };
}
