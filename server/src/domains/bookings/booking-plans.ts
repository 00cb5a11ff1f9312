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
import { and, asc, eq, gt, lt, or, sql } from 'drizzle-orm';
import {
  plannerEventFromCreate,
  plannerEventFromUpdate,
  plannerEvents,
} from '../../platform/db/schema.ts';
import { ApiError } from '../../platform/http/api-error.ts';
import type { AuthContext } from '../../platform/auth/auth.ts';
import type {
  PlannerEvent,
  PlannerEventCreate,
  PlannerEventUpdate,
} from '../../../../src/generated/types.ts';
import { overlaps } from './booking-availability.ts';
import type { BookingService } from './booking-service.ts';
import { badBody, planChanges, planError, toWire } from './plan-changes.ts';
import { planningItems } from './planning-items.ts';

export type PlanningService = ReturnType<typeof createPlanningService>;

export function createPlanningService(app: FastifyInstance, bookingService: () => BookingService) {
  const { db } = app;
  const plans = planChanges(app, bookingService);
  const { itemById, enabledProfile, publish, assertItemFree, change, planFor, spanOf } = plans;

  return {
    ...planningItems(app, plans),

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
