/**
 * Planning (admins): the reservable items and their profiles, and the plans that offer a profile
 * of an item with the profile's units over a span of time.
 *
 * - Start and end are rounded up to 5 minutes; a new or moved start is not in the past, the end
 *   comes after the start, a plan lasts at least 5 minutes, and plans of one item never overlap
 *   (plans of one profile on several items may: their units add up).
 * - A new plan right before or after a plan of the same profile of the item extends it instead.
 * - Changing or deleting a plan cancels the bookings that no longer fit without it (the most
 *   important and oldest keep their units), and their bookers are told.
 * - Every change holds the item's row and its profiles' rows (booking-store.ts), so it never
 *   interleaves with a booking of those profiles or another change of the item.
 * - plan_add / plan_update / plan_delete go to the admin who made the change and to all admins.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { and, asc, eq, gt, inArray, lt, ne, or, sql } from 'drizzle-orm';
import { constants, constraints } from '../../../../src/generated/constants.ts';
import {
  bookings,
  desktops,
  plannerEventFromCreate,
  plannerEventFromUpdate,
  plannerEvents,
  plannerEventToWire,
  reservableItems,
  reservableProfiles,
  reservableToWire,
  type BookingRow,
  type DesktopRow,
  type PlannerEventRow,
  type ReservableRow,
} from '../../platform/db/schema.ts';
import { ApiError, kindForStatus } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type { Executor } from '../../platform/repository/entity-repository.ts';
import type {
  PlannerEvent,
  PlannerEventCreate,
  PlannerEventUpdate,
  Reservable,
  ReservableItemType,
  ReservableSubitem,
} from '../../../../src/generated/types.ts';
import { misfitsAfterChange, overlaps, type Span } from './booking-availability.ts';
import { bookingSpan, createSerialiser, lockProfiles, planSpan } from './booking-store.ts';
import { RUNNING_STATES } from '../quotas/index.ts';
import type { BookingService } from './booking-service.ts';

const MINUTE_MS = 60_000;
const ROUND_MS = constants.planning.roundingMinutes.value * MINUTE_MS;
const MIN_MS = constants.planning.minDurationMinutes.value * MINUTE_MS;
const RUNNING = [...RUNNING_STATES] as DesktopRow['state'][];

type PlanRule = keyof (typeof constraints)['planning'];

const planError = (rule: PlanRule, description: string, params?: Record<string, unknown>) => {
  const { code, status } = constraints.planning[rule];
  return new ApiError(kindForStatus(status), description, code, params ?? null, { status });
};

const badBody = (description: string, params?: Record<string, unknown>) =>
  new ApiError('bad_request', description, 'incorrect_new_plan_body_data', params ?? null);

const roundUp = (at: number) => Math.ceil(at / ROUND_MS) * ROUND_MS;

const parseDate = (text: string, field: 'start' | 'end'): Date => {
  const at = new Date(text);
  if (Number.isNaN(at.getTime()))
    throw planError(
      field === 'start' ? 'startNotPast' : 'endAfterStart',
      `The ${field} is not a date`,
    );
  return at;
};

const toWire = (row: PlannerEventRow): PlannerEvent => ({
  ...plannerEventToWire(row),
  event_type: 'available',
});

export type PlanningService = ReturnType<typeof createPlanningService>;

export function createPlanningService(app: FastifyInstance, bookingService: () => BookingService) {
  const { db } = app;
  const serialised = createSerialiser();

  const itemById = async (id: string, on: Executor = db): Promise<ReservableRow | undefined> =>
    (await on.select().from(reservableItems).where(eq(reservableItems.id, id)).limit(1))[0];

  const lockItem = async (tx: Executor, id: string): Promise<ReservableRow | undefined> =>
    (await tx.select().from(reservableItems).where(eq(reservableItems.id, id)).for('update'))[0];

  const enabledProfile = async (itemId: string, profileId: string, on: Executor = db) =>
    (
      await on
        .select()
        .from(reservableProfiles)
        .where(
          and(
            eq(reservableProfiles.id, profileId),
            eq(reservableProfiles.itemId, itemId),
            eq(reservableProfiles.enabled, true),
          ),
        )
        .limit(1)
    )[0];

  const publish = (
    name: 'planning.created' | 'planning.updated',
    row: PlannerEventRow,
    auth: AuthContext,
  ) => app.events.publish({ name, payload: toWire(row), ownerId: auth.userId, alsoAdmins: true });

  /** Refuses a span that overlaps another plan of the item (but `exceptId`). */
  const assertItemFree = async (tx: Executor, itemId: string, span: Span, exceptId?: string) => {
    const [other] = await tx
      .select({ id: plannerEvents.id })
      .from(plannerEvents)
      .where(
        and(
          eq(plannerEvents.itemId, itemId),
          lt(plannerEvents.startAt, new Date(span.end)),
          gt(plannerEvents.endAt, new Date(span.start)),
          exceptId ? ne(plannerEvents.id, exceptId) : undefined,
        ),
      )
      .limit(1);
    if (other)
      throw planError(
        exceptId ? 'updateSameCardNoOverlap' : 'sameCardNoOverlap',
        'Another plan of the item overlaps',
        { id: other.id },
      );
  };

  /**
   * The bookings of a profile that no longer fit its plans over `window` (those that have not
   * ended), deleted; answers them.
   */
  const dropMisfits = async (
    tx: Executor,
    profileId: string,
    window: Span,
    now: Date,
  ): Promise<BookingRow[]> => {
    const inWindow = await tx
      .select()
      .from(bookings)
      .where(
        and(
          eq(bookings.profileId, profileId),
          lt(bookings.startAt, new Date(window.end)),
          gt(bookings.endAt, new Date(Math.max(window.start, now.getTime()))),
        ),
      );
    if (inWindow.length === 0) return [];
    const hull = {
      start: Math.min(...inWindow.map((b) => b.startAt.getTime())),
      end: Math.max(...inWindow.map((b) => b.endAt.getTime())),
    };
    const around = await tx
      .select()
      .from(bookings)
      .where(
        and(
          eq(bookings.profileId, profileId),
          lt(bookings.startAt, new Date(hull.end)),
          gt(bookings.endAt, new Date(hull.start)),
        ),
      );
    const plans = await tx
      .select()
      .from(plannerEvents)
      .where(
        and(
          eq(plannerEvents.subitemId, profileId),
          lt(plannerEvents.startAt, new Date(hull.end)),
          gt(plannerEvents.endAt, new Date(hull.start)),
        ),
      );
    const changed = new Set(inWindow.map((b) => b.id));
    const misfits = misfitsAfterChange(
      plans.map(planSpan),
      inWindow.map(bookingSpan),
      around.filter((b) => !changed.has(b.id)).map(bookingSpan),
    );
    if (misfits.length === 0) return [];
    return tx
      .delete(bookings)
      .where(
        inArray(
          bookings.id,
          misfits.map((m) => m.id),
        ),
      )
      .returning();
  };

  /** Runs a plan change holding the item and its profiles; cancels the misfits afterwards. */
  const change = async <T>(
    itemId: string,
    profileIds: readonly string[],
    work: (tx: Executor) => Promise<{ result: T; windows: { profileId: string; span: Span }[] }>,
  ): Promise<T> => {
    const now = new Date();
    const { result, dropped } = await serialised([`item:${itemId}`, ...profileIds], () =>
      db.transaction(async (tx) => {
        if (!(await lockItem(tx, itemId)))
          throw new ApiError('not_found', 'Not found', 'not_found');
        await lockProfiles(tx, profileIds);
        const done = await work(tx);
        const removed: BookingRow[] = [];
        for (const w of done.windows)
          removed.push(...(await dropMisfits(tx, w.profileId, w.span, now)));
        return { result: done.result, dropped: removed };
      }),
    );
    await bookingService().cancelled(dropped, 'plan_changed');
    return result;
  };

  const planFor = async (id: string): Promise<PlannerEventRow> => {
    const [row] = await db.select().from(plannerEvents).where(eq(plannerEvents.id, id)).limit(1);
    if (!row) throw new ApiError('not_found', 'Plan not found', 'not_found');
    return row;
  };

  /**
   * The span sent, checked as sent (the end after the start, at least 5 minutes), then rounded up
   * to 5 minutes.
   */
  const spanOf = (body: { start: string; end: string }, update: boolean) => {
    const start = parseDate(body.start, 'start');
    const end = parseDate(body.end, 'end');
    if (end.getTime() <= start.getTime())
      throw planError(
        update ? 'updateEndAfterStart' : 'endAfterStart',
        'The end must be after the start',
      );
    if (end.getTime() - start.getTime() < MIN_MS)
      throw planError(
        update ? 'updateMinDuration' : 'minDuration',
        'A plan lasts at least 5 minutes',
        { min_minutes: MIN_MS / MINUTE_MS },
      );
    return { start: new Date(roundUp(start.getTime())), end: new Date(roundUp(end.getTime())) };
  };

  return {
    /** GET /admin/reservables: the kinds of reservable items. */
    types: (): ReservableItemType[] => ['gpus'],

    /** GET /admin/reservables/{itemType}: the items with what they offer now. */
    async items(type: ReservableItemType): Promise<Reservable[]> {
      const items = await db
        .select()
        .from(reservableItems)
        .where(eq(reservableItems.type, type))
        .orderBy(asc(reservableItems.name));
      if (items.length === 0) return [];
      const ids = items.map((i) => i.id);
      const now = new Date();
      const profiles = await db
        .select()
        .from(reservableProfiles)
        .where(inArray(reservableProfiles.itemId, ids));
      const plans = await db
        .select()
        .from(plannerEvents)
        .where(
          and(
            inArray(plannerEvents.itemId, ids),
            sql`${plannerEvents.startAt} <= ${now}`,
            gt(plannerEvents.endAt, now),
          ),
        );
      const profileIds = profiles.map((p) => p.id);
      const booked =
        profileIds.length === 0
          ? []
          : await db
              .select({
                profileId: bookings.profileId,
                units: sql<number>`sum(${bookings.units})::int`,
              })
              .from(bookings)
              .where(
                and(
                  inArray(bookings.profileId, profileIds),
                  sql`${bookings.startAt} <= ${now}`,
                  gt(bookings.endAt, now),
                ),
              )
              .groupBy(bookings.profileId);
      const started =
        profileIds.length === 0
          ? []
          : await db
              .select({ hardware: desktops.hardware })
              .from(desktops)
              .where(
                and(
                  inArray(desktops.state, RUNNING),
                  sql`${desktops.hardware} -> 'reservables' -> 'vgpus' ?| array[${sql.join(
                    profileIds.map((p) => sql`${p}`),
                    sql`, `,
                  )}]::text[]`,
                ),
              );
      return items.map((item) => {
        const own = profiles.filter((p) => p.itemId === item.id);
        const ownIds = new Set(own.map((p) => p.id));
        const current = plans.filter((p) => p.itemId === item.id);
        const offered = current.reduce((n, p) => n + p.units, 0);
        const taken = booked
          .filter((b) => current.some((p) => p.subitemId === b.profileId))
          .reduce((n, b) => n + Number(b.units), 0);
        return {
          ...reservableToWire(item),
          profiles_enabled: own.filter((p) => p.enabled).map((p) => p.id),
          desktops_started: started.filter((d) =>
            (d.hardware.reservables?.vgpus ?? []).some((v) => ownIds.has(v)),
          ).length,
          available_units: Math.max(0, offered - taken),
          plans: {
            current: current.length,
            active: current.length > 0,
            profile: current[0]?.subitemId ?? null,
          },
        };
      });
    },

    /** GET /admin/reservables/enabled/{itemType}/{itemId}: the item's enabled profiles. */
    async enabled(type: ReservableItemType, itemId: string): Promise<ReservableSubitem[]> {
      const item = await itemById(itemId);
      if (!item || item.type !== type)
        throw new ApiError('not_found', 'Item not found', 'not_found');
      const rows = await db
        .select()
        .from(reservableProfiles)
        .where(and(eq(reservableProfiles.itemId, itemId), eq(reservableProfiles.enabled, true)))
        .orderBy(asc(reservableProfiles.name));
      return rows.map((p) => ({
        id: p.id,
        name: p.name,
        description: p.description,
        profile: p.profile,
        units: p.units,
      }));
    },

    /** GET /admin/reservables_planner/{itemId}/{start}/{end}: the item's plans overlapping. */
    async list(itemId: string, start: string, end: string): Promise<PlannerEvent[]> {
      const from = new Date(start);
      const to = new Date(end);
      if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()))
        throw new ApiError('bad_request', 'The range is not valid', 'bad_request');
      if (!(await itemById(itemId))) throw new ApiError('not_found', 'Item not found', 'not_found');
      const rows = await db
        .select()
        .from(plannerEvents)
        .where(
          and(
            eq(plannerEvents.itemId, itemId),
            lt(plannerEvents.startAt, to),
            gt(plannerEvents.endAt, from),
          ),
        )
        .orderBy(asc(plannerEvents.startAt));
      return rows.map(toWire);
    },

    /** POST /admin/reservables_planner: answers the id of the new (or extended) plan. */
    async create(auth: AuthContext, body: PlannerEventCreate): Promise<string> {
      const item = await itemById(body.item_id);
      if (!item || item.type !== body.item_type)
        throw badBody('Unknown reservable item', { item_id: body.item_id });
      const profile = await enabledProfile(item.id, body.subitem_id);
      if (!profile) throw badBody('Unknown profile of the item', { subitem_id: body.subitem_id });
      const { start, end } = spanOf(body, false);
      if (start.getTime() < Date.now())
        throw planError('startNotPast', 'A plan can not start in the past');
      const span = { start: start.getTime(), end: end.getTime() };
      const { row, merged, gone } = await change(item.id, [profile.id], async (tx) => {
        await assertItemFree(tx, item.id, span);
        const neighbours = await tx
          .select()
          .from(plannerEvents)
          .where(
            and(
              eq(plannerEvents.itemId, item.id),
              eq(plannerEvents.subitemId, profile.id),
              or(eq(plannerEvents.endAt, start), eq(plannerEvents.startAt, end)),
            ),
          )
          .orderBy(asc(plannerEvents.startAt));
        const [first, second] = neighbours;
        if (!first) {
          const [inserted] = await tx
            .insert(plannerEvents)
            .values({
              // every stored field of the body, by the generated mapper; then what differs
              ...plannerEventFromCreate(body),
              id: randomUUID(),
              itemType: item.type,
              itemId: item.id,
              subitemId: profile.id,
              units: profile.units,
              startAt: start,
              endAt: end,
              userId: auth.userId,
            })
            .returning();
          if (!inserted) throw new Error('plan insert returned no row');
          return { result: { row: inserted, merged: false, gone: null }, windows: [] };
        }
        const removed = second
          ? ((
              await tx.delete(plannerEvents).where(eq(plannerEvents.id, second.id)).returning()
            )[0] ?? null)
          : null;
        const [extended] = await tx
          .update(plannerEvents)
          .set({
            startAt: new Date(Math.min(first.startAt.getTime(), span.start)),
            endAt: new Date(Math.max((second ?? first).endAt.getTime(), span.end)),
            version: sql`${plannerEvents.version} + 1`,
          })
          .where(eq(plannerEvents.id, first.id))
          .returning();
        if (!extended) throw new Error('plan update returned no row');
        return { result: { row: extended, merged: true, gone: removed }, windows: [] };
      });
      if (gone)
        app.events.publish({
          name: 'planning.deleted',
          payload: { id: gone.id, version: gone.version + 1 },
          ownerId: auth.userId,
          alsoAdmins: true,
        });
      publish(merged ? 'planning.updated' : 'planning.created', row, auth);
      return row.id;
    },

    /** PUT /admin/reservables_planner/{id}: new span and profile; misfit bookings are cancelled. */
    async update(auth: AuthContext, id: string, body: PlannerEventUpdate): Promise<void> {
      const current = await planFor(id);
      const profileId = body.subitem_id ?? current.subitemId;
      const profile = await enabledProfile(current.itemId, profileId);
      if (!profile) throw badBody('Unknown profile of the item', { subitem_id: profileId });
      const { start, end } = spanOf(body, true);
      if (start.getTime() !== current.startAt.getTime() && start.getTime() < Date.now())
        throw planError('updateStartNotPast', 'A plan can not start in the past');
      const span = { start: start.getTime(), end: end.getTime() };
      const before = { start: current.startAt.getTime(), end: current.endAt.getTime() };
      const row = await change(current.itemId, [current.subitemId, profile.id], async (tx) => {
        await assertItemFree(tx, current.itemId, span, current.id);
        const [updated] = await tx
          .update(plannerEvents)
          .set({
            // every stored field of the body, by the generated mapper; then what differs
            ...plannerEventFromUpdate(body),
            subitemId: profile.id,
            units: profile.units,
            startAt: start,
            endAt: end,
            version: sql`${plannerEvents.version} + 1`,
          })
          .where(eq(plannerEvents.id, current.id))
          .returning();
        if (!updated) throw new ApiError('not_found', 'Plan not found', 'not_found');
        const windows = [{ profileId: current.subitemId, span: before }];
        if (
          profile.id !== current.subitemId ||
          !overlaps(before, span) ||
          profile.units < current.units
        )
          windows.push({ profileId: profile.id, span });
        return { result: updated, windows };
      });
      publish('planning.updated', row, auth);
    },

    /** DELETE /admin/reservables_planner/{id}: the bookings that no longer fit are cancelled. */
    async remove(auth: AuthContext, id: string): Promise<void> {
      const current = await planFor(id);
      const removed = await change(current.itemId, [current.subitemId], async (tx) => {
        const [gone] = await tx
          .delete(plannerEvents)
          .where(eq(plannerEvents.id, current.id))
          .returning();
        if (!gone) throw new ApiError('not_found', 'Plan not found', 'not_found');
        return {
          result: gone,
          windows: [
            {
              profileId: gone.subitemId,
              span: { start: gone.startAt.getTime(), end: gone.endAt.getTime() },
            },
          ],
        };
      });
      app.events.publish({
        name: 'planning.deleted',
        payload: { id: removed.id, version: removed.version + 1 },
        ownerId: auth.userId,
        alsoAdmins: true,
      });
    },
  };
}
